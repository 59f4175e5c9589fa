// Deploy and observability figures (not asserts): `npm run bench:deploy`. The cost of tracing per
// step (a worker exporting OTLP traces to a local receiver, against the same worker without an
// endpoint), and how long `faheem deploy drain` takes to move N idle conversations from version A to B.
import { createServer } from 'node:http';
import { Conversation } from '../src/client/client.js';
import { drainVersion, setCurrentVersion } from '../src/deploy/deployments.js';
import { freePort, startHarness, waitFor, type Harness, type WorkerProcess } from '../test/support/harness.js';
import { benchAgent, benchOptions, durableStepMs } from './step.js';

const STEPS = Number(process.env.BENCH_DEPLOY_STEPS) || 20;
const ROUNDS = Number(process.env.BENCH_DEPLOY_ROUNDS) || 3;
const DRAIN_N = (process.env.BENCH_DRAIN_N ?? '10,40').split(',').map(Number);

async function tracingCost(h: Harness): Promise<void> {
  let spansBytes = 0;
  const receiver = createServer((req, res) => {
    req.on('data', (d: Buffer) => (spansBytes += d.length));
    req.on('end', () => res.writeHead(200).end());
  });
  const port = await freePort();
  await new Promise<void>((r) => receiver.listen(port, '127.0.0.1', r));
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const traced of [false, true]) {
      const w = await h.startWorker(traced ? { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` } : {});
      (traced ? on : off).push(await durableStepMs(h, STEPS));
      await w.kill();
    }
  }
  receiver.close();
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`tracing off: ${off.map((x) => x.toFixed(1)).join(', ')} ms a step (mean ${mean(off).toFixed(1)})`);
  console.log(
    `tracing on:  ${on.map((x) => x.toFixed(1)).join(', ')} ms a step (mean ${mean(on).toFixed(1)}), ${(spansBytes / 1024).toFixed(0)} KiB of OTLP`,
  );
  console.log(`on / off: ${(mean(on) / mean(off)).toFixed(2)}×`);
}

async function setCurrent(h: Harness, buildId: string): Promise<void> {
  await waitFor(`set-current ${buildId}`, () => setCurrentVersion(h.client, 'bench', buildId).then(() => true), 60_000, 250);
}

async function drainTime(h: Harness, n: number, round: number): Promise<void> {
  const [a, b] = [`a${round}`, `b${round}`];
  const workerA: WorkerProcess = await h.startWorker({ FAHEEM_DEPLOYMENT: 'bench', FAHEEM_BUILD_ID: a });
  await setCurrent(h, a);
  h.model.setScript(() => ({ content: 'done' }));
  const conversations = await Promise.all(
    Array.from({ length: n }, async () =>
      Conversation.create(h.client, {
        ...benchOptions(),
        agent: benchAgent(),
        workspace: await h.workspace(),
        firstMessage: 'hi',
        run: true,
      }),
    ),
  );
  await Promise.all(conversations.map((c) => c.waitUntil((s) => s.status === 'finished', 200, 120_000)));
  const workerB = await h.startWorker({ FAHEEM_DEPLOYMENT: 'bench', FAHEEM_BUILD_ID: b });
  await setCurrent(h, b);
  // Visibility must show the n on A before the drain can find them.
  await waitFor(
    'visibility',
    async () =>
      (
        await h.client.workflow.count(
          `WorkflowType = 'conversation' AND ExecutionStatus = 'Running' AND TemporalWorkerDeploymentVersion = 'bench:${a}'`,
        )
      ).count === n,
    60_000,
    200,
  );
  const t0 = performance.now();
  const result = await drainVersion(h.client, 'bench', a, { waitMs: 300_000 });
  const ms = performance.now() - t0;
  console.log(`drain of ${n} idle conversations: ${(ms / 1000).toFixed(1)} s (${(ms / n).toFixed(0)} ms each), ${result.remaining} left`);
  await workerA.kill();
  await workerB.kill();
}

const h = await startHarness({ name: 'bench-deploy', script: () => ({ content: 'done' }), record: false });
try {
  await tracingCost(h);
  for (const [i, n] of DRAIN_N.entries()) await drainTime(h, n, i);
} finally {
  await h.close();
}
