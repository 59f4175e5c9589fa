// Conversation semantics against a real server and worker: model failures, limits, messages while
// running, a hostile model, pause --now, close.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { retryAfterMs } from '../../src/llm/client.js';
import { samePromptSameReply, type Script } from '../../src/testing/scripted-model.js';
import type { ObservationEvent } from '../../src/types.js';
import { FAKE_KEY, startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'conversation', script: () => ({ content: 'ok' }) });
  await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor', 'task_tracker'] });

async function runWith(script: Script, message = 'Go', extra: { maxIterations?: number } = {}) {
  // Scripts count their turns: a prompt asked again (a retried call) gets the same reply, not the next turn's.
  h.model.setScript(samePromptSameReply(script));
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, ...extra });
  await conversation.sendMessage(message);
  const final = await conversation.run().then(() => conversation.state());
  return { conversation, final, workspace, events: await conversation.events() };
}

test('HTTP 401 puts the conversation in error with a readable reason, without retrying', async () => {
  const start = h.model.requests.length;
  const { final } = await runWith(() => ({ status: 401, error: `Incorrect API key provided: ${FAKE_KEY}` }));
  assert.equal(final.status, 'error');
  assert.match(final.lastError ?? '', /HTTP 401/);
  assert.ok(!(final.lastError ?? '').includes(FAKE_KEY), 'the key is masked in the error');
  assert.equal(h.model.requests.length - start, 1, 'a 401 is not retried');
});

test('HTTP 500 on the first attempts is retried and the run finishes', async () => {
  let calls = 0;
  const { final, events } = await runWith(() => (++calls <= 2 ? { status: 500, error: 'overloaded' } : { content: 'All done.' }));
  assert.equal(final.status, 'finished');
  assert.equal(calls, 3);
  assert.ok(events.some((e) => e.kind === 'message' && e.source === 'agent' && e.text === 'All done.'));
});

test('HTTP 429 with Retry-After is asked again when the provider said, not on our backoff', async () => {
  const start = h.model.requests.length;
  let calls = 0;
  const { final, conversation } = await runWith(() =>
    ++calls === 1 ? { status: 429, error: 'rate limited', headers: { 'retry-after': '2' } } : { content: 'All done.' },
  );
  assert.equal(final.status, 'finished');
  assert.ok(h.model.requests.length - start >= 2);
  // The provider's delay went to Temporal as the retry's delay (our own first backoff is 0.5 s): the
  // second attempt's start records the first one's failure with it. (Asserted in history, not by the clock.)
  const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
  const retried = (history.events ?? []).find(
    (e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) > 1,
  )?.activityTaskStartedEventAttributes;
  const delay = retried?.lastFailure?.applicationFailureInfo?.nextRetryDelay;
  assert.equal(Number(delay?.seconds ?? 0) + (delay?.nanos ?? 0) / 1e9, 2, JSON.stringify(retried?.lastFailure));
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '1500' })), 1500);
  assert.ok((retryAfterMs(new Headers({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() })) ?? 0) > 50_000, 'an HTTP date');
  assert.equal(retryAfterMs(new Headers({ 'retry-after': '86400' })), 120_000, 'capped');
  assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
  assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': ' ', 'retry-after': '3' })), 3000, 'a blank header is absent');
  assert.equal(retryAfterMs(undefined), undefined);
});

test('the iteration limit stops the run with an error saying why', async () => {
  const { final } = await runWith(() => ({ toolCalls: [{ name: 'think', arguments: { thought: 'hmm' } }] }), 'Go', { maxIterations: 3 });
  assert.equal(final.status, 'error');
  assert.match(final.lastError ?? '', /maximum of 3 iterations/);
  assert.equal(final.iterations, 3);
});

test('a message sent while running is given to the model before its next call', async () => {
  let seen = '';
  const script: Script = (req) => {
    const users = req.body.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
    if (users.some((u) => u.includes('EXTRA'))) {
      seen = users.join(' | ');
      return { content: 'Noted the extra message.' };
    }
    return { delayMs: 150, toolCalls: [{ name: 'terminal', arguments: { command: 'sleep 0.3; echo step' } }] };
  };
  h.model.setScript(script);
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace() });
  await conversation.sendMessage('Start');
  const running = conversation.run();
  await waitFor('a step', async () => (await conversation.events()).some((e) => e.kind === 'observation'));
  await conversation.sendMessage('EXTRA: also mind the tests');
  const final = await running;
  assert.equal(final.status, 'finished');
  assert.match(seen, /Start \| EXTRA/);
  // The prompt stayed valid: every tool call was answered before the next user message.
  const last = h.model.requests[h.model.requests.length - 1]!.body.messages;
  const extraAt = last.findIndex((m) => m.role === 'user' && String(m.content).includes('EXTRA'));
  assert.notEqual(last[extraAt - 1]?.role, 'assistant');
});

test('a hostile model never wedges the conversation: each bad call becomes an error observation', async () => {
  const bad = [
    { name: 'launch_missiles', arguments: { now: true } },
    { name: 'terminal', arguments: '{"command": "echo unterminated' },
    { name: 'terminal', arguments: { timeout: 5 } },
    { name: 'file_editor', arguments: { command: 'view', path: '/etc/passwd' } },
    { name: 'file_editor', arguments: { command: 'create', path: '../../outside.txt', file_text: 'x' } },
    { name: 'file_editor', arguments: { command: 'view' } },
    { name: 'task_tracker', arguments: { command: 'plan', task_list: [{ nope: 1 }] } },
    { name: 'terminal', arguments: '[1,2]' },
  ];
  let turn = 0;
  const { final, events } = await runWith(() => (turn++ === 0 ? { toolCalls: bad } : { content: 'I give up.' }));
  assert.equal(final.status, 'finished');
  const observations = events.filter((e): e is ObservationEvent => e.kind === 'observation');
  assert.equal(observations.length, bad.length);
  for (const o of observations) assert.equal(o.isError, true, `${o.tool}: ${o.content}`);
  assert.match(observations[0]!.content, /Unknown tool "launch_missiles"/);
  assert.match(observations[1]!.content, /not valid JSON/);
  assert.match(observations[7]!.content, /must be a JSON object/);
  assert.match(observations[2]!.content, /command/);
  assert.match(observations[3]!.content, /outside the workspace/);
  assert.match(observations[4]!.content, /outside the workspace/);
  // The model saw every error (the next request carried all eight results).
  const next = h.model.requests[h.model.requests.length - 1]!.body.messages;
  assert.equal(next.filter((m) => m.role === 'tool').length, bad.length);
});

test('pause --now interrupts the running command and keeps its partial output', async () => {
  let turn = 0;
  h.model.setScript(
    samePromptSameReply(() =>
      turn++ === 0
        ? {
            toolCalls: [
              { name: 'terminal', arguments: { command: 'echo first-part; touch started; sleep 60; echo never' } },
              { name: 'think', arguments: { thought: 'x' } },
            ],
          }
        : { content: 'Stopped as asked.' },
    ),
  );
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace });
  await conversation.sendMessage('Run the long command');
  const running = conversation.run();
  await waitFor('the command running', () =>
    readFile(path.join(workspace, 'started')).then(
      () => true,
      () => false,
    ),
  );
  await conversation.pause({ now: true });
  const stopped = await running;
  assert.equal(stopped.status, 'paused');
  const obs = await waitFor('two observations', async () => {
    const o = (await conversation.events()).filter((e): e is ObservationEvent => e.kind === 'observation');
    return o.length === 2 && o;
  });
  assert.match(obs[0]!.content, /interrupted by a pause/);
  assert.match(obs[0]!.content, /first-part/);
  assert.doesNotMatch(obs[0]!.content, /never/);
  assert.match(obs[1]!.content, /Not run: the conversation was paused/);
  const resumed = await conversation.run();
  assert.equal(resumed.status, 'finished');
});

test('close ends the workflow; its state stays readable', async () => {
  const { conversation } = await runWith(() => ({ content: 'hi' }));
  await conversation.close();
  await waitFor('closed', () => conversation.isClosed());
  const s = await conversation.state();
  assert.equal(s.closed, true);
  await assert.rejects(conversation.resume());
});

test('a file created by the agent lands in the workspace; terminal state carries across steps', async () => {
  let turn = 0;
  const steps = [
    { toolCalls: [{ name: 'terminal', arguments: { command: 'mkdir -p app && cd app && export NAME=faheem' } }] },
    { toolCalls: [{ name: 'terminal', arguments: { command: 'echo "hello $NAME" > greeting.txt' } }] },
    { content: 'done' },
  ];
  const { workspace, final } = await runWith(() => steps[Math.min(turn++, 2)]!);
  assert.equal(final.status, 'finished');
  assert.equal(await readFile(path.join(workspace, 'app', 'greeting.txt'), 'utf8'), 'hello faheem\n');
  assert.equal(final.terminal.cwd, path.join(workspace, 'app'));
});
