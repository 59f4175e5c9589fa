// Conversations of any length: continue-as-new carries everything, loses no signal, and keeps
// each run's history small even with large observations.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { samePromptSameReply, type Script } from '../../src/testing/scripted-model.js';
import type { ObservationEvent } from '../../src/types.js';
import { messageSignal } from '../../src/workflows/messages.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'long', script: () => ({ content: 'ok' }), record: false });
  await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

async function runs(id: string): Promise<{ runId: string; historyLength: number; historySize: number }[]> {
  const out = [];
  for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    const d = await h.client.workflow.getHandle(id, wf.runId).describe();
    out.push({ runId: wf.runId, historyLength: d.historyLength, historySize: d.historySize ?? 0 });
  }
  return out;
}

test('100 messages signalled while the conversation continues as new: each recorded exactly once', async () => {
  const script: Script = (req) => {
    const users = req.body.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
    const steps = req.body.messages.filter((m) => m.role === 'tool').length;
    if (users.includes('msg-99') && steps >= 12) return { content: 'All messages received.' };
    return { delayMs: 10, toolCalls: [{ name: 'think', arguments: { thought: `step ${steps}: seen ${users.length}` } }] };
  };
  h.model.setScript(script);
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Wait for msg-99',
    run: true,
    continueAsNewEverySteps: 3,
  });
  const handle = h.client.workflow.getHandle(conversation.id);
  await waitFor('a first continue-as-new', async () => (await runs(conversation.id)).length >= 2, 60_000);
  for (let i = 0; i < 100; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => handle.signal(messageSignal, `msg-${i + j}`)));
  }
  const final = await conversation
    .waitUntil((s) => s.status === 'finished', 100, 120_000)
    .catch(async (err: Error) => {
      // What the conversation was doing when it did not finish: its state and its last events.
      const s = await conversation.state().catch(() => undefined);
      const last = await conversation.events().then(
        (e) => e.slice(-5),
        () => [],
      );
      throw new Error(
        `${err.message}: status ${s?.status}, ${s?.lastError ?? 'no error'}; last events ${JSON.stringify(last).slice(0, 2000)}`,
      );
    });
  const events = await conversation.events();
  const texts = events.filter((e) => e.kind === 'message' && e.source === 'user').map((e) => (e as { text: string }).text);
  for (let i = 0; i < 100; i++) assert.equal(texts.filter((t) => t === `msg-${i}`).length, 1, `msg-${i} recorded once`);
  events.forEach((e, i) => assert.equal(e.index, i));
  const chain = await runs(conversation.id);
  assert.ok(chain.length >= 3, `continued as new ${chain.length - 1} times`);
  assert.equal(final.metrics.llmCalls, events.filter((e) => e.kind === 'action').length + 1);
});

// Three runs of 25 steps (continue-as-new every 25 instead of the default 100: the same code path,
// a quarter of the steps). Each run's history grows with its steps, not with the conversation: a
// run that carried every earlier observation again (quadratic) would pass 6 MB in 25 steps, against the 4 MB bound.
test('75 steps with 20 KB observations over three runs: every event readable, history per run small and flat', async () => {
  const STEPS = 75;
  const EVERY = 25;
  const script: Script = (req) => {
    const done = req.body.messages.filter((m) => m.role === 'tool').length;
    if (done >= STEPS) return { content: 'Finished all steps.' };
    return { toolCalls: [{ name: 'terminal', arguments: { command: `printf 'step-${done}:'; head -c 20000 /dev/zero | tr '\\0' 'x'` } }] };
  };
  h.model.setScript(script);
  const started = Date.now();
  // The script counts the results in its prompt, so the condenser (which would shorten it) is off.
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Go',
    run: true,
    condenser: false,
    continueAsNewEverySteps: EVERY,
  });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 250, 900_000);
  const seconds = (Date.now() - started) / 1000;
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const events = await conversation.events();
  const observations = events.filter((e): e is ObservationEvent => e.kind === 'observation');
  assert.equal(observations.length, STEPS);
  observations.forEach((o, i) => {
    assert.ok(o.content.startsWith(`step-${i}:`), `observation ${i} intact`);
    assert.ok(o.content.length > 20_000);
  });
  const chain = await runs(conversation.id);
  assert.ok(chain.length >= 3, `continued as new ${chain.length - 1} times`);
  for (const run of chain) {
    assert.ok(run.historyLength < 50 * EVERY, `run ${run.runId} has ${run.historyLength} events`);
    assert.ok(run.historySize < 4 * 1024 * 1024, `run ${run.runId} history is ${run.historySize} bytes`);
  }
  console.log(
    `# ${STEPS} steps in ${seconds.toFixed(1)} s; runs: ${chain.map((r) => `${r.historyLength} events/${(r.historySize / 1024).toFixed(0)} KiB`).join(', ')}`,
  );
});

test('a condensed conversation carries only what the model needs; every event stays readable, in order', async () => {
  const STEPS = 60;
  let steps = 0;
  const script: Script = (req) => {
    const system = String(req.body.messages[0]?.content ?? '');
    if (system.startsWith('You condense')) return { content: `summary of the work so far (${steps} steps)` };
    if (steps >= STEPS) return { content: 'Finished.' };
    steps++;
    return { toolCalls: [{ name: 'think', arguments: { thought: `step ${steps}` } }] };
  };
  // Counted here: a prompt asked again (a retried call) gets the same step, not the next one.
  h.model.setScript(samePromptSameReply(script));
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Think sixty times',
    run: true,
    continueAsNewEverySteps: 10,
    condenser: { maxEvents: 20, maxPromptTokens: 1_000_000_000, keepFirst: 2 },
  });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 300_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');

  // Every event, from the start, with stable indices: earlier runs answer for what the last one dropped.
  const events = await conversation.events();
  assert.equal(events.length, final.events);
  events.forEach((e, i) => assert.equal(e.index, i));
  const thoughts = events.filter((e) => e.kind === 'action').map((e) => (e as { arguments: { thought: string } }).arguments.thought);
  assert.deepEqual(
    thoughts,
    Array.from({ length: STEPS }, (_, i) => `step ${i + 1}`),
  );
  assert.ok(events.filter((e) => e.kind === 'condensation').length >= 3, 'condensed several times');

  // The last run started from a bounded part of the log, not all of it.
  const chain = await runs(conversation.id);
  assert.ok(chain.length >= 5, `continued as new ${chain.length - 1} times`);
  const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
  const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const carried = (h.client.options.loadedDataConverter.payloadConverter.fromPayload(input!) as { carried: { events: unknown[] } }).carried;
  assert.ok(carried.events.length < 60, `the last run carried ${carried.events.length} of ${final.events} events`);
  console.log(`# ${final.events} events over ${chain.length} runs; the last run carried ${carried.events.length}`);
});
