// Temporal's own floor for a step: a workflow doing nothing but two no-op activities per step, one on
// the workflow's queue (as the model call) and one on another queue (as a tool call), with the same
// server. Our price of durability can only approach this.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import * as activities from './activities.js';

/** Runs `fn` with the floor's workers polling on this server (after one warm-up workflow), then stops them. */
export async function withFloor<T>(address: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await NativeConnection.connect({ address });
  const main = await Worker.create({
    connection,
    taskQueue: 'floor',
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities: { model: activities.model, slowModel: activities.slowModel },
  });
  const tools = await Worker.create({ connection, taskQueue: 'floor-tools', activities: { tool: activities.tool } });
  const running = Promise.all([main.run(), tools.run()]);
  const client = new Client({ connection: await Connection.connect({ address }) });
  try {
    await client.workflow.execute('floor', { taskQueue: 'floor', workflowId: `floor-warmup-${Date.now()}`, args: [3] });
    return await fn(client);
  } finally {
    main.shutdown();
    tools.shutdown();
    await running;
    await client.connection.close();
    await connection.close();
  }
}

/** Temporal's floor for one workflow: milliseconds a step. */
export async function floorPerStep(address: string, steps: number): Promise<number> {
  return withFloor(address, async (client) => {
    const t0 = performance.now();
    await client.workflow.execute('floor', { taskQueue: 'floor', workflowId: `floor-${Date.now()}`, args: [steps] });
    return (performance.now() - t0) / steps;
  });
}

/** Temporal's floor at a concurrency: `n` floor workflows of `steps` steps at once, in steps per second. */
export async function floorThroughput(address: string, n: number, steps: number): Promise<number> {
  return withFloor(address, async (client) => {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        client.workflow.execute('floor', { taskQueue: 'floor', workflowId: `floor-${Date.now()}-${i}`, args: [steps] }),
      ),
    );
    return (n * steps) / ((performance.now() - t0) / 1000);
  });
}

/**
 * Temporal's floor for a pause: `rounds` times, a floor workflow's slow model call (`modelMs`) is
 * paused `pauseAtMs` into it by an update that cancels it; milliseconds from the update's call to
 * its return, each round.
 */
export async function floorPauses(
  address: string,
  rounds: number,
  modelMs: number,
  pauseAtMs: number,
): Promise<{ ms: number[]; aborted: number }> {
  return withFloor(address, async (client) => {
    // Listened for before the call can start (the workflow's start, a resume).
    const nextCall = () => new Promise((resolve) => activities.slowCallStarted.addEventListener('started', resolve, { once: true }));
    let started = nextCall();
    const handle = await client.workflow.start('floorPausable', {
      taskQueue: 'floor',
      workflowId: `floor-pause-${Date.now()}`,
      args: [rounds + 1, modelMs],
    });
    const times: number[] = [];
    const cancelledBefore = activities.slowCalls.cancelled;
    for (let i = 0; i < rounds; i++) {
      await started;
      // Positions the pause mid-call, as the other sides' pauses are (not a synchronisation).
      await new Promise((resolve) => setTimeout(resolve, pauseAtMs));
      const t0 = performance.now();
      await handle.executeUpdate('floorPause');
      times.push(performance.now() - t0);
      started = nextCall();
      await handle.signal('floorResume');
    }
    await handle.terminate('the bench is done');
    return { ms: times, aborted: activities.slowCalls.cancelled - cancelledBefore };
  });
}
