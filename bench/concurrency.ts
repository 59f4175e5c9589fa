// Many conversations at once (figures, not asserts): `npm run bench:concurrency [N…]`. N conversations
// of K steps each (a terminal command a step) with a 100 ms model, on one worker, against Temporal's
// floor workflow at the same concurrency on the same server, each side after one unmeasured warm-up
// workflow of 3 steps. The ratio is the figure (issue 9). CPU per step is given for the server, the
// worker and this process (clients, the scripted model, and the floor's workers when the floor runs).
import { Conversation } from '../src/client/client.js';
import { startHarness, type Harness } from '../test/support/harness.js';
import { endSide } from './sides.js';
import { cpuMs, selfCpuMs } from './cpu.js';
import { floorThroughput } from './floor/floor.js';
import { benchAgent, stepScript, benchOptions } from './step.js';

export interface ConcurrencyFigures {
  conversations: number;
  steps: number;
  oursStepsPerSecond: number;
  floorStepsPerSecond: number;
  seconds: number;
  notFinished: number;
  /** Model requests made beyond one a step (and the final answer): calls made again after a heartbeat timeout. */
  repeatedModelCalls: number;
  /** ms of CPU a step: server, worker, this process (ours; then the floor's, whose workers run here). */
  oursCpu: { server: number; worker: number; client: number };
  floorCpu: { server: number; worker: number; client: number };
}

export async function concurrency(h: Harness, workerPid: number | undefined, n: number, steps = 10): Promise<ConcurrencyFigures> {
  // Warmed as the floor is (withFloor runs one workflow of 3 steps before it measures): one
  // conversation of 3 steps first, so that neither side's figure carries a cold start.
  await warmUp(h, 3);
  const slow = stepScript(steps);
  h.model.setScript(async (req) => ({ ...(await slow(req)), delayMs: 100 }));
  const cpu = () => ({ server: cpuMs(h.server.process?.pid), worker: cpuMs(workerPid), client: selfCpuMs() });
  const perStep = (a: ReturnType<typeof cpu>, b: ReturnType<typeof cpu>) => ({
    server: (b.server - a.server) / (n * steps),
    worker: (b.worker - a.worker) / (n * steps),
    client: (b.client - a.client) / (n * steps),
  });
  h.model.requests.length = 0;
  const c0 = cpu();
  const t0 = performance.now();
  const conversations = await Promise.all(
    Array.from({ length: n }, async () =>
      Conversation.create(h.client, {
        ...benchOptions(),
        agent: benchAgent(),
        workspace: await h.workspace(),
        firstMessage: 'go',
        run: true,
      }),
    ),
  );
  const finals = await Promise.all(conversations.map((c) => c.waitUntilStopped({ timeoutMs: 600_000 })));
  const seconds = (performance.now() - t0) / 1000;
  const c1 = cpu();
  const repeatedModelCalls = h.model.requests.length - n * (steps + 1);
  await endSide(
    h.client,
    conversations.map((c) => c.id),
  );
  h.model.requests.length = 0;
  const floor = await floorThroughput(h.server.address, n, steps);
  const c2 = cpu();
  return {
    conversations: n,
    steps,
    oursStepsPerSecond: (n * steps) / seconds,
    floorStepsPerSecond: floor,
    seconds,
    notFinished: finals.filter((s) => s.status !== 'finished').length,
    repeatedModelCalls,
    oursCpu: perStep(c0, c1),
    floorCpu: perStep(c1, c2),
  };
}

/** One conversation of `steps` steps with the bench's 100 ms model, run to its end and ended, unmeasured. */
async function warmUp(h: Harness, steps: number): Promise<void> {
  const script = stepScript(steps);
  h.model.setScript(async (req) => ({ ...(await script(req)), delayMs: 100 }));
  const conversation = await Conversation.create(h.client, {
    ...benchOptions(),
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    run: true,
  });
  await conversation.waitUntilStopped({ timeoutMs: 600_000 });
  await endSide(h.client, [conversation.id]);
}

export function describeConcurrency(f: ConcurrencyFigures): string {
  const cpu = (c: ConcurrencyFigures['oursCpu']) =>
    `server ${c.server.toFixed(1)}, worker ${c.worker.toFixed(1)}, client ${c.client.toFixed(1)}`;
  return (
    `${f.conversations} conversations × ${f.steps} steps, 100 ms model: ${f.oursStepsPerSecond.toFixed(1)} steps/s (${f.seconds.toFixed(1)} s` +
    `${f.notFinished ? `, ${f.notFinished} not finished` : ''}${f.repeatedModelCalls ? `, ${f.repeatedModelCalls} model calls made again` : ''}); Temporal's floor at ${f.conversations} at once: ${f.floorStepsPerSecond.toFixed(1)} steps/s; ` +
    `ratio ${((f.oursStepsPerSecond / f.floorStepsPerSecond) * 100).toFixed(0)}%\n` +
    `  ms of CPU a step — ours: ${cpu(f.oursCpu)}; the floor (its workers run in the client): ${cpu(f.floorCpu)}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  const h = await startHarness({ name: 'bench-concurrency', script: () => ({ content: 'ok' }), record: false });
  try {
    // For profiling: BENCH_WORKER_NODE_OPTIONS="--require <script that starts the profiler>", and
    // TEMPORAL_DEBUG=1 to run the workflows on the worker's main thread, where that profiler sees them.
    const worker = await h.startWorker({
      ...(process.env.BENCH_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : {}),
      ...(process.env.TEMPORAL_DEBUG ? { TEMPORAL_DEBUG: process.env.TEMPORAL_DEBUG } : {}),
    });
    for (const n of sizes.length ? sizes : [10, 50, 200])
      console.log(describeConcurrency(await concurrency(h, worker.process.pid, n, Number(process.env.BENCH_STEPS ?? 10))));
    await worker.kill('SIGTERM');
  } finally {
    await h.close();
  }
}
