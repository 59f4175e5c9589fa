// Peer benchmark (figures, not asserts): `npm run bench:peers [steps]` (default 200). In one run on
// one machine, with the same scripted model (no delay) over HTTP, the time a step takes:
//   - faheemcode: one conversation on the embedded dev server with a worker process, timed twice,
//     once before the peers and once after (the first includes the worker's warm-up);
//   - LangGraph JS with the SQLite checkpointer (a checkpoint per step), and the bare in-process loop
//     (openai client + child_process, no framework, no durability): the peer script
//     langgraph_steps.mjs from $FAHEEM_PEERS_DIR (default ../shared/peers from the repo root), run
//     with its npm dependencies installed once in a cached folder under the OS tmpdir.
// A step is a model call that asks for one `terminal` command (`echo step i`) plus that command; the
// model is told `steps:N please`, asks for N commands and then answers in plain text. Every figure
// is the run's wall time over its N+1 model calls (as bench/run.ts's stepTime). After them, in the
// same run, what no code of ours goes below: Temporal's floor (bench/floor) and the sandboxed command
// alone (bench/sandboxed-command.ts), against LangGraph's step.
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Conversation } from '../src/client/client.js';
import { commandBaseEnv } from '../src/security/env-policy.js';
import type { Script } from '../src/testing/scripted-model.js';
import { ROOT, startHarness, type Harness } from '../test/support/harness.js';
import { floorPerStep } from './floor/floor.js';
import { sandboxName, sandboxedCommands } from './sandboxed-command.js';
import { benchAgent, pct } from './step.js';

const steps = Number(process.argv[2] ?? 200);
if (!Number.isInteger(steps) || steps < 1) throw new Error(`steps must be a positive integer, got ${process.argv[2]}`);

const PEER_SCRIPT = 'langgraph_steps.mjs';
const PEER_DEPS = [
  '@langchain/langgraph',
  '@langchain/openai',
  '@langchain/core',
  '@langchain/langgraph-checkpoint-sqlite',
  'better-sqlite3@12',
  'openai',
  'zod',
];
const fmt = (n: number) => n.toFixed(1);
const round = (n: number) => +n.toFixed(2);

/**
 * The model for both sides: the user's `steps:N please` (N from the first such message, else the
 * bench's N) gets N single `terminal` calls, counted by the tool results in the request, then text.
 */
const script: Script = (req) => {
  const asked = req.body.messages
    .map((m) => (m.role === 'user' && typeof m.content === 'string' ? /steps:(\d+)/.exec(m.content) : null))
    .find((m) => m);
  const n = asked ? Number(asked[1]) : steps;
  const done = req.body.messages.filter((m) => m.role === 'tool').length;
  return done >= n ? { content: 'done' } : { toolCalls: [{ name: 'terminal', arguments: { command: `echo step ${done + 1}` } }] };
};

/** The folder the peer script runs from: its dependencies installed once per spec list and Node ABI. */
async function peerFolder(): Promise<{ dir: string; installMs?: number }> {
  const key = createHash('sha256')
    .update(JSON.stringify({ deps: PEER_DEPS, abi: process.versions.modules, platform: process.platform, arch: process.arch }))
    .digest('hex')
    .slice(0, 12);
  const dir = path.join(os.tmpdir(), `faheem-peers-${key}`);
  const marker = path.join(dir, '.faheem-installed');
  if (existsSync(marker)) return { dir };

  // Install beside it, then rename into place: an interrupted install is never taken for a done one.
  const t0 = performance.now();
  const work = `${dir}.tmp-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const npm = (args: string[]) => execa('npm', args, { cwd: work, all: true });
  try {
    await npm(['init', '-y']);
    // better-sqlite3 needs its install script (prebuilt binding, else node-gyp). npm 11 only warns
    // about unreviewed scripts for now but will block them: allow it by name, as a JSON `true` (npm
    // ignores the string "true" that `npm pkg set` writes without --json).
    await npm(['pkg', 'set', 'allowScripts.better-sqlite3=true', '--json']);
    await npm(['install', '--no-audit', '--no-fund', '--ignore-scripts=false', ...PEER_DEPS]);
    await execa('node', ['-e', "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"], { cwd: work, all: true });
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    const out = (err as { all?: string }).all ?? (err as Error).message;
    throw new Error(`installing the peer's dependencies failed in ${work}:\n${out.split('\n').slice(-30).join('\n')}`);
  }
  await writeFile(path.join(work, '.faheem-installed'), `${new Date().toISOString()}\n`);
  try {
    await rename(work, dir);
  } catch (err) {
    // Another run installed it meanwhile (or a broken leftover is in the way without its marker).
    await rm(work, { recursive: true, force: true });
    if (!existsSync(marker)) throw new Error(`cannot move the peer install into ${dir}: ${(err as Error).message}`);
  }
  return { dir, installMs: performance.now() - t0 };
}

async function installedVersions(dir: string): Promise<string> {
  const names = PEER_DEPS.map((d) => d.replace(/(.)@.*$/, '$1'));
  const versions = await Promise.all(
    names.map(async (n) => {
      const pkg = JSON.parse(await readFile(path.join(dir, 'node_modules', n, 'package.json'), 'utf8')) as { version: string };
      return `${n}@${pkg.version}`;
    }),
  );
  return versions.join(', ');
}

/** One faheemcode conversation of `steps` steps: ms a model call. */
async function faheemPerStep(h: Harness): Promise<number> {
  const workspace = await h.workspace();
  const before = h.model.requests.length;
  const t0 = performance.now();
  const conversation = await Conversation.create(h.client, {
    agent: benchAgent(),
    workspace,
    firstMessage: `steps:${steps} please`,
    run: true,
    condenser: false,
  });
  const s = await conversation.waitUntilStopped({ timeoutMs: 1_800_000 });
  const perStep = (performance.now() - t0) / (steps + 1);
  const calls = h.model.requests.length - before;
  if (!['idle', 'finished'].includes(s.status) || calls !== steps + 1) {
    throw new Error(`faheemcode run ended ${s.status} after ${calls} model calls (expected idle or finished after ${steps + 1})`);
  }
  await rm(workspace, { recursive: true, force: true });
  return perStep;
}

interface PeerResult {
  steps: number;
  langgraph_ms_per_step: number;
  bare_loop_ms_per_step: number;
}

/** The peer script against the same scripted model: its figures per model call (it divides by N). */
async function peerPerStep(h: Harness, dir: string, peerScript: string): Promise<{ langgraph: number; bare: number }> {
  const workspace = await h.workspace();
  const before = h.model.requests.length;
  const r = await execa('node', [peerScript, h.model.baseUrl, String(steps), workspace], {
    cwd: dir,
    // The environment faheemcode's commands start from, so both sides' shells see the same one.
    env: commandBaseEnv(process.env),
    extendEnv: false,
    all: true,
    reject: false,
    timeout: 1_800_000,
  });
  await rm(workspace, { recursive: true, force: true });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.exitCode !== 0 || !line.startsWith('{')) throw new Error(`the peer script failed (exit ${r.exitCode}):\n${r.all}`);
  const out = JSON.parse(line) as PeerResult;
  const calls = h.model.requests.length - before;
  if (calls !== 2 * (steps + 1))
    console.warn(`warning: the peer made ${calls} model calls (expected ${2 * (steps + 1)}: ${steps + 1} for each loop)`);
  // It reports total / N; report total / (N + 1) like ours.
  const perCall = (ms: number) => (ms * out.steps) / (out.steps + 1);
  return { langgraph: perCall(out.langgraph_ms_per_step), bare: perCall(out.bare_loop_ms_per_step) };
}

/**
 * The sanity floor: what the bare loop does a step, with nothing around it, in this process: one
 * HTTP call to the same model server and one `bash --norc --noprofile -c 'echo step i'`, as the
 * peer's commands run. A bare loop far slower than this (over 2×) means the peers ran slowed down
 * (a shell reading ~/.bashrc, a different environment), and their figures are not to be trusted.
 */
async function spawnPlusHttpPerStep(h: Harness, n: number): Promise<number> {
  const workspace = await h.workspace();
  const url = `${h.model.baseUrl.replace(/\/$/, '')}/chat/completions`;
  const body = JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'steps:0 please' }] });
  const env = commandBaseEnv(process.env);
  const t0 = performance.now();
  for (let i = 1; i <= n; i++) {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await r.text();
    execFileSync('/bin/bash', ['--norc', '--noprofile', '-c', `echo step ${i}`], { cwd: workspace, env, encoding: 'utf8' });
  }
  const perStep = (performance.now() - t0) / n;
  await rm(workspace, { recursive: true, force: true });
  return perStep;
}

const peersDir = path.resolve(ROOT, process.env.FAHEEM_PEERS_DIR ?? '../shared/peers');
const peerScript = path.join(peersDir, PEER_SCRIPT);
let peer: { dir: string; installMs?: number } | undefined;
if (!existsSync(peerScript)) {
  console.log(`peers: skipped, ${peerScript} not found (set FAHEEM_PEERS_DIR to the folder holding ${PEER_SCRIPT})`);
} else {
  peer = await peerFolder();
  const how = peer.installMs === undefined ? 'cached' : `installed in ${(peer.installMs / 1000).toFixed(1)} s`;
  console.log(`peer dependencies (${how}, ${peer.dir}): ${await installedVersions(peer.dir)}`);
}

console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()}`,
);
const h = await startHarness({ name: 'bench-peers', script, record: false });
try {
  await h.startWorker();
  const first = await faheemPerStep(h);
  const lg = peer ? await peerPerStep(h, peer.dir, peerScript) : undefined;
  const second = await faheemPerStep(h);
  const floor = await spawnPlusHttpPerStep(h, steps);
  // What no code of ours can go below: Temporal's floor (two no-op activities a step) and the
  // sandboxed command as our terminal runs it (median), in the same run.
  const temporalFloor = await floorPerStep(h.server.address, steps);
  const commands = await sandboxedCommands(await h.workspace());
  const command = pct(await commands.times(steps), 50);
  commands.close();
  // The two runs bracket the peer's: their mean evens out drift over the run.
  const faheem = (first + second) / 2;
  console.log(
    JSON.stringify({
      steps,
      faheem_ms_per_step: round(faheem),
      faheem_runs_ms_per_step: [round(first), round(second)],
      langgraph_ms_per_step: lg ? round(lg.langgraph) : null,
      bare_loop_ms_per_step: lg ? round(lg.bare) : null,
      ratio_vs_langgraph: lg ? round(faheem / lg.langgraph) : null,
      spawn_plus_http_ms_per_step: round(floor),
      temporal_floor_ms_per_step: round(temporalFloor),
      sandboxed_command_ms: round(command),
    }),
  );
  if (lg) {
    const sane = lg.bare <= 2 * floor;
    console.log(
      `sanity: the bare loop takes ${fmt(lg.bare)} ms a step against ${fmt(floor)} ms for one HTTP call plus one bash spawn here ` +
        `(${(lg.bare / floor).toFixed(2)}×): ${sane ? 'ok (within 2×)' : 'NOT OK: over 2×, the peers ran slowed down; do not use these figures'}`,
    );
    if (!sane) process.exitCode = 1;
  }
  console.log(
    `time per step, ${steps} steps: faheemcode ${fmt(faheem)} ms (runs: ${fmt(first)} before the peer, ${fmt(second)} after)` +
      (lg
        ? `, LangGraph JS + SQLite ${fmt(lg.langgraph)} ms, bare loop ${fmt(lg.bare)} ms: faheemcode is ${(faheem / lg.langgraph).toFixed(2)}× LangGraph`
        : ', peers skipped'),
  );
  const bound = temporalFloor + command;
  console.log(
    `what no code of ours goes below: Temporal's floor ${fmt(temporalFloor)} ms a step + the sandboxed command (${sandboxName(commands.sandbox)}) ${fmt(command)} ms = ${fmt(bound)} ms` +
      (lg ? ` = ${(bound / lg.langgraph).toFixed(2)}× LangGraph; ours is that + ${fmt(faheem - bound)} ms` : ''),
  );
} finally {
  await h.close();
}
process.exit(process.exitCode ?? 0);
