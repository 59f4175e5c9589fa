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

/** Temporal's floor for a pause, one round at a time (so it can take turns with another side). */
export interface FloorPauser {
  /** Resumes the floor workflow, pauses it `pauseAtMs` into its next call: the update's ms, and whether the call was aborted. */
  pauseOnce(): Promise<{ ms: number; aborted: boolean }>;
  close(): Promise<void>;
}

/**
 * A floor workflow of slow model calls (`modelMs`), started paused on `client` (inside
 * {@link withFloor}); each `pauseOnce` resumes it and pauses it by an update that cancels the call.
 */
export async function floorPauser(client: Client, modelMs: number, pauseAtMs: number): Promise<FloorPauser> {
  const handle = await client.workflow.start('floorPausable', {
    taskQueue: 'floor',
    workflowId: `floor-pause-${Date.now()}`,
    args: [1_000_000, modelMs, true],
  });
  const next = (what: 'started' | 'cancelled') =>
    new Promise((resolve) => activities.slowCallStarted.addEventListener(what, resolve, { once: true }));
  return {
    async pauseOnce() {
      // Listened for before the call can start.
      const started = next('started');
      await handle.signal('floorResume');
      await started;
      // Positions the pause mid-call, as the other sides' pauses are (not a synchronisation).
      await new Promise((resolve) => setTimeout(resolve, pauseAtMs));
      const cancelled = next('cancelled');
      const t0 = performance.now();
      await handle.executeUpdate('floorPause');
      const ms = performance.now() - t0;
      // The call learns of its cancellation after the update returns (a worker command, or its
      // next heartbeat): counted before the next round, or not at all after 10 s.
      const aborted = await Promise.race([
        cancelled.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000).unref()),
      ]);
      return { ms, aborted };
    },
    async close() {
      await handle.terminate('the bench is done');
    },
  };
}
