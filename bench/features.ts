// What checkpoints and live streaming cost (figures, not asserts): `npm run bench:features`. One run
// on the embedded dev server (issue 24), every figure beside its yardstick from the same run:
//  - onoff: 50 conversations × 10 steps (a terminal command a step, 100 ms model) on one worker,
//    with live lines on/off (FAHEEM_LIVE on the worker) × checkpoints on/off (the conversation
//    option), each against Temporal's floor at the same concurrency, with server and worker CPU a step;
//  - step: one conversation of 200 steps, no model delay, with the defaults, against the floor;
//  - checkpoint: the worker CPU of a checkpoint of an unchanged 10,000-file workspace (watcher on,
//    the default, and off: git's own processes counted);
//  - firstwords: `faheem start …` then at once `faheem events ID --follow --json` (two CLI
//    processes): the model's first token → the CLI's first live line, three times.
// BENCH_FEATURES_ONLY=onoff,step,checkpoint,firstwords picks parts; BENCH_N (50) and BENCH_STEPS (10) size onoff.
import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CheckpointStore } from '../src/time-travel/shadow-repo.js';
import { ROOT, startHarness, type Harness } from '../test/support/harness.js';
import { concurrency, type ConcurrencyFigures } from './concurrency.js';
import { cpuMs } from './cpu.js';
import { floorPerStep } from './floor/floor.js';
import { durableStepMs, pct } from './step.js';

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const only = new Set((process.env.BENCH_FEATURES_ONLY ?? 'onoff,step,checkpoint,firstwords').split(','));

async function onOff(h: Harness, n: number, steps: number) {
  const rows: { live: boolean; checkpoints: boolean; f: ConcurrencyFigures }[] = [];
  for (const live of [true, false]) {
    const worker = await h.startWorker({ FAHEEM_LIVE: live ? '1' : '0' });
    for (const checkpoints of [true, false]) {
      process.env.BENCH_CHECKPOINTS = checkpoints ? '1' : '0';
      rows.push({ live, checkpoints, f: await concurrency(h, worker.process.pid, n, steps) });
    }
    await worker.kill('SIGTERM');
  }
  delete process.env.BENCH_CHECKPOINTS;
  const both = rows.find((r) => r.live && r.checkpoints)!.f;
  const none = rows.find((r) => !r.live && !r.checkpoints)!.f;
  console.log(`${n} conversations × ${steps} steps, 100 ms model, one worker:`);
  console.log('| live | checkpoints | steps/s | floor steps/s | against the floor | server CPU ms a step | worker CPU ms a step |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { live, checkpoints, f } of rows) {
    console.log(
      `| ${live ? 'on' : 'off'} | ${checkpoints ? 'on' : 'off'} | ${fmt(f.oursStepsPerSecond)} | ${fmt(f.floorStepsPerSecond)} | ` +
        `${fmt(f.oursStepsPerSecond / f.floorStepsPerSecond, 2)} | ${fmt(f.oursCpu.server)} | ${fmt(f.oursCpu.worker)} |` +
        `${f.notFinished ? ` ${f.notFinished} not finished` : ''}`,
    );
  }
  console.log(
    `defaults (both on) against both off: ${fmt(both.oursStepsPerSecond / none.oursStepsPerSecond, 2)}; ` +
      `the floor (its workers in the bench process): server ${fmt(both.floorCpu.server)} ms, client ${fmt(both.floorCpu.client)} ms a step`,
  );
}

async function stepAgainstFloor(h: Harness, steps: number) {
  const worker = await h.startWorker();
  await durableStepMs(h, 5); // warm-up
  const ours = await durableStepMs(h, steps);
  const floor = await floorPerStep(h.server.address, steps);
  await worker.kill('SIGTERM');
  console.log(
    `a step, ${steps} steps, no model delay, defaults: ${fmt(ours)} ms; Temporal's floor ${fmt(floor)} ms; ${fmt(ours / floor, 2)}× the floor`,
  );
}

async function checkpointCpu(files: number, rounds: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'faheem-bench-cp-'));
  try {
    const ws = path.join(dir, 'ws');
    for (let d = 0; d < files / 100; d++) {
      await mkdir(path.join(ws, `d${d}`), { recursive: true });
      await Promise.all(Array.from({ length: 100 }, (_, i) => writeFile(path.join(ws, `d${d}`, `f${i}.txt`), `file ${d}/${i}\n`)));
    }
    for (const watch of [true, false]) {
      const store = new CheckpointStore({ home: path.join(dir, `home-${watch}`), env: process.env, watch });
      const repo = await store.open(ws);
      await repo.snapshot('bench', 0);
      await repo.snapshot('bench', 1);
      const c0 = cpuMs(process.pid);
      const u0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < rounds; i++) await repo.snapshot('bench', 2 + i);
      const wall = (performance.now() - t0) / rounds;
      const u = process.cpuUsage(u0);
      const self = (u.user + u.system) / 1000 / rounds;
      const withChildren = (cpuMs(process.pid) - c0) / rounds;
      console.log(
        `checkpoint of an unchanged ${files}-file workspace, watcher ${watch ? 'on (default)' : 'off'}: ` +
          `${fmt(self, 2)} ms CPU in the worker process, ${fmt(Math.max(self, withChildren), 1)} ms with git's processes (10 ms ticks), ${fmt(wall, 1)} ms wall`,
      );
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function firstWords(h: Harness, rounds: number) {
  const worker = await h.startWorker();
  const gaps: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let firstToken: number | undefined;
    const words = Array.from({ length: 40 }, (_, i) => `w${r}x${i}`).join(' ');
    h.model.setScript(() => ({
      content: words,
      wordByWord: true,
      chunkDelayMs: 100,
      onChunk: (_t, at) => (firstToken ??= at),
    }));
    const cli = (args: string[]) => execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], { cwd: ROOT, env: h.env, reject: false });
    const workspace = await h.workspace();
    const id = `firstwords-${Date.now()}-${r}`;
    await cli(['start', 'Say forty words', '--id', id, '--workspace', workspace]);
    const follower = cli(['events', id, '--follow', '--until-stop', '--json']);
    let firstLive: number | undefined;
    let buf = '';
    follower.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      if (firstLive === undefined && buf.includes('"live":true')) firstLive = Date.now();
    });
    await follower;
    gaps.push(firstLive !== undefined && firstToken !== undefined ? firstLive - firstToken : NaN);
  }
  await worker.kill('SIGTERM');
  console.log(
    `first words for a new follower (\`faheem start\`, then \`faheem events --follow --json\`; model's first token → the CLI's first live line): ` +
      `${gaps.map((g) => `${fmt(g, 0)} ms`).join(', ')} (median ${fmt(pct(gaps, 50), 0)} ms)`,
  );
}

console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
if (only.has('checkpoint')) await checkpointCpu(10_000, 20);
const h = await startHarness({ name: 'bench-features', script: () => ({ content: 'ok' }), record: false });
try {
  // (The checkpoint part runs before the server starts: it needs none.)
  if (only.has('firstwords')) await firstWords(h, 3);
  if (only.has('onoff')) await onOff(h, Number(process.env.BENCH_N ?? 50), Number(process.env.BENCH_STEPS ?? 10));
  if (only.has('step')) await stepAgainstFloor(h, 200);
} finally {
  await h.close();
}
process.exit(0);
