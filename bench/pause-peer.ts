// Pause against OpenHands (figures, not asserts): `npm run bench:pause-peer [rounds]` (default 3,
// median). One scripted model server whose every call takes BENCH_PAUSE_MODEL_MS (default 2000) and
// asks for one `terminal` command, so a step is under way; each side is paused BENCH_PAUSE_AT_MS
// (default half the call) into one of its model calls, `rounds` times, resumed in between:
//   - faheemcode: a conversation with the defaults through the public SDK; the time from
//     `conversation.pause({ wait: true })` being called until it returns, applied (a query then
//     must read `paused`), and, in turns with it, from `conversation.pause()` (the signal) until
//     a state query answers `paused`;
//   - OpenHands SDK (Python `openhands-sdk` + `openhands-tools`, installed once into a cached venv
//     under the OS tmpdir; BENCH_OPENHANDS_PYTHON names a Python ≥ 3.12, else one is looked for):
//     bench/peers/openhands_pause.py runs a Conversation with its terminal tool in a thread and
//     times `pause()` from call to return (the issue's figure: it waits for the step to end), then
//     `interrupt()` on `arun()` until the state says paused (it cancels the model call), told when
//     by this process, which sees the model call in flight.
// Both sides start from the environment our commands start from (commandBaseEnv), and both sides'
// shells are `bash --norc --noprofile`. The sanity line checks that each pause was called while its
// model call was in flight, and how that call ended.
import { execa, type ResultPromise } from 'execa';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { Conversation } from '../src/client/client.js';
import { commandBaseEnv } from '../src/security/env-policy.js';
import type { RecordedRequest, Script } from '../src/testing/scripted-model.js';
import { ROOT, startHarness, waitFor, type Harness } from '../test/support/harness.js';
import { floorPauser, withFloor, type FloorPauser } from './floor/floor.js';
import { benchAgent, benchOptions } from './step.js';

const rounds = Number(process.argv[2] ?? 3);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`rounds must be a positive integer, got ${process.argv[2]}`);
const modelMs = Number(process.env.BENCH_PAUSE_MODEL_MS ?? 2000);
const pauseAtMs = Number(process.env.BENCH_PAUSE_AT_MS ?? Math.round(modelMs / 2));
if (!(modelMs > 0) || !(pauseAtMs >= 0) || pauseAtMs >= modelMs) {
  throw new Error(`need 0 ≤ BENCH_PAUSE_AT_MS (${pauseAtMs}) < BENCH_PAUSE_MODEL_MS (${modelMs})`);
}

// Pinned together: unpinned, pip settles on an sdk older than the tools need (an ImportError).
const OPENHANDS_SPECS = ['openhands-sdk==1.58.2', 'openhands-tools==1.58.2'];
const PY_SCRIPT = path.join(ROOT, 'bench', 'peers', 'openhands_pause.py');
const FAHEEM_FIRST = 'pause bench: faheemcode';
const OPENHANDS_FIRST = 'pause bench: openhands';

/** The median of `xs` (the mean of the middle two for an even count; NaN when empty). */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** One line the Python side prints: ready (with versions), a timed pause, or a failure. */
const PeerLine = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('ready'), versions: z.record(z.string(), z.string()), python: z.string() }),
  z.object({
    kind: z.literal('paused'),
    round: z.number().int(),
    called_at_ms: z.number(),
    pause_ms: z.number(),
    status: z.string(),
    run_stopped_ms: z.number().nullable(),
  }),
  z.object({ kind: z.literal('error'), message: z.string() }),
]);
type PeerLine = z.infer<typeof PeerLine>;

/** A line of the Python side's stdout, checked: JSON of a known kind, else a clear error. */
export function parsePeerLine(line: string): PeerLine {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new Error(`the OpenHands script printed a line that is not JSON: ${line.slice(0, 200)}`);
  }
  const r = PeerLine.safeParse(json);
  if (!r.success) throw new Error(`the OpenHands script printed an unexpected line (${r.error.issues[0]?.message}): ${line.slice(0, 200)}`);
  return r.data;
}

const firstUser = (r: RecordedRequest) => r.body.messages.find((m) => m.role === 'user')?.content;
const firstUserText = (r: RecordedRequest): string => {
  const c = firstUser(r) as unknown;
  // OpenHands sends content as parts ([{type: 'text', text}]).
  if (Array.isArray(c)) return c.map((p: { text?: string }) => p.text ?? '').join('');
  return typeof c === 'string' ? c : '';
};

/** The name of the tool that runs commands among those the request offers (ours: `terminal`). */
function terminalName(r: RecordedRequest): string {
  const names = (r.body.tools ?? []).map((t) => (t as { function?: { name?: string } }).function?.name ?? '');
  return names.find((n) => n === 'terminal') ?? names.find((n) => /terminal|bash/.test(n)) ?? 'terminal';
}

/** Every call: the delay, then one harmless command (OpenHands' tool also asks how risky it is). */
const script: Script = (req) => {
  const name = terminalName(req);
  const args = firstUserText(req).includes(OPENHANDS_FIRST) ? { command: 'true', security_risk: 'LOW' } : { command: 'true' };
  return { delayMs: modelMs, toolCalls: [{ name, arguments: args }] };
};

/** The next model call of one side that is in flight and has been for `pauseAtMs` (the same point for both sides). */
async function callUnderWay(h: Harness, side: string, seen: Set<RecordedRequest>): Promise<RecordedRequest> {
  const r = await waitFor(
    `a ${side} model call in flight`,
    () => h.model.requests.find((q) => !seen.has(q) && firstUserText(q).includes(side) && q.endedAt === undefined),
    120_000,
    5,
  );
  seen.add(r);
  const wait = r.startedAt + pauseAtMs - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  return r;
}

interface Round {
  ms: number;
  /** ms into its model call when pause was called. */
  into: number;
  /** How the call ended: aborted (the pause cut it), completed, or still open when the pause was seen. */
  call: 'aborted' | 'completed' | 'open';
  /** OpenHands: its call had ended before the pause was called (no pause mid-call then). */
  endedBefore?: boolean;
  /** OpenHands: ms from the pause called until its run() / arun() returned. */
  runStopped?: number | null;
}

/** How our side pauses: the signal and then queries until one reads `paused`, or `pause({ wait: true })`, which returns once applied. */
type OurPause = 'signal' | 'applied';

/**
 * faheemcode: pause mid model call, `rounds` times each way, the two ways taking turns in one
 * conversation; ms from `pause()` called until the caller knows it is paused (a query read
 * `paused`, or the update returned, after which a query must read `paused`: checked).
 */
async function faheemRounds(
  h: Harness,
  floor: FloorPauser,
): Promise<Record<OurPause, Round[]> & { floor: { ms: number; aborted: boolean }[] }> {
  const conversation = await Conversation.create(h.client, {
    ...benchOptions(),
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: FAHEEM_FIRST,
    run: true,
    maxIterations: 100_000,
  });
  const seen = new Set<RecordedRequest>();
  const out: Record<OurPause, Round[]> & { floor: { ms: number; aborted: boolean }[] } = { signal: [], applied: [], floor: [] };
  for (let i = 0; i < rounds * 2; i++) {
    const how: OurPause = i % 2 === 0 ? 'signal' : 'applied';
    if (i > 0) await conversation.resume();
    const request = await callUnderWay(h, FAHEEM_FIRST, seen);
    const calledAt = Date.now();
    const t0 = performance.now();
    let ms: number;
    if (how === 'applied') {
      await conversation.pause({ wait: true });
      ms = performance.now() - t0;
      const s = await conversation.state();
      if (s.status !== 'paused') throw new Error(`pause({ wait: true }) returned, then the state read ${s.status}`);
    } else {
      await conversation.pause();
      for (;;) {
        const s = await conversation.state();
        if (s.status === 'paused') break;
      }
      ms = performance.now() - t0;
    }
    const open = request.endedAt === undefined;
    if (open) await waitFor('the paused model call to end', () => request.endedAt !== undefined, 30_000, 2);
    out[how].push({ ms, into: calledAt - request.startedAt, call: request.aborted ? 'aborted' : open ? 'open' : 'completed' });
    // Temporal's floor for a pause takes its turn after each applied pause of ours (ours stays paused meanwhile).
    if (how === 'applied') out.floor.push(await floor.pauseOnce());
  }
  await conversation.close();
  await h.client.workflow
    .getHandle(conversation.id)
    .result()
    .catch(() => undefined);
  return out;
}

/** A Python ≥ 3.12: BENCH_OPENHANDS_PYTHON, else python3.13/3.12 on PATH, else pyenv's. */
async function findPython(): Promise<string | undefined> {
  const home = os.homedir();
  const pyenv = path.join(process.env.PYENV_ROOT ?? path.join(home, '.pyenv'), 'versions');
  const candidates = [process.env.BENCH_OPENHANDS_PYTHON, 'python3.13', 'python3.12'];
  if (existsSync(pyenv)) {
    const versions = (await readdir(pyenv))
      .filter((v) => /^3\.(1[2-9]|[2-9]\d)\.\d+$/.test(v))
      .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
    candidates.push(...versions.map((v) => path.join(pyenv, v, 'bin', 'python3')));
  }
  for (const c of candidates) {
    if (!c) continue;
    const r = await execa(c, ['-c', 'import sys; print(sys.version_info >= (3, 12))'], { reject: false });
    if (r.exitCode === 0 && r.stdout.trim() === 'True') return c;
  }
  return undefined;
}

/** The venv the OpenHands side runs in: its packages installed once per spec list and Python. */
async function openhandsVenv(python: string): Promise<{ python: string; installMs?: number }> {
  const version = (await execa(python, ['-c', 'import sys; print(sys.version)'])).stdout.trim();
  const key = createHash('sha256')
    .update(JSON.stringify({ specs: OPENHANDS_SPECS, version, platform: process.platform, arch: process.arch }))
    .digest('hex')
    .slice(0, 12);
  const dir = path.join(os.tmpdir(), `faheem-openhands-${key}`);
  const venvPython = path.join(dir, 'bin', 'python');
  if (existsSync(path.join(dir, '.faheem-installed'))) return { python: venvPython };

  // Install beside it, then rename into place (bin/python is a link, so the venv moves; pip is run
  // as `python -m pip`): an interrupted install is never taken for a done one.
  const t0 = performance.now();
  const work = `${dir}.tmp-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(path.dirname(work), { recursive: true });
  try {
    await execa(python, ['-m', 'venv', work], { all: true });
    await execa(path.join(work, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', ...OPENHANDS_SPECS], {
      all: true,
      timeout: 1_800_000,
    });
    await execa(path.join(work, 'bin', 'python'), ['-c', 'import openhands.sdk, openhands.tools.terminal'], { all: true });
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    const out = (err as { all?: string }).all ?? (err as Error).message;
    throw new Error(`installing ${OPENHANDS_SPECS.join(' ')} failed:\n${out.split('\n').slice(-30).join('\n')}`);
  }
  await writeFile(path.join(work, '.faheem-installed'), `${new Date().toISOString()}\n`);
  try {
    await rename(work, dir);
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    if (!existsSync(path.join(dir, '.faheem-installed')))
      throw new Error(`cannot move the OpenHands venv into ${dir}: ${(err as Error).message}`);
  }
  return { python: venvPython, installMs: performance.now() - t0 };
}

/** Lines of a child's stdout, one at a time. */
function lineReader(child: ResultPromise): () => Promise<string> {
  const rl = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  let closed = false;
  rl.on('line', (l) => {
    if (!l.startsWith('{')) return; // the SDK's own prints
    const w = waiting.shift();
    if (w) w(l);
    else queue.push(l);
  });
  rl.on('close', () => {
    closed = true;
    for (const w of waiting.splice(0)) w('');
  });
  return () => {
    const l = queue.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (closed) return Promise.resolve('');
    return new Promise((resolve) => waiting.push(resolve));
  };
}

/**
 * OpenHands, in one process: `rounds` pauses mid model call with `run()` and `pause()` (ms from call
 * to return: it waits for the step, the model call included), then `rounds` with `arun()` and
 * `interrupt()` (ms until the state says paused: it cancels the call).
 */
async function openhandsRounds(
  h: Harness,
  python: string,
): Promise<{ pause: Round[]; interrupt: Round[]; versions: Record<string, string> }> {
  const workspace = await h.workspace();
  const child = execa(python, [PY_SCRIPT, h.model.baseUrl, workspace], {
    cwd: workspace,
    // The environment faheemcode's commands start from, so both sides' shells see the same one.
    env: { ...commandBaseEnv(process.env), PYTHONUNBUFFERED: '1', OPENHANDS_SUPPRESS_BANNER: '1' },
    extendEnv: false,
    stdin: 'pipe',
    stderr: 'pipe',
    reject: false,
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const next = lineReader(child);
  const read = async (): Promise<PeerLine> => {
    const l = await next();
    if (!l) throw new Error(`the OpenHands script ended early:\n${stderr.split('\n').slice(-30).join('\n')}`);
    const p = parsePeerLine(l);
    if (p.kind === 'error') throw new Error(`the OpenHands script failed: ${p.message}`);
    return p;
  };
  try {
    const ready = await read();
    if (ready.kind !== 'ready') throw new Error(`expected ready from the OpenHands script, got ${ready.kind}`);
    const seen = new Set<RecordedRequest>();
    const timed = async (start: 'run' | 'arun', stop: 'pause' | 'interrupt'): Promise<Round[]> => {
      const out: Round[] = [];
      for (let i = 0; i < rounds; i++) {
        child.stdin!.write(`${start}\n`);
        const request = await callUnderWay(h, OPENHANDS_FIRST, seen);
        child.stdin!.write(`${stop}\n`);
        const p = await read();
        if (p.kind !== 'paused') throw new Error(`expected a pause from the OpenHands script, got ${p.kind}`);
        if (request.endedAt === undefined) await waitFor('the paused model call to end', () => request.endedAt !== undefined, 30_000, 2);
        // A call that ended before the pause was called would make this no pause mid-call.
        const endedBefore = request.endedAt! < p.called_at_ms;
        out.push({
          ms: p.pause_ms,
          into: p.called_at_ms - request.startedAt,
          call: request.aborted ? 'aborted' : 'completed',
          endedBefore,
          runStopped: p.run_stopped_ms,
        });
        if (p.status.toLowerCase() !== 'paused')
          console.warn(`warning: OpenHands ${stop} round ${i + 1}: status afterwards is ${p.status}`);
      }
      return out;
    };
    const pause = await timed('run', 'pause');
    const interrupt = await timed('arun', 'interrupt');
    child.stdin!.write('quit\n');
    child.stdin!.end();
    await child;
    return { pause, interrupt, versions: ready.versions };
  } finally {
    child.kill();
    await rm(workspace, { recursive: true, force: true });
  }
}

const fmt = (n: number) => n.toFixed(1);
const round = (n: number) => +n.toFixed(1);

console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, Node ${process.version}; model calls ${modelMs} ms, paused ${pauseAtMs} ms in, ${rounds} rounds a side`,
);
let openhands: { python: string } | { skipped: string };
const python = await findPython();
if (!python) openhands = { skipped: 'no Python ≥ 3.12 found (set BENCH_OPENHANDS_PYTHON)' };
else {
  try {
    const venv = await openhandsVenv(python);
    console.log(
      `OpenHands venv (${venv.installMs === undefined ? 'cached' : `installed in ${(venv.installMs / 1000).toFixed(0)} s`}): ${venv.python}`,
    );
    openhands = venv;
  } catch (err) {
    openhands = { skipped: (err as Error).message };
  }
}

const h = await startHarness({ name: 'bench-pause-peer', script, record: false });
try {
  await h.startWorker();
  // Temporal's floor for a pause (an update that cancels a call, nothing else) in turns with ours, on the same server.
  const both = await withFloor(h.server.address, async (client) => {
    const floor = await floorPauser(client, modelMs, pauseAtMs);
    try {
      return await faheemRounds(h, floor);
    } finally {
      await floor.close();
    }
  });
  const ours = both.applied;
  let theirs: Awaited<ReturnType<typeof openhandsRounds>> | undefined;
  if ('python' in openhands) {
    try {
      theirs = await openhandsRounds(h, openhands.python);
    } catch (err) {
      openhands = { skipped: (err as Error).message };
    }
  }
  const floorRounds = both.floor.map((r) => r.ms);
  const floorAborted = both.floor.filter((r) => r.aborted).length;
  const floorMs = median(floorRounds);
  const oursMs = median(ours.map((r) => r.ms));
  const signalMs = median(both.signal.map((r) => r.ms));
  const pauseMs = theirs ? median(theirs.pause.map((r) => r.ms)) : null;
  const interruptMs = theirs ? median(theirs.interrupt.map((r) => r.ms)) : null;
  const ms = (rs: Round[] | undefined) => rs?.map((r) => round(r.ms)) ?? null;
  console.log(
    JSON.stringify({
      rounds,
      model_ms: modelMs,
      pause_at_ms: pauseAtMs,
      load: os.loadavg().map((l) => round(l)),
      faheem_pause_ms: round(oursMs),
      faheem_rounds_ms: ms(ours),
      faheem_signal_then_query_ms: round(signalMs),
      faheem_signal_rounds_ms: ms(both.signal),
      openhands_pause_ms: pauseMs === null ? null : round(pauseMs),
      openhands_pause_rounds_ms: ms(theirs?.pause),
      ratio: pauseMs === null ? null : round(pauseMs / oursMs),
      openhands_interrupt_ms: interruptMs === null ? null : round(interruptMs),
      openhands_interrupt_rounds_ms: ms(theirs?.interrupt),
      ratio_vs_interrupt: interruptMs === null ? null : +(interruptMs / oursMs).toFixed(3),
      openhands_run_returned_ms: theirs
        ? [...theirs.pause, ...theirs.interrupt].map((r) => (r.runStopped == null ? null : round(r.runStopped)))
        : null,
      floor_pause_ms: round(floorMs),
      floor_pause_rounds_ms: floorRounds.map(round),
      openhands_versions: theirs?.versions ?? null,
    }),
  );
  const calls = (rs: Round[]) => rs.map((r) => `${fmt(r.into)} ms in, ${r.endedBefore ? 'ended before the pause' : r.call}`).join('; ');
  const midCall = (r: Round) => r.into >= 0 && r.into < modelMs && !r.endedBefore;
  const sane =
    [...ours, ...both.signal].every((r) => r.call === 'aborted' && midCall(r)) &&
    floorAborted === rounds &&
    (!theirs || (theirs.pause.every(midCall) && theirs.interrupt.every((r) => midCall(r) && r.call === 'aborted')));
  console.log(
    `sanity: faheemcode's pauses must be called mid-call and abort it (${calls(ours)}; signalled: ${calls(both.signal)}); ` +
      `the floor's must abort its call (${floorAborted} of ${rounds})` +
      (theirs
        ? `; OpenHands' pause() must be called mid-call (${calls(theirs.pause)}), its interrupt() too and abort it (${calls(theirs.interrupt)})`
        : '') +
      `: ${sane ? 'ok' : 'NOT OK: do not use these figures'}`,
  );
  if (!sane) process.exitCode = 1;
  // Both OpenHands figures in one table: pause()'s ratio is set by the model call left at the pause
  // (it waits for the step), interrupt()'s is the honest lower bound (it cancels the call in process,
  // while ours crosses the server twice).
  console.log(
    `pause, median of ${rounds}, ${modelMs} ms model calls paused ${pauseAtMs} ms in (faheemcode: pause({ wait: true }) called → returned, applied; ` +
      `the signal and a query until one reads "paused", in turns with it: ${fmt(signalMs)} ms)`,
  );
  console.log('| OpenHands | its ms | faheemcode ms | ratio | what sets it |');
  console.log('|---|---|---|---|---|');
  if (theirs && pauseMs !== null && interruptMs !== null) {
    console.log(
      `| pause() on run(): called → returned | ${fmt(pauseMs)} | ${fmt(oursMs)} | ${(pauseMs / oursMs).toFixed(1)}× | ` +
        `the model call left at the pause (${modelMs - pauseAtMs} ms) and the step's command |`,
    );
    console.log(
      `| pause() on run(), against Temporal's floor (an update cancelling a call, nothing else; in turns with ours) | ${fmt(pauseMs)} | floor ${fmt(floorMs)} | ${(pauseMs / floorMs).toFixed(1)}× | ` +
        'the most any pause through a Temporal server and a workflow task reaches here |',
    );
    console.log(
      `| interrupt() on arun(): called → state paused | ${fmt(interruptMs)} | ${fmt(oursMs)} | ${(interruptMs / oursMs).toFixed(2)}× | ` +
        'the lower bound: the call cancelled in process, no server crossed |',
    );
  } else {
    console.log(`| skipped: ${'skipped' in openhands ? openhands.skipped : 'unknown'} | — | ${fmt(oursMs)} | — | — |`);
  }
} finally {
  await h.close();
}
process.exit(process.exitCode ?? 0);
