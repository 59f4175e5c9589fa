// The alternative to the stream workflow we measured: activity heartbeat details read with
// describe(). No history at all, but a follower must poll, sees only the latest details (a step's
// whole text each time), and the worker throttles heartbeats (ours: at most one per 100 ms).
//   npx tsx bench/transports/heartbeat.ts   (against TEMPORAL_ADDRESS, or an embedded dev server)
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { startDevServer } from '../../src/server/dev-server.js';
import { freePort } from '../../test/support/harness.js';
import { pct } from '../step.js';
import * as activities from './activities.js';

/** Latency from a heartbeat's sending to a describe() poller seeing it, and how many it never saw. */
export async function heartbeatTransport(address: string, options: { n?: number; everyMs?: number; pollMs?: number } = {}) {
  const { n = 100, everyMs = 50, pollMs = 50 } = options;
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue: 'transport-heartbeat',
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities,
    // As our worker's model-call queue.
    maxHeartbeatThrottleInterval: '100 milliseconds',
    defaultHeartbeatThrottleInterval: '100 milliseconds',
  });
  const running = worker.run();
  const client = new Client({ connection: await Connection.connect({ address }) });
  const handle = await client.workflow.start('heartbeatHost', {
    taskQueue: 'transport-heartbeat',
    workflowId: `hb-${Date.now()}`,
    args: [n, everyMs],
  });
  const latencies: number[] = [];
  const seen = new Set<number>();
  let polls = 0;
  const converter = client.options.loadedDataConverter.payloadConverter;
  for (;;) {
    const d = await handle.describe();
    polls++;
    if (d.status.name !== 'RUNNING') break;
    const details = d.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0];
    if (details) {
      const v = converter.fromPayload<{ seq: number; sentAt: number }>(details);
      if (!seen.has(v.seq)) {
        seen.add(v.seq);
        latencies.push(Date.now() - v.sentAt);
      }
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  const history = await handle.fetchHistory();
  worker.shutdown();
  await running;
  return {
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    seenShare: seen.size / n,
    pollsPerSecond: polls / ((n * everyMs) / 1000),
    historyEvents: history.events?.length ?? 0,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let address = process.env.TEMPORAL_ADDRESS;
  const server = address
    ? undefined
    : await startDevServer({ temporalCli: process.env.TEMPORAL_CLI, port: await freePort(), headless: true });
  address ??= server!.address;
  const r = await heartbeatTransport(address);
  console.log(
    `heartbeat details + describe(): latency p50 ${r.p50} ms, p99 ${r.p99} ms; updates seen ${(r.seenShare * 100).toFixed(0)} %; ` +
      `${r.pollsPerSecond.toFixed(1)} describe calls/s per follower; host history ${r.historyEvents} events`,
  );
  await server?.stop();
}
