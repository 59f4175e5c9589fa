// The `wait` tool: a durable timer. The worker may die while the conversation waits; a message or a
// resume ends a long wait early; the state says what it waits for.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

/** Waits as the first message says (`wait <seconds>`), then answers with what it observed. */
function waitScript(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  const last = messages[messages.length - 1];
  const tool = [...messages].reverse().find((m) => m.role === 'tool');
  const asked = /^wait (\d+)$/.exec(String(last?.content ?? ''));
  if (last?.role !== 'user' || !asked) return { content: `observed: ${String(tool?.content)}` };
  const seconds = Number(asked[1]);
  return { toolCalls: [{ name: 'wait', arguments: { seconds, reason: 'waiting for CI' } }] };
}

let h: Harness;
let worker: WorkerProcess;
before(async () => {
  h = await startHarness({ name: 'wait', script: waitScript });
  worker = await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'wait'] });

test('a wait of a few seconds survives its worker being killed and replaced', async () => {
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'wait 4',
    run: true,
  });
  const waiting = await waitFor('the wait to begin', async () => (await conversation.state()).waitingUntil);
  assert.equal(waiting.reason, 'waiting for CI');
  await worker.kill('SIGKILL');
  worker = await h.startWorker();
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.equal(final.status, 'finished');
  assert.match(final.finalMessage ?? '', /observed: Waited until .*the time has come/);
  assert.equal((await conversation.state()).waitingUntil, null);
});

test('a message ends a long wait early; the model then sees it', async () => {
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'wait 3600',
    run: true,
  });
  await waitFor('the wait to begin', async () => (await conversation.state()).waitingUntil);
  await conversation.sendMessage('CI is green, go on');
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.equal(final.status, 'finished');
  assert.match(final.finalMessage ?? '', /ended early after \d+ s: a message from the user arrived/);
  const last = h.model.requests[h.model.requests.length - 1];
  assert.ok(
    last?.body.messages.some((m) => m.role === 'user' && m.content === 'CI is green, go on'),
    'the message reached the model',
  );
});

test('resume ends a wait; pause ends it too and the conversation is paused', async () => {
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'wait 3600',
    run: true,
  });
  await waitFor('the wait to begin', async () => (await conversation.state()).waitingUntil);
  await conversation.pause();
  const paused = await conversation.waitUntil((s) => s.status === 'paused', 100, 30_000);
  assert.equal(paused.waitingUntil, null);
  const events = await conversation.events();
  const observation = events.find((e) => e.kind === 'observation' && e.tool === 'wait');
  assert.ok(observation && observation.kind === 'observation' && /the conversation was paused/.test(observation.content));

  const again = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'wait 3600',
    run: true,
  });
  await waitFor('the second wait to begin', async () => (await again.state()).waitingUntil);
  await again.resume();
  const final = await again.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.match(final.finalMessage ?? '', /the user resumed the conversation/);
});
