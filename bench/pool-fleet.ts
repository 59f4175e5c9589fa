// Pools at scale (figures and checks, not asserts): `npm run bench:pool-fleet`. Real parts: the
// dev server, pool workers as hosts on this machine, SeaweedFS's S3 as the object store
// (scripts/build-seaweedfs.sh), a scripted model with a 100 ms delay.
//  - loss: 40 pooled conversations of 8 steps on two hosts; once 40 % of the steps are done one
//    host is SIGKILLed and its folder wiped. Checked and printed: all finish; each workspace holds
//    exactly the files of the steps whose results came back (a step writes `s<N>.txt` and appends
//    N to `runs.log`); every call in flight on the lost host at the kill is an "outcome unknown"
//    observation and no other is; no step ran twice (runs.log). Also the time from the loss to
//    host_changed and to the next step's result of each conversation whose call was lost.
//  - throughput: 50 × 10 (each step changes a file), on one host without a pool against one pool
//    host shipping to S3, alternated in one run (BENCH_ROUNDS pairs, default 4; the median is the figure) so both sides
//    share the machine's conditions.
// BENCH_FLEET_ONLY=loss,throughput picks parts; BENCH_FLEET_DEBUG=1 prints a moved conversation's history.
import proto from '@temporalio/proto';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, Conversation, LLM } from '../src/client/client.js';
import { objectStore } from '../src/storage/object-store.js';
import type { RecordedRequest, ScriptedReply } from '../src/testing/scripted-model.js';
import { findManifest, materialiseWorkspace } from '../src/pool/shipping.js';
import { startHarness, type WorkerProcess } from '../test/support/harness.js';
import { startSeaweedS3 } from '../test/support/seaweedfs.js';
import { cpuMs } from './cpu.js';
import { endSide } from './sides.js';
import { pct } from './step.js';
import { storeSettings } from '../src/settings/store.js';
import { encryptionCodec } from '../src/security/codec.js';

const codecOf = (env: Record<string, string | undefined>) => encryptionCodec(storeSettings(env).codec);

const ONLY = new Set((process.env.BENCH_FLEET_ONLY ?? 'loss,throughput').split(','));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const LOSS_CONVERSATIONS = 40;
const LOSS_STEPS = 8;
const UNKNOWN = /outcome unknown/;

const toolResults = (req: RecordedRequest) => req.body.messages.filter((m) => m.role === 'tool').length;
/** Step N (the tool results so far) waits a little, then writes its file and its line. */
const stepCommand = (n: number) => `sleep 0.3; echo ${n} > s${n}.txt; echo ${n} >> runs.log`;
const script =
  (steps: number) =>
  (req: RecordedRequest): ScriptedReply => {
    const n = toolResults(req);
    return n >= steps
      ? { content: 'Done.', delayMs: 100 }
      : { toolCalls: [{ name: 'terminal', arguments: { command: stepCommand(n) } }], delayMs: 100 };
  };

const s3 = await startSeaweedS3('bench-fleet');
const root = await mkdtemp(path.join(os.tmpdir(), 'faheem-bench-fleet-'));
const storeEnv = { ...s3.env, FAHEEM_OBJECT_STORE: `s3://${s3.bucket}/fleet` };
const h = await startHarness({
  name: 'bench-pool-fleet',
  script: script(LOSS_STEPS),
  record: false,
  env: { ...storeEnv, FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '600' },
});
const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

interface Host {
  id: string;
  dir: string;
  worker: WorkerProcess;
}
// For profiling: BENCH_WORKER_NODE_OPTIONS="--require <script that starts the profiler>".
const profiling: Record<string, string> = process.env.BENCH_WORKER_NODE_OPTIONS
  ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS }
  : {};

async function startHost(id: string, pool: string): Promise<Host> {
  const dir = path.join(root, id);
  await mkdir(path.join(dir, 'home'), { recursive: true });
  const worker = await h.startWorker(
    { FAHEEM_HOST_ID: id, FAHEEM_WORKSPACES_DIR: path.join(dir, 'ws'), FAHEEM_HOME: path.join(dir, 'home'), ...profiling },
    ['--pool', pool],
  );
  return { id, dir, worker };
}

async function loss(): Promise<void> {
  h.model.setScript(script(LOSS_STEPS));
  const hosts = [await startHost('fleet-a', 'fleet'), await startHost('fleet-b', 'fleet')];
  const conversations = await Promise.all(
    Array.from({ length: LOSS_CONVERSATIONS }, () =>
      Conversation.create(h.client, { agent: agent(), pool: 'fleet', firstMessage: 'go', run: true }),
    ),
  );
  // 40 % of the steps done (the model has seen that many results).
  const doneSteps = () => h.model.requests.reduce((n, r) => n + (toolResults(r) > 0 ? 1 : 0), 0);
  while (doneSteps() < LOSS_CONVERSATIONS * LOSS_STEPS * 0.4) await new Promise((r) => setTimeout(r, 100));
  const holders = new Map<string, string | null | undefined>();
  await Promise.all(conversations.map(async (c) => holders.set(c.id, (await c.state()).host)));
  const lost = hosts[0]!;
  const lostAt = Date.now();
  await lost.worker.kill('SIGKILL');
  // In flight on the lost host: its conversations with a started tool call, read at once (the
  // server keeps a dead worker's call started until its heartbeat times out).
  const inFlight = new Set<string>();
  await Promise.all(
    conversations.map(async (c) => {
      if (holders.get(c.id) !== lost.id) return;
      const d = await h.client.workflow.getHandle(c.id).describe();
      const started = (d.raw.pendingActivities ?? []).filter((a) => a.state === 2 /* STARTED */ && a.activityType?.name === 'runTool');
      if (started.length) inFlight.add(c.id);
    }),
  );
  await rm(lost.dir, { recursive: true, force: true });

  const finals = await Promise.all(conversations.map((c) => c.waitUntil((s) => s.status !== 'running', 500, 600_000)));
  const store = objectStore(storeSettings(storeEnv))!;
  const problems: string[] = [];
  const toMove: number[] = [];
  const toStep: number[] = [];
  let unknownTotal = 0;
  for (const [i, c] of conversations.entries()) {
    const final = finals[i]!;
    if (final.status !== 'finished') problems.push(`${c.id}: ${final.status} ${final.lastError ?? ''}`);
    const events = await c.events();
    const observations = events.filter((e) => e.kind === 'observation');
    const unknown = observations.flatMap((o, n) => (o.kind === 'observation' && UNKNOWN.test(o.content) ? [n] : []));
    unknownTotal += unknown.length;
    if (unknown.length !== (inFlight.has(c.id) ? 1 : 0))
      problems.push(`${c.id}: ${unknown.length} unknown outcomes, ${inFlight.has(c.id) ? 1 : 0} calls in flight on the lost host`);
    // What the finished steps made: step N's file for each N whose result came back.
    const made = observations.flatMap((o, n) => (unknown.includes(n) ? [] : [n]));
    const dir = path.join(root, 'pulled', String(i));
    const manifest = await findManifest(store, c.id, undefined, codecOf(storeEnv));
    if (!manifest) {
      problems.push(`${c.id}: nothing shipped`);
      continue;
    }
    await materialiseWorkspace(store, c.id, manifest, dir, storeEnv, codecOf(storeEnv));
    const files = (await readdir(dir)).filter((f) => f !== 'runs.log').sort();
    const want = made.map((n) => `s${n}.txt`).sort();
    if (JSON.stringify(files) !== JSON.stringify(want)) problems.push(`${c.id}: files ${files.join(' ')}, steps made ${want.join(' ')}`);
    const runs = (await readFile(path.join(dir, 'runs.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
    if (new Set(runs).size !== runs.length) problems.push(`${c.id}: a step ran twice: runs.log ${runs.join(',')}`);
    if (JSON.stringify(runs) !== JSON.stringify(made)) problems.push(`${c.id}: runs.log ${runs.join(',')}, steps made ${made.join(',')}`);
    if (inFlight.has(c.id)) {
      const moved = events.find((e) => e.kind === 'host_changed' && e.from === lost.id);
      const next = observations[unknown[0]! + 1];
      if (moved) toMove.push(Date.parse(moved.timestamp) - lostAt);
      if (next) toStep.push(Date.parse(next.timestamp) - lostAt);
    }
  }
  const onLost = [...holders.values()].filter((x) => x === lost.id).length;
  console.log(
    `loss: ${LOSS_CONVERSATIONS} pooled conversations × ${LOSS_STEPS} steps on 2 hosts, host ${lost.id} (holding ${onLost}) SIGKILLed and wiped after 40 % of the steps`,
  );
  console.log(`| check | result |\n|---|---|`);
  console.log(`| finished | ${finals.filter((s) => s.status === 'finished').length} of ${LOSS_CONVERSATIONS} |`);
  console.log(`| calls in flight on the lost host / "outcome unknown" observations | ${inFlight.size} / ${unknownTotal} |`);
  console.log(`| problems (workspace ≠ finished steps, a step run twice, an unknown outcome without a lost call) | ${problems.length} |`);
  if (toMove.length) {
    console.log(
      `| loss → host_changed, p50 / max (the ${toMove.length} conversations whose call was lost) | ${pct(toMove, 50)} / ${Math.max(...toMove)} ms |`,
    );
    console.log(`| loss → the next step's result, p50 / max | ${pct(toStep, 50)} / ${Math.max(...toStep)} ms |`);
  }
  for (const p of problems) console.log(`  problem: ${p}`);
  // BENCH_FLEET_DEBUG=1: one moved conversation's history from just before the loss, ms from it.
  if (process.env.BENCH_FLEET_DEBUG && inFlight.size) {
    const history = await h.client.workflow.getHandle([...inFlight][0]!).fetchHistory();
    for (const e of history.events ?? []) {
      const ms = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6) - lostAt;
      const what =
        e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.activityTaskTimedOutEventAttributes?.failure?.message ?? '';
      if (ms > -3000) console.log(`  ${ms} ms ${proto.temporal.api.enums.v1.EventType[e.eventType ?? 0]} ${what}`);
    }
  }
  await hosts[1]!.worker.kill();
}

async function throughput(): Promise<void> {
  const n = 50;
  const steps = 10;
  type Side = { stepsPerSecond: number; workerCpu: number; serverCpu: number; s3Cpu: number; notFinished: number };
  const side = async (pooled: boolean): Promise<Side> => {
    h.model.setScript(script(steps));
    const host = pooled ? await startHost(`tp-${Date.now()}`, 'tp') : { worker: await h.startWorker(profiling) };
    const c0 = cpuMs(host.worker.process.pid);
    const server0 = cpuMs(h.server.process?.pid);
    const s30 = cpuMs(s3.pid);
    const t0 = performance.now();
    const conversations = await Promise.all(
      Array.from({ length: n }, async () =>
        Conversation.create(h.client, {
          agent: agent(),
          ...(pooled ? { pool: 'tp' } : { workspace: await h.workspace() }),
          firstMessage: 'go',
          run: true,
        }),
      ),
    );
    const finals = await Promise.all(conversations.map((c) => c.waitUntilStopped({ timeoutMs: 600_000 })));
    const seconds = (performance.now() - t0) / 1000;
    const workerCpu = (cpuMs(host.worker.process.pid) - c0) / (n * steps);
    const serverCpu = (cpuMs(h.server.process?.pid) - server0) / (n * steps);
    const s3Cpu = (cpuMs(s3.pid) - s30) / (n * steps);
    await endSide(
      h.client,
      conversations.map((c) => c.id),
    );
    await host.worker.kill();
    const notFinished = finals.filter((s) => s.status !== 'finished').length;
    return { stepsPerSecond: (n * steps) / seconds, workerCpu, serverCpu, s3Cpu, notFinished };
  };
  console.log(
    `throughput: ${n} × ${steps}, 100 ms model, each step writes a file; one worker a side, alternated (load ${os.loadavg()[0]!.toFixed(1)} at the start)`,
  );
  console.log(
    '| round | one host: steps/s, CPU ms a step (worker, server, S3) | pool + S3: steps/s, CPU ms a step (worker, server, S3) | pool / one host |\n|---|---|---|---|',
  );
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [false, true] : [true, false];
    const figures = new Map<boolean, Side>();
    for (const pooled of order) figures.set(pooled, await side(pooled));
    const one = figures.get(false)!;
    const pool = figures.get(true)!;
    const cell = (f: typeof one) =>
      `${f.stepsPerSecond.toFixed(1)}, ${f.workerCpu.toFixed(1)} / ${f.serverCpu.toFixed(1)} / ${f.s3Cpu.toFixed(1)}${f.notFinished ? ` (${f.notFinished} not finished)` : ''}`;
    ratios.push(pool.stepsPerSecond / one.stepsPerSecond);
    cpuRatios.push(pool.workerCpu / one.workerCpu);
    console.log(`| ${round + 1} | ${cell(one)} | ${cell(pool)} | ${ratios.at(-1)!.toFixed(2)} |`);
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  console.log(
    `median of ${ROUNDS} rounds: pool / one host steps/s ${median(ratios).toFixed(2)}, worker CPU a step ${median(cpuRatios).toFixed(2)}× (load ${os.loadavg()[0]!.toFixed(1)} at the end)`,
  );
}

try {
  if (ONLY.has('loss')) await loss();
  if (ONLY.has('throughput')) await throughput();
} finally {
  await h.close();
  await s3.stop();
  await rm(root, { recursive: true, force: true });
}
