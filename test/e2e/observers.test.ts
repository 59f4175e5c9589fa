// Watching a conversation writes nothing to it, and the namespace's list holds conversations only:
// two followers attached for a whole run write no event into its history (as many updates and
// signals as the same run unobserved: they wait on change notices on the live stream); the
// stream workflows stay out of the default list; the summary carries the title and each model
// call's summary the worker's model. Real dev server, real worker process, scripted model.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM, TerminalTool } from '../../src/client.js';
import { LIVE_DIVISION, liveStreamId } from '../../src/live/stream-id.js';
import type { LiveDelta } from '../../src/live/types.js';
import type { Script } from '../../src/testing/scripted-model.js';
import type { ConversationEvent } from '../../src/types.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'observers', script: () => ({ content: 'ok' }) });
  await h.startWorker();
});
after(async () => h?.close());

const STEPS = 4;
/** Four steps of one command each, then a reply; the same prompt gives the same reply. */
const script: Script = (req) => {
  const done = req.body.messages.filter((m) => m.role === 'tool').length;
  return done < STEPS
    ? {
        content: `Step ${done + 1} of ${STEPS}.`,
        wordByWord: true,
        toolCalls: [{ name: 'terminal', arguments: { command: `echo step-${done + 1}` } }],
      }
    : { content: 'All four steps are done.', wordByWord: true };
};

/** The conversation's agent: no model named, so the worker's LLM_MODEL answers. */
const agent = () => new Agent({ llm: new LLM({}), tools: [TerminalTool] });

/** Starts a conversation that waits (idle) for `run`. */
async function idleConversation(message: string): Promise<Conversation> {
  return Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: message });
}

/** Runs it to the end, watched by nobody: only queries, which write no history. */
async function runUnobserved(conversation: Conversation): Promise<void> {
  await conversation.resume();
  await waitFor('the run to finish', async () => (await conversation.state()).status === 'finished', 120_000, 100);
}

/**
 * The history's events by type. An observer could write a conversation's history only through an
 * update, a signal or a cancellation request: those are `written`. The rest (workflow tasks, timers,
 * activities) follow the run and the machine's pace: a busy server batches less, so two runs of the
 * same script may differ there by a few events whoever watches.
 */
async function historyLength(id: string): Promise<{ written: number; all: number; types: Record<string, number> }> {
  const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const types: Record<string, number> = {};
  let written = 0;
  for (const e of events) {
    const type = Object.keys(e).find((k) => k.endsWith('EventAttributes') && e[k as keyof typeof e]) ?? 'unknown';
    types[type] = (types[type] ?? 0) + 1;
    if (/^workflowExecution(Update|Signaled|CancelRequested)/.test(type)) written++;
  }
  return { written, all: events.length, types };
}

test('two followers attached for a whole run add no event to its history', async (t) => {
  h.model.setScript(script);
  const alone = await idleConversation('Run four steps');
  await runUnobserved(alone);
  const unobserved = await historyLength(alone.id);

  const watched = await idleConversation('Run four steps');
  const finished = (s: { status: string }) => s.status === 'finished';
  const live: (ConversationEvent | LiveDelta)[] = [];
  const plain: ConversationEvent[] = [];
  const followers = [
    (async () => {
      for await (const item of watched.follow({ live: true, until: finished })) live.push(item);
    })(),
    (async () => {
      for await (const item of watched.follow({ until: finished })) plain.push(item);
    })(),
  ];
  // Both attached before the run: the live follower's stream runs (it started it).
  await waitFor('the live stream to run', () =>
    h.client.workflow
      .getHandle(liveStreamId(watched.id))
      .describe()
      .then(
        (d) => d.status.name === 'RUNNING',
        () => false,
      ),
  );
  await watched.resume();
  await Promise.all(followers);

  const events = await watched.events();
  assert.deepEqual(plain, events, 'the plain follower saw every event');
  assert.deepEqual(
    live.filter((x) => !('live' in x)),
    events,
    'the live follower saw every event',
  );
  // (Its live lines are live.test.ts's subject: these replies come whole at once.)
  t.diagnostic(`live lines seen: ${live.filter((x) => 'live' in x).length}`);
  const observed = await historyLength(watched.id);
  t.diagnostic(`history events: watched ${observed.all}, unwatched ${unobserved.all}`);
  assert.equal(
    observed.written,
    unobserved.written,
    `events a client writes (updates, signals): watched ${observed.written}, unwatched ${unobserved.written}\n` +
      `watched ${JSON.stringify(observed.types)}\nunwatched ${JSON.stringify(unobserved.types)}`,
  );
  // Nothing of the followers' in it: the only update is the run that started it.
  const history = await h.client.workflow.getHandle(watched.id).fetchHistory();
  const updates = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
  assert.deepEqual(
    updates.map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name),
    ['run'],
  );
});

test('the namespace lists conversations only: the live streams are in a division of their own', async () => {
  h.model.setScript(script);
  const ids: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const conversation = await idleConversation(`Listed conversation ${i}`);
    ids.push(conversation.id);
    await conversation.resume();
    // Followed to the end, so each has its stream workflow.
    for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) void item;
    const stream = await h.client.workflow.getHandle(liveStreamId(conversation.id)).describe();
    assert.equal(stream.type, 'liveStream');
  }
  const listed = async (query?: string) => {
    const rows: { id: string; type: string }[] = [];
    for await (const w of h.client.workflow.list(query ? { query } : {})) rows.push({ id: w.workflowId, type: w.type });
    return rows;
  };
  // The default list (the Web UI's, `temporal workflow list`): conversations, no stream.
  await waitFor('the conversations to be listed', async () => {
    const rows = await listed();
    return ids.every((id) => rows.some((r) => r.id === id));
  });
  const rows = await listed();
  assert.deepEqual(
    rows.filter((r) => r.type !== 'conversation'),
    [],
    'only conversations in the default list',
  );
  assert.equal((await h.client.workflow.count()).count, rows.length);
  // The streams are there for whoever names their division.
  const streams = await listed(`TemporalNamespaceDivision = '${LIVE_DIVISION}'`);
  for (const id of ids)
    assert.ok(
      streams.some((r) => r.id === liveStreamId(id)),
      `${id}'s stream is in the division`,
    );
});

test("the Web UI's summaries: the title on the conversation, the worker's model on each model call", async () => {
  h.model.setScript(script);
  const conversation = await idleConversation('Count to four with echo\nthen say done');
  await runUnobserved(conversation);
  const handle = h.client.workflow.getHandle(conversation.id);
  const description = await handle.describe();
  assert.equal(await description.staticSummary(), 'Count to four with echo then say done');
  const history = await handle.fetchHistory();
  const summaries = await Promise.all(
    (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      .map(async (e) => String(await h.client.options.loadedDataConverter.payloadConverter.fromPayload(e.userMetadata!.summary!))),
  );
  // The conversation names no model: the worker's (the harness's LLM_MODEL) is the one shown.
  assert.deepEqual(
    summaries,
    Array.from({ length: STEPS + 1 }, (_, i) => `LLM openai/gpt-4o-mini · step ${i + 1}`),
  );
});
