// Fair shares of scarce model calls (figures, not asserts): `npm run bench:fairness`. One worker
// with `--max-model-calls 1`, a scripted model that takes BENCH_FAIRNESS_MODEL_MS (default 250) a
// call; a large tenant starts BENCH_FAIRNESS_BACKLOG (default 20) conversations of one model call
// each, and once every one of their calls waits on the task queue (or has reached the model), a
// small tenant starts one. The figure: how long the small tenant's first call waits (its start →
// its request reaching the model server), with the server's task-queue fairness on and off (a
// dev server of its own each: `matching.enableFairness`), same model and worker settings.
import { Conversation, Agent, LLM } from '../src/client/client.js';
import type { RecordedRequest } from '../src/testing/scripted-model.js';
import { startHarness, type Harness } from '../test/support/harness.js';
import { maxInFlight } from '../test/support/in-flight.js';

const MODEL_MS = Number(process.env.BENCH_FAIRNESS_MODEL_MS ?? 250);
const BACKLOG = Number(process.env.BENCH_FAIRNESS_BACKLOG ?? 20);
const ROUNDS = Number(process.env.BENCH_FAIRNESS_ROUNDS ?? 1);

/** The conversation's first message names its tenant and number: the model server's requests say whose they are. */
const firstMessage = (tenant: string, n: number) => `${tenant} ${n}: say done`;
const whose = (r: RecordedRequest) => String(r.body.messages.find((m) => m.role === 'user')?.content ?? '').split(' ')[0] ?? '';

/** What one side (fairness on or off) measured. */
export interface FairnessSide {
  fairness: boolean;
  /** ms from the small tenant's start to its first request at the model server. */
  smallWaitMs: number;
  /** Of which on the task queue: from its call's ActivityTaskScheduled event to the request (the rest is its start and setup). */
  smallQueuedMs: number;
  /** The large tenant's calls answered before the small tenant's first call reached the model. */
  largeCallsBefore: number;
  /** The large tenant's calls made in all (each conversation makes one), and how many finished. */
  largeCalls: number;
  largeFinished: number;
  /** The most requests the model server had in flight at once (the cap holds: 1). */
  maxInFlight: number;
  seconds: number;
}

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

/** Whether a conversation's model call is waiting on the task queue (scheduled, not yet started). */
async function callWaiting(h: Harness, id: string): Promise<boolean> {
  const d = await h.client.workflow.getHandle(id).describe();
  return (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'callModel');
}

/** When the conversation's first model call was scheduled (ms since the epoch), from its history. */
async function scheduledAt(h: Harness, id: string): Promise<number> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const event = history.events?.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel');
  const t = event?.eventTime;
  if (!t) throw new Error(`no callModel was scheduled in ${id}`);
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

async function side(fairness: boolean): Promise<FairnessSide> {
  const h = await startHarness({
    name: `bench-fairness-${fairness ? 'on' : 'off'}`,
    script: () => ({ content: 'done', delayMs: MODEL_MS }),
    record: false,
    ...(fairness ? {} : { fairness: false }),
  });
  try {
    await h.startWorker({}, ['--max-model-calls', '1', '--sandbox', 'none']);
    // One unmeasured conversation first: the worker's first workflow task and model call are warm.
    const warm = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: 'warm', run: true });
    await warm.waitUntilStopped({ timeoutMs: 120_000 });
    h.model.requests.length = 0;
    const t0 = performance.now();
    const workspace = await h.workspace();
    const large = await Promise.all(
      Array.from({ length: BACKLOG }, (_, i) =>
        Conversation.create(h.client, {
          agent: agent(),
          workspace,
          firstMessage: firstMessage('large', i),
          run: true,
          tenant: 'large',
          checkpoints: false,
        }),
      ),
    );
    // The backlog is there when every large conversation's call is waiting or has reached the model.
    for (;;) {
      const reached = new Set(h.model.requests.map((r) => String(r.body.messages.find((m) => m.role === 'user')?.content)));
      const waiting = await Promise.all(large.map(async (c, i) => reached.has(firstMessage('large', i)) || (await callWaiting(h, c.id))));
      if (waiting.every(Boolean)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const startedAt = Date.now();
    const small = await Conversation.create(h.client, {
      agent: agent(),
      workspace,
      firstMessage: firstMessage('small', 0),
      run: true,
      tenant: 'small',
      checkpoints: false,
    });
    await small.waitUntilStopped({ timeoutMs: 300_000 });
    const finals = await Promise.all(large.map((c) => c.waitUntilStopped({ timeoutMs: 300_000 })));
    const seconds = (performance.now() - t0) / 1000;
    const requests = [...h.model.requests];
    const smallFirst = requests.find((r) => whose(r) === 'small');
    if (!smallFirst) throw new Error('the small tenant never reached the model');
    const largeRequests = requests.filter((r) => whose(r) === 'large');
    const scheduled = await scheduledAt(h, small.id);
    return {
      fairness,
      smallWaitMs: smallFirst.startedAt - startedAt,
      smallQueuedMs: smallFirst.startedAt - scheduled,
      largeCallsBefore: largeRequests.filter((r) => r.startedAt < smallFirst.startedAt).length,
      largeCalls: largeRequests.length,
      largeFinished: finals.filter((s) => s.status === 'finished').length,
      maxInFlight: maxInFlight(requests),
      seconds,
    };
  } finally {
    await h.close();
  }
}

export function describeSides(on: FairnessSide, off: FairnessSide): string {
  const row = (s: FairnessSide) =>
    `fairness ${s.fairness ? 'on ' : 'off'}: small tenant's first call waited ${s.smallWaitMs} ms (${s.smallQueuedMs} ms of it on the task queue), behind ${s.largeCallsBefore} of the large tenant's calls`;
  const sanity = (s: FairnessSide) =>
    `  fairness ${s.fairness ? 'on ' : 'off'}: large tenant ${s.largeCalls} calls made, ${s.largeFinished}/${BACKLOG} finished; at most ${s.maxInFlight} call in flight at the model; ${s.seconds.toFixed(1)} s`;
  return [
    `one worker, --max-model-calls 1, ${MODEL_MS} ms a model call; large tenant: ${BACKLOG} conversations waiting, then small tenant: 1`,
    row(on),
    row(off),
    `ratio off/on: ${(off.smallWaitMs / Math.max(1, on.smallWaitMs)).toFixed(1)}×`,
    'sanity:',
    sanity(on),
    sanity(off),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (let round = 0; round < ROUNDS; round++) {
    const on = await side(true);
    const off = await side(false);
    console.log(describeSides(on, off));
  }
}
