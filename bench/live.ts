// Live-view benchmarks (figures, not asserts): `npm run bench:live`. On the embedded dev server (or
// the run's shared one) with the scripted model and real worker processes:
//  - delta latency: the scripted model writes a word (a unique token) → a follower in this process
//    receives it through `follow({ live: true })` (same clock), p50/p99; a command's output line
//    (which carries its own `date +%s%3N`) → the follower; with one follower and with ten (do all
//    ten see every line?), and with a worker key as long as a real provider's (the live buffer holds
//    back as many characters as the longest secret, less one);
//  - per step with a follower attached, streaming on (default) versus off (FAHEEM_LIVE=0): the
//    conversation's history bytes, the stream workflow's own history, worker (and server) CPU, wall
//    time; a step is a ~100-word reply streamed word by word plus a command printing 200 lines;
//  - time per step the bench/step.ts way (no reply text, `echo`), on versus off.
// BENCH_LIVE_ONLY=latency,ten,tenbare,longkey,steps,plain picks parts; BENCH_LIVE_STEPS (20) sets the steps of a
// per-step run, BENCH_LIVE_CHUNK_MS (20) the gap between its words, BENCH_LIVE_MODES (on,off,off,on) its runs.
import os from 'node:os';
import { Conversation } from '../src/client/client.js';
import { liveStreamId } from '../src/live/stream-id.js';
import { LiveReader } from '../src/live/subscribe.js';
import type { LiveDelta } from '../src/live/types.js';
import type { Script, ScriptedReply } from '../src/testing/scripted-model.js';
import type { ConversationEvent } from '../src/core/types.js';
import { startHarness, type Harness, type WorkerProcess } from '../test/support/harness.js';
import { cpuMs, selfCpuMs } from './cpu.js';
import { benchAgent, benchOptions, durableStepMs, pct } from './step.js';

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const isLive = (x: ConversationEvent | LiveDelta): x is LiveDelta => 'live' in x;
const toolResults = (req: { body: { messages: { role: string }[] } }) => req.body.messages.filter((m) => m.role === 'tool').length;

/** When each token and output line was sent (written by the model server / printed by the command). */
interface Sent {
  words: Map<string, number>;
  /** Output line ids expected (their send time travels in the line itself). */
  lines: Set<string>;
}

/**
 * A script of `steps` steps: a reply of `words` unique tokens streamed one by one `chunkMs` apart
 * (each token's write time recorded), then a command printing `lines` lines `lineGapS` apart, each
 * with its id and the time it was printed; then `done`.
 */
function timedScript(sent: Sent, o: { steps: number; words: number; chunkMs: number; lines: number; lineGapS: number }): Script {
  return (req) => {
    if (toolResults(req) >= o.steps) return { content: 'done' };
    const r = req.index;
    const tokens = Array.from({ length: o.words }, (_, i) => `t${r}x${i}`);
    for (let i = 1; i <= o.lines; i++) sent.lines.add(`o${r}_${i}`);
    const command = `for i in $(seq 1 ${o.lines}); do echo "o${r}_$i $(date +%s%3N)"; sleep ${o.lineGapS}; done`;
    const reply: ScriptedReply = {
      content: `${tokens.join(' ')} .`,
      wordByWord: true,
      chunkDelayMs: o.chunkMs,
      onChunk: (text, at) => {
        const t = text.trim();
        if (t.startsWith('t')) sent.words.set(t, at);
      },
      toolCalls: [{ name: 'terminal', arguments: { command } }],
    };
    return reply;
  };
}

/** What one follower saw: latencies, and which tokens and lines arrived. */
interface Seen {
  /** [sent at, latency] of each word. */
  wordAt: [number, number][];
  wordMs: number[];
  lineMs: number[];
  words: Set<string>;
  lines: Set<string>;
  liveLines: number;
  duplicates: number;
}

/** Reads `source` (a follow, or a bare reader's lines) to its end, timing every token and output line against `sent`. */
async function follower(source: AsyncIterable<ConversationEvent | LiveDelta>, sent: Sent): Promise<Seen> {
  const seen: Seen = { wordAt: [], wordMs: [], lineMs: [], words: new Set(), lines: new Set(), liveLines: 0, duplicates: 0 };
  let text = '';
  let scanned = 0;
  const output = new Map<string, string>();
  const offsets = new Set<number>();
  for await (const item of source) {
    if (!isLive(item)) continue;
    const now = Date.now();
    seen.liveLines++;
    if (offsets.has(item.offset)) seen.duplicates++;
    offsets.add(item.offset);
    if (item.kind === 'model_delta' && !item.toolCallId) {
      text += item.text;
      // Complete tokens only (a delta may end mid-token: the buffer holds back a secret's length).
      const re = /t(\d+)x(\d+)\s/g;
      re.lastIndex = scanned;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        scanned = re.lastIndex;
        const token = `t${m[1]}x${m[2]}`;
        const at = sent.words.get(token);
        if (at !== undefined && !seen.words.has(token)) {
          seen.wordMs.push(now - at);
          seen.wordAt.push([at, now - at]);
        }
        seen.words.add(token);
      }
    } else if (item.kind === 'output_delta') {
      const key = item.toolCallId ?? '';
      const lines = ((output.get(key) ?? '') + item.text).split('\n');
      output.set(key, lines.pop() ?? '');
      for (const line of lines) {
        const m = /^(o\d+_\d+) (\d{13})$/.exec(line.trim());
        if (!m) continue;
        if (!seen.lines.has(m[1]!)) seen.lineMs.push(now - Number(m[2]));
        seen.lines.add(m[1]!);
      }
    }
  }
  return seen;
}

/** A follow of `conversation` with its live lines, until it stops. */
const follow = (conversation: Conversation) => conversation.follow({ live: true, until: (s) => s.status !== 'running' });

/**
 * The live lines alone, from a bare LiveReader (no events, none of follow()'s queries between them)
 * until `stop` aborts: the transport's own latency, apart from follow()'s loop.
 */
async function* bareLines(h: Harness, conversation: Conversation, stop: AbortSignal): AsyncGenerator<LiveDelta> {
  const reader = new LiveReader(h.client, conversation.id, 0);
  try {
    while (!stop.aborted) {
      await reader.ready(stop);
      yield* reader.take();
    }
    await reader.catchUp(2_000);
    yield* reader.take();
  } finally {
    reader.stop();
  }
}

/** The history of every run of a conversation's stream workflow (none with streaming off). */
async function streamRuns(h: Harness, conversationId: string): Promise<{ events: number; bytes: number }[]> {
  const runs = [];
  for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${liveStreamId(conversationId)}'` })) {
    // Visibility does not carry a running run's history length: describe each run.
    const d = await h.client.workflow.getHandle(wf.workflowId, wf.runId).describe();
    runs.push({ events: d.historyLength ?? 0, bytes: d.historySize ?? 0 });
  }
  return runs;
}

async function start(h: Harness, script: Script): Promise<Conversation> {
  h.model.setScript(script);
  return Conversation.create(h.client, {
    ...benchOptions(),
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    run: true,
    condenser: false,
  });
}

/** Latency with `n` followers on one conversation of `steps` steps (50 words a step at 20 ms: a 50 token/s model). */
async function latency(h: Harness, n: number, o: { steps?: number; bare?: boolean } = {}) {
  const steps = o.steps ?? 5;
  const sent: Sent = { words: new Map(), lines: new Set() };
  const conversation = await start(h, timedScript(sent, { steps, words: 50, chunkMs: 20, lines: 20, lineGapS: 0.05 }));
  const stop = new AbortController();
  const following = Promise.all(
    Array.from({ length: n }, () => follower(o.bare ? bareLines(h, conversation, stop.signal) : follow(conversation), sent)),
  );
  if (o.bare) {
    await conversation.waitUntilStopped({ timeoutMs: 600_000 });
    stop.abort();
  }
  const all = await following;
  const state = await conversation.state();
  if (state.status !== 'finished') console.warn(`warning: the latency conversation ended ${state.status}`);
  if (process.env.BENCH_LIVE_DEBUG) {
    const t0 = Math.min(...sent.words.values());
    const worst = all.flatMap((s, i) => s.wordAt.map(([at, ms]) => [i, at - t0, ms] as const)).sort((a, b) => b[2] - a[2]);
    console.log(
      'worst (follower, sent ms after the first word, latency ms):',
      worst
        .slice(0, 15)
        .map((w) => w.join('/'))
        .join(' '),
    );
  }
  const runs = await streamRuns(h, conversation.id);
  const wordMs = all.flatMap((s) => s.wordMs);
  const lineMs = all.flatMap((s) => s.lineMs);
  const complete = all.filter((s) => [...sent.words.keys()].every((w) => s.words.has(w)) && [...sent.lines].every((l) => s.lines.has(l)));
  const missing = all.map(
    (s) => sent.words.size - [...sent.words.keys()].filter((w) => s.words.has(w)).length + sent.lines.size - s.lines.size,
  );
  return {
    n,
    words: sent.words.size,
    lines: sent.lines.size,
    wordMs,
    lineMs,
    complete: complete.length,
    missing,
    duplicates: all.reduce((a, s) => a + s.duplicates, 0),
    streamRuns: runs.length,
    streamEvents: runs.reduce((a, r) => a + r.events, 0),
    steps,
  };
}

function describeLatency(what: string, r: Awaited<ReturnType<typeof latency>>): string {
  return (
    `${what}: reply words (${r.words} × ${r.n}) p50 ${fmt(pct(r.wordMs, 50), 0)} ms, p99 ${fmt(pct(r.wordMs, 99), 0)} ms; ` +
    `command output lines (${r.lines} × ${r.n}) p50 ${fmt(pct(r.lineMs, 50), 0)} ms, p99 ${fmt(pct(r.lineMs, 99), 0)} ms; ` +
    `${r.complete}/${r.n} followers saw every word and line${r.complete < r.n ? ` (missing: ${r.missing.join(', ')})` : ''}` +
    `${r.duplicates ? `, ${r.duplicates} lines twice` : ''}; stream workflow: ${r.streamEvents} history events over ${r.streamRuns} run(s), ${fmt(r.streamEvents / r.steps, 0)} a step`
  );
}

/**
 * One conversation of `steps` steps (a 100-word reply streamed a word every `chunkMs`, then a command
 * printing 200 lines) with one follower attached: per step, history and CPU and time.
 */
async function perStep(h: Harness, worker: WorkerProcess, steps: number) {
  const sent: Sent = { words: new Map(), lines: new Set() };
  const script = timedScript(sent, { steps, words: 100, chunkMs: chunkMs, lines: 0, lineGapS: 0 });
  // A command of its own a step: the same command again and again would be called stuck.
  const command = (n: number) => `seq -f 'line %g of the output of command ${n}, as a test run prints it' 200`;
  const withCommand: Script = async (req) => {
    const r = await script(req);
    return r.toolCalls ? { ...r, toolCalls: [{ name: 'terminal', arguments: { command: command(req.index) } }] } : r;
  };
  const cpu = () => ({ worker: cpuMs(worker.process.pid), server: cpuMs(h.server.process?.pid), client: selfCpuMs() });
  const c0 = cpu();
  const t0 = performance.now();
  const conversation = await start(h, withCommand);
  const seen = await follower(follow(conversation), sent);
  const ms = performance.now() - t0;
  const state = await conversation.state();
  if (state.status !== 'finished') console.warn(`warning: the per-step conversation ended ${state.status}`);
  const c1 = cpu();
  const own = await h.client.workflow.getHandle(conversation.id).describe();
  const runs = await streamRuns(h, conversation.id);
  const stream = { bytes: runs.reduce((a, r) => a + r.bytes, 0), events: runs.reduce((a, r) => a + r.events, 0), runs: runs.length };
  const per = (x: number) => x / steps;
  return {
    historyBytes: per(own.historySize ?? 0),
    historyEvents: per(own.historyLength ?? 0),
    streamBytes: per(stream.bytes),
    streamEvents: per(stream.events),
    streamRuns: stream.runs,
    liveLines: per(seen.liveLines),
    workerCpu: per(c1.worker - c0.worker),
    serverCpu: per(c1.server - c0.server),
    clientCpu: per(c1.client - c0.client),
    ms: ms / (steps + 1),
  };
}

const only = new Set((process.env.BENCH_LIVE_ONLY ?? 'latency,ten,tenbare,longkey,steps,plain').split(','));
const steps = Number(process.env.BENCH_LIVE_STEPS ?? 20);
/** The per-step reply's gap between words (default 20 ms: a 50-word/s model, ~2 s of streaming a step). */
const chunkMs = Number(process.env.BENCH_LIVE_CHUNK_MS ?? 20);
/** The order of the per-step runs (on and off alternate so that a drift of the machine's load falls on both). */
const modes = (process.env.BENCH_LIVE_MODES ?? 'on,off,off,on').split(',') as ('on' | 'off')[];
const h = await startHarness({ name: 'bench-live', script: () => ({ content: 'ok' }), record: false });
console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()}`,
);
const warm = async () => {
  // A first conversation on a fresh worker pays for loading and JIT; not counted.
  const sent: Sent = { words: new Map(), lines: new Set() };
  await follower(follow(await start(h, timedScript(sent, { steps: 2, words: 20, chunkMs: 1, lines: 5, lineGapS: 0 }))), sent);
};
try {
  let worker = await h.startWorker();
  await warm();
  if (only.has('latency')) console.log(describeLatency('delta latency, one follower', await latency(h, 1)));
  if (only.has('ten')) console.log(describeLatency('delta latency, ten followers on one conversation', await latency(h, 10)));
  if (only.has('tenbare'))
    console.log(
      describeLatency('delta latency, ten bare LiveReaders (no follow() loop) on one conversation', await latency(h, 10, { bare: true })),
    );
  if (only.has('longkey')) {
    await worker.kill();
    // OpenAI project keys run to ~164 characters: the buffer holds back 163 of each line for masking.
    worker = await h.startWorker({ LLM_API_KEY: `sk-proj-${'k'.repeat(156)}` });
    await warm();
    console.log(describeLatency('delta latency, one follower, a 164-character LLM_API_KEY', await latency(h, 1)));
  }
  if (only.has('steps') || only.has('plain')) {
    const rows: Record<'on' | 'off', Awaited<ReturnType<typeof perStep>>[]> = { on: [], off: [] };
    const plain: Record<'on' | 'off', number[]> = { on: [], off: [] };
    for (const mode of modes) {
      await worker.kill();
      worker = await h.startWorker(mode === 'off' ? { FAHEEM_LIVE: '0' } : {});
      await warm();
      if (only.has('steps')) rows[mode].push(await perStep(h, worker, steps));
      if (only.has('plain')) plain[mode].push(await durableStepMs(h, 30));
    }
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const col = (mode: 'on' | 'off', k: keyof Awaited<ReturnType<typeof perStep>>) => avg(rows[mode].map((r) => r[k]));
    const both = (k: keyof Awaited<ReturnType<typeof perStep>>, d = 0) =>
      `on ${fmt(col('on', k), d)} / off ${fmt(col('off', k), d)} (${fmt(col('on', k) / col('off', k), 2)}×) [on ${rows.on.map((r) => fmt(r[k], d)).join(', ')}; off ${rows.off.map((r) => fmt(r[k], d)).join(', ')}]`;
    if (only.has('steps')) {
      console.log(
        `per step (a 100-word reply streamed a word every ${chunkMs} ms + a command printing 200 lines), ${steps} steps, a follower attached, runs ${modes.join(', ')}:`,
      );
      console.log(`  conversation history bytes a step: ${both('historyBytes')}`);
      console.log(`  conversation history events a step: ${both('historyEvents', 1)}`);
      console.log(
        `  stream workflow (on): ${fmt(col('on', 'streamBytes'), 0)} B and ${fmt(col('on', 'streamEvents'), 1)} events a step (every run: ${rows.on.map((r) => r.streamRuns).join(', ')}), ${fmt(col('on', 'liveLines'), 1)} live lines a step`,
      );
      console.log(`  worker CPU ms a step (incl. its commands): ${both('workerCpu', 1)}`);
      if (h.server.process) console.log(`  server CPU ms a step: ${both('serverCpu', 1)}`);
      console.log(`  bench process CPU ms a step (follower + scripted model): ${both('clientCpu', 1)}`);
      console.log(`  wall ms a step: ${both('ms', 0)}`);
    }
    if (only.has('plain'))
      console.log(
        `time per step the bench/step.ts way (echo, no reply text, no follower), 30 steps: on ${fmt(avg(plain.on))} ms / off ${fmt(avg(plain.off))} ms [on ${plain.on.map((x) => fmt(x)).join(', ')}; off ${plain.off.map((x) => fmt(x)).join(', ')}]`,
      );
  }
  await worker.kill();
} finally {
  await h.close();
}
process.exit(0);
