// Temporal's own floor for a step: a workflow doing nothing but two no-op activities per step, one on
// the workflow's queue (as the model call) and one on another queue (as a tool call), with the same
// server. Our price of durability can only approach this.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import * as activities from './activities.js';

export async function floorPerStep(address: string, steps: number): Promise<number> {
  const connection = await NativeConnection.connect({ address });
  const main = await Worker.create({
    connection,
    taskQueue: 'floor',
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities: { model: activities.model },
  });
  const tools = await Worker.create({ connection, taskQueue: 'floor-tools', activities: { tool: activities.tool } });
  const running = Promise.all([main.run(), tools.run()]);
  const client = new Client({ connection: await Connection.connect({ address }) });
  await client.workflow.execute('floor', { taskQueue: 'floor', workflowId: `floor-warmup-${Date.now()}`, args: [3] });
  const t0 = performance.now();
  await client.workflow.execute('floor', { taskQueue: 'floor', workflowId: `floor-${Date.now()}`, args: [steps] });
  const perStep = (performance.now() - t0) / steps;
  main.shutdown();
  tools.shutdown();
  await running;
  await client.connection.close();
  await connection.close();
  return perStep;
}

/** Temporal's floor at a concurrency: `n` floor workflows of `steps` steps at once, in steps per second. */
export async function floorThroughput(address: string, n: number, steps: number): Promise<number> {
  const connection = await NativeConnection.connect({ address });
  const main = await Worker.create({
    connection,
    taskQueue: 'floor',
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities: { model: activities.model },
  });
  const tools = await Worker.create({ connection, taskQueue: 'floor-tools', activities: { tool: activities.tool } });
  const running = Promise.all([main.run(), tools.run()]);
  const client = new Client({ connection: await Connection.connect({ address }) });
  await client.workflow.execute('floor', { taskQueue: 'floor', workflowId: `floor-warmup-${Date.now()}`, args: [3] });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, (_, i) => client.workflow.execute('floor', { taskQueue: 'floor', workflowId: `floor-${Date.now()}-${i}`, args: [steps] })),
  );
  const perSecond = (n * steps) / ((performance.now() - t0) / 1000);
  main.shutdown();
  tools.shutdown();
  await running;
  await client.connection.close();
  await connection.close();
  return perSecond;
}
