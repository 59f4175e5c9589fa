// Benchmarks (figures, not asserts): `npm run bench`. One run on the embedded dev server with the
// scripted model prints pause-acknowledge latency (alone and with 50 other conversations running),
// model-abort latency, time per step against the same loop without Temporal and Temporal's floor,
// history bytes per step, worker start time, recovery after a worker kill, many conversations at once
// against the floor, and one long conversation with bulky observations. `npm run bench:peers` adds
// the LangGraph JS peer.
import os from 'node:os';
import { Conversation } from '../src/client/client.js';
import type { RecordedRequest, Script } from '../src/testing/scripted-model.js';
import { runTerminal, commandBaseEnv } from '../src/tools/terminal.js';
import { buildMessages } from '../src/conversation/workflow/prompt.js';
import { pauseSignal } from '../src/conversation/workflow/messages.js';
import OpenAI from 'openai';
import { freePort, startHarness, waitFor, type Harness } from '../test/support/harness.js';
import type { ConversationEvent } from '../src/core/types.js';
import { concurrency, describeConcurrency } from './concurrency.js';
import { floorPerStep } from './floor/floor.js';
import { describeLong, longConversation } from './long.js';
import { benchAgent, durableStepMs, pct, benchOptions } from './step.js';
import { eventMs } from './history-gaps.js';

const fmt = (n: number) => n.toFixed(1);

/** Pauses a conversation in a model call `rounds` times; `others` conversations work meanwhile (model calls of `othersModelMs`). */
async function pauseLatency(h: Harness, rounds: number, others = 0, othersModelMs = 3000) {
  const firstUser = (r: RecordedRequest) => r.body.messages.find((m) => m.role === 'user')?.content;
  h.model.setScript((req) => {
    if (firstUser(req) !== 'background') return { delayMs: 60_000, content: 'never' };
    // Model calls vary (±50 %), as a real model's do: the others do not all wake at once.
    return {
      delayMs: Math.round(othersModelMs * (0.5 + Math.random())),
      toolCalls: [{ name: 'terminal', arguments: { command: 'true' } }],
    };
  });
  const background = await Promise.all(
    Array.from({ length: others }, async () =>
      Conversation.create(h.client, {
        ...benchOptions(),
        agent: benchAgent(),
        workspace: await h.workspace(),
        firstMessage: 'background',
        run: true,
        maxIterations: 100_000,
      }),
    ),
  );
  // The others start together (each a setup and a first checkpoint of a new workspace); the pauses
  // are timed once each has taken a step, so the figure is of conversations at work, not starting.
  const toolResults = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === 'tool').length;
  if (others > 0) {
    await waitFor(
      `each of the ${others} others has taken a step`,
      () => h.model.requests.filter((r) => firstUser(r) === 'background' && toolResults(r) === 1).length >= others,
      300_000,
      50,
    );
  }
  const conversation = await Conversation.create(h.client, {
    ...benchOptions(),
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: 'wait',
    run: true,
  });
  const handle = h.client.workflow.getHandle(conversation.id);
  const ack: number[] = [];
  const abort: number[] = [];
  const sentAt: number[] = [];
  // The paused conversation's own model calls (the others' requests come in between).
  const mine: RecordedRequest[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i > 0) await conversation.resume();
    const request = await waitFor(
      'a model call in flight',
      () => {
        for (const r of h.model.requests) if (firstUser(r) === 'wait' && !mine.includes(r)) mine.push(r);
        const last = mine[mine.length - 1];
        return mine.length > i && last?.endedAt === undefined && last;
      },
      30_000,
      5,
    );
    const t0 = performance.now();
    const wall0 = Date.now();
    await handle.signal(pauseSignal, {});
    for (;;) {
      const s = await conversation.state();
      if (s.status === 'paused') break;
    }
    ack.push(performance.now() - t0);
    await waitFor('the model request aborted', () => request.endedAt !== undefined, 30_000, 2);
    abort.push(request.endedAt! - wall0);
    sentAt.push(wall0);
    h.model.requests.length = 0; // mine keeps ours
  }
  const parts = await pauseParts(h, conversation.id, sentAt, ack);
  await conversation.close();
  // Closed, each workflow completes; wait for that (a state query on a completed workflow replays it).
  await Promise.all(background.map((c) => c.close()));
  await Promise.all(
    background.map((c) =>
      h.client.workflow
        .getHandle(c.id)
        .result()
        .catch(() => undefined),
    ),
  );
  return { ack, abort, parts };
}

/**
 * Where each pause's time went, from the paused conversation's history (the same clock as this
 * process): sent → recorded by the server, recorded → the workflow task that delivers it started,
 * that task's run, and the rest (the query that saw `paused`: to the server, to the worker, back).
 */
async function pauseParts(h: Harness, id: string, sentAt: number[], ack: number[]) {
  const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const parts = { toServer: [] as number[], toTask: [] as number[], task: [] as number[], query: [] as number[] };
  let round = 0;
  for (let i = 0; i < events.length && round < sentAt.length; i++) {
    const e = events[i]!;
    if (e.workflowExecutionSignaledEventAttributes?.signalName !== pauseSignal.name) continue;
    const recorded = eventMs(e.eventTime);
    const started = events.slice(i + 1).find((x) => x.workflowTaskStartedEventAttributes);
    const completed = events.slice(i + 1).find((x) => x.workflowTaskCompletedEventAttributes);
    if (!started || !completed) break;
    const done = eventMs(completed.eventTime);
    parts.toServer.push(recorded - sentAt[round]!);
    parts.toTask.push(eventMs(started.eventTime) - recorded);
    parts.task.push(done - eventMs(started.eventTime));
    parts.query.push(sentAt[round]! + ack[round]! - done);
    round++;
  }
  return parts;
}

/** p50 / p99 / max of each part of a pause, and the parts of the slowest pause. */
function describeParts(parts: Awaited<ReturnType<typeof pauseParts>>, ack: number[]): string {
  const names = { toServer: 'signal to server', toTask: 'to its workflow task', task: 'the task', query: 'the query' } as const;
  const each = (Object.keys(names) as (keyof typeof names)[])
    .map((k) => `${names[k]} p50 ${fmt(pct(parts[k], 50))} / p99 ${fmt(pct(parts[k], 99))}`)
    .join('; ');
  // The rounds from slowest down: a tail made only of the first rounds is warm-up, not load.
  const ranked = ack.map((ms, round) => ({ ms, round })).sort((a, b) => b.ms - a.ms);
  const worst = ranked[0]?.round ?? -1;
  const slowest = (Object.keys(names) as (keyof typeof names)[]).map((k) => `${names[k]} ${fmt(parts[k][worst] ?? NaN)}`).join(', ');
  const slowestRounds = ranked
    .slice(0, 3)
    .map(({ ms, round }) => `round ${round + 1}: ${fmt(ms)} ms`)
    .join(', ');
  return `  where it went (ms): ${each}\n  the slowest pause (${fmt(ack[worst] ?? NaN)} ms): ${slowest}\n  the three slowest: ${slowestRounds}`;
}

async function stepTime(h: Harness, steps: number) {
  const durable = await durableStepMs(h, steps);

  // The same loop in-process: same scripted model over HTTP, same terminal tool, no Temporal.
  const workspace = await h.workspace();
  const client = new OpenAI({ apiKey: 'x', baseURL: h.model.baseUrl, maxRetries: 0 });
  const events: ConversationEvent[] = [{ index: 0, timestamp: '', source: 'user', kind: 'message', text: 'go' }];
  let terminal = { cwd: workspace, env: {} };
  const t1 = performance.now();
  for (let i = 0; ; i++) {
    const r = await client.chat.completions.create({ model: 'm', messages: buildMessages(events, 'system') as never });
    const call = r.choices[0]?.message.tool_calls?.[0];
    if (!call || call.type !== 'function') break;
    events.push({
      index: events.length,
      timestamp: '',
      source: 'agent',
      kind: 'action',
      tool: 'terminal',
      toolCallId: call.id,
      arguments: JSON.parse(call.function.arguments),
      replyId: r.id,
    });
    const res = await runTerminal(JSON.parse(call.function.arguments), terminal, { workspace, baseEnv: commandBaseEnv(process.env) });
    terminal = res.terminal;
    events.push({
      index: events.length,
      timestamp: '',
      source: 'environment',
      kind: 'observation',
      tool: 'terminal',
      toolCallId: call.id,
      content: res.content,
      isError: false,
    });
  }
  const inProcess = (performance.now() - t1) / (steps + 1);
  return { durable, inProcess };
}

async function historyGrowth(h: Harness) {
  const script: Script = (req) =>
    req.body.messages.filter((m) => m.role === 'tool').length >= 200
      ? { content: 'done' }
      : {
          toolCalls: [
            { name: 'terminal', arguments: { command: `echo ${req.body.messages.length}; head -c 2000 /dev/zero | tr "\\0" y` } },
          ],
        };
  h.model.setScript(script);
  h.model.requests.length = 0;
  const conversation = await Conversation.create(h.client, {
    ...benchOptions(),
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    run: true,
    continueAsNewEverySteps: 10_000,
    condenser: false,
  });
  const handle = h.client.workflow.getHandle(conversation.id);
  // Counted at the model (no query or update on the conversation, which would add to its history).
  const sizeAt = async (steps: number) => {
    await waitFor(`model call ${steps}`, () => h.model.requests.length >= steps, 600_000, 5);
    return (await handle.describe()).historySize ?? 0;
  };
  const s10 = await sizeAt(10);
  const s20 = await sizeAt(20);
  const s190 = await sizeAt(190);
  const s200 = await sizeAt(200);
  await conversation.waitUntilStopped({ timeoutMs: 600_000 });
  return { at20: (s20 - s10) / 10, at200: (s200 - s190) / 10 };
}

// Model calls longer than a few heartbeats (BENCH_RECOVERY_MODEL_MS=3000) show whether a heartbeat
// timeout loses calls to a busy machine; 400 ms calls end before their first throttled beat.
const RECOVERY_MODEL_MS = Number(process.env.BENCH_RECOVERY_MODEL_MS ?? 400);

async function recovery(h: Harness, rounds: number) {
  const fromSpawn: number[] = [];
  const fromReady: number[] = [];
  h.model.setScript((req) =>
    req.body.messages.filter((m) => m.role === 'tool').length >= 1000
      ? { content: 'done' }
      : { delayMs: RECOVERY_MODEL_MS, toolCalls: [{ name: 'terminal', arguments: { command: `true ${req.body.messages.length}` } }] },
  );
  let worker = await h.startWorker();
  const conversation = await Conversation.create(h.client, {
    ...benchOptions(),
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    run: true,
  });
  for (let i = 0; i < rounds; i++) {
    await waitFor('a model call in flight', () => h.model.requests.some((r) => r.endedAt === undefined), 30_000, 5);
    await worker.kill('SIGKILL');
    const before = h.model.requests.length;
    const spawned = Date.now();
    worker = await h.startWorker();
    const ready = Date.now();
    await waitFor('the model call made again', () => h.model.requests.length > before, 60_000, 5);
    fromSpawn.push(h.model.requests[before]!.startedAt - spawned);
    fromReady.push(h.model.requests[before]!.startedAt - ready);
    // Kill during a later call: killing the same call again measures its growing retry backoff.
    await waitFor('a later model call', () => h.model.requests.length > before + 1, 60_000, 5);
  }
  // Then 40 more steps with the worker alive: a call it lost now was lost to the busy machine.
  const settled = h.model.requests.length;
  await waitFor('40 more model calls', () => h.model.requests.length >= settled + 40, 300_000 + 40 * RECOVERY_MODEL_MS, 20);
  await conversation.close();
  await worker.kill();
  // Attempts beyond the first (history keeps each activity's last attempt): the killed calls', and
  // any a slow heartbeat cost.
  const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
  const retried = (history.events ?? []).reduce((n, e) => n + Math.max(0, (e.activityTaskStartedEventAttributes?.attempt ?? 1) - 1), 0);
  return { fromSpawn, fromReady, retried, steps: h.model.requests.length };
}

/**
 * The worker's heartbeat RPCs and model calls so far, from its Prometheus text (Temporal's client
 * counter `request` by operation, and ours): what a second of model call costs the server.
 */
async function heartbeatCounts(port: number): Promise<{ heartbeats: number; modelCalls: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = (re: RegExp) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  return {
    heartbeats: sum(/^temporal_request(?:_total)?\{[^}]*operation="RecordActivityTaskHeartbeat"[^}]*\}\s+(\d+)/gm),
    modelCalls: sum(/^faheem_model_calls_total(?:\{[^}]*\})?\s+(\d+)/gm),
  };
}

// BENCH_WORKER_COMMANDS=off: a server without worker commands (pauses reach calls through heartbeats).
const h = await startHarness({
  name: 'bench',
  script: () => ({ content: 'ok' }),
  record: false,
  ...(process.env.BENCH_WORKER_COMMANDS === 'off' ? { workerCommands: false as const } : {}),
});
const metricsPort = await freePort();
const spawnedAt = performance.now();
const first = await h.startWorker({ FAHEEM_METRICS_PORT: String(metricsPort) });
const workerStart = performance.now() - spawnedAt;
console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()}`,
);

// BENCH_ONLY=pause,step,history,many,long,recovery runs some parts (default: all); BENCH_WORKER_COMMANDS=off
// runs on a server without worker commands (above).
const only = new Set((process.env.BENCH_ONLY ?? 'pause,step,history,many,long,recovery').split(','));
console.log(`worker start (process spawned → polling, its banner): ${fmt(workerStart)} ms`);

if (only.has('pause')) {
  const { ack, abort } = await pauseLatency(h, 40);
  console.log(
    `pause acknowledged (signal sent → query sees "paused"), 40 pauses: p50 ${fmt(pct(ack, 50))} ms, p99 ${fmt(pct(ack, 99))} ms`,
  );
  console.log(`model request aborted (signal sent → HTTP connection closed): p50 ${fmt(pct(abort, 50))} ms, p99 ${fmt(pct(abort, 99))} ms`);
  for (const modelMs of [3000, 100]) {
    const before = await heartbeatCounts(metricsPort);
    const busy = await pauseLatency(h, 40, 50, modelMs);
    const after = await heartbeatCounts(metricsPort);
    const calls = after.modelCalls - before.modelCalls;
    const beats = after.heartbeats - before.heartbeats;
    // The others' calls last modelMs on average (0.5–1.5 ×); the 40 held calls are a few more seconds.
    console.log(
      `heartbeat RPCs to the server (${modelMs} ms model calls, 50 others): ${beats} for ${calls} model calls, ` +
        `${fmt(beats / Math.max(1, calls))} a call, ~${fmt(beats / Math.max(1, calls) / (modelMs / 1000))} a second of model call`,
    );
    console.log(
      `pause acknowledged while 50 other conversations work, each past its first step (${modelMs} ms model calls${modelMs < 1000 ? ', more steps than one worker can carry' : ''}), 40 pauses: ` +
        `p50 ${fmt(pct(busy.ack, 50))} ms, p99 ${fmt(pct(busy.ack, 99))} ms; model request aborted p99 ${fmt(pct(busy.abort, 99))} ms`,
    );
    console.log(describeParts(busy.parts, busy.ack));
  }
}

if (only.has('step')) {
  const steps = await stepTime(h, 50);
  console.log(
    `time per step (model call + terminal command), 50 steps: durable ${fmt(steps.durable)} ms, in-process ${fmt(steps.inProcess)} ms, price of durability ${fmt(steps.durable - steps.inProcess)} ms/step`,
  );
  const floor = await floorPerStep(h.server.address, 50);
  console.log(`Temporal's floor on this server (a workflow of two no-op activities per step, 50 steps): ${fmt(floor)} ms/step`);
}

if (only.has('history')) {
  const growth = await historyGrowth(h);
  console.log(
    `history bytes per step (2 KB observations): around step 20 ${growth.at20.toFixed(0)} B, around step 200 ${growth.at200.toFixed(0)} B`,
  );
}

if (only.has('many')) for (const n of [10, 50, 200]) console.log(describeConcurrency(await concurrency(h, first.process.pid, n)));
if (only.has('long')) console.log(describeLong(await longConversation(h, first.process.pid, 1000)));

await first.kill();
if (only.has('recovery')) {
  const rec = await recovery(h, 5);
  console.log(
    `recovery: ${rec.retried} activity attempts made again in ${rec.steps} model calls of ${RECOVERY_MODEL_MS} ms with 5 kills (more than 5: calls lost to a slow heartbeat)`,
  );
  console.log(
    `recovery after SIGKILL of the worker during a model call, 5 kills: next model call ${fmt(pct(rec.fromSpawn, 50))} ms (p50) / ${fmt(Math.max(...rec.fromSpawn))} ms (max) after the new worker was spawned, ${fmt(pct(rec.fromReady, 50))} ms (p50) after it was ready`,
  );
}

await h.close();
process.exit(0);
