// A conversation whose workspace host has no worker: it says so (status, events, the Web UI's current
// details) after a while, and goes on by itself when the host's worker comes; nothing runs twice.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'workspace-host', script: () => ({ content: 'ok' }) });
  await h.startWorker();
});
after(async () => h?.close());

test('no worker on the tool queue: "waiting for workspace host <queue>", then it goes on when one comes', async () => {
  h.model.setScript((req: RecordedRequest): ScriptedReply =>
    req.body.messages.some((m) => m.role === 'tool')
      ? { content: 'Done.' }
      : { toolCalls: [{ name: 'terminal', arguments: { command: 'echo once >> ran.txt' } }] },
  );
  const queue = `absent-host-${Date.now()}`;
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    workspace,
    firstMessage: 'Run it',
    run: true,
    toolTaskQueue: queue,
    hostWaitMs: 1000,
  });
  const waiting = await waitFor(
    'the conversation to say it waits for the host',
    async () => {
      const s = await conversation.state();
      return s.waitingForHost === queue ? s : undefined;
    },
    30_000,
  );
  assert.equal(waiting.status, 'running');
  const { stdout: status } = await h.cli(['status', conversation.id]);
  assert.match(status, new RegExp(`waiting for workspace host ${queue}`));
  const { stdout: events } = await h.cli(['events', conversation.id]);
  assert.match(events, new RegExp(`waiting for workspace host ${queue}`));
  const metadata = await h.client.workflow.getHandle(conversation.id).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  assert.match(metadata.currentDetails ?? '', /Waiting for workspace host/);

  const host = await h.startWorker({ FAHEEM_TASK_QUEUE: `unused-${queue}`, FAHEEM_TOOL_TASK_QUEUE: queue });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'finished');
  assert.equal(final.waitingForHost, null);
  assert.equal(await readFile(path.join(workspace, 'ran.txt'), 'utf8'), 'once\n', 'the command ran once');
  const hostEvents = (await conversation.events()).filter((e) => e.kind === 'host');
  assert.deepEqual(
    hostEvents.map((e) => e.kind === 'host' && e.available),
    [false, true],
  );
  await host.kill();
});

test('a workspace missing on the host stops the conversation with the reason, before any model call', async () => {
  const before = h.model.requests.length;
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    workspace: '/no/such/workspace-dir',
    firstMessage: 'Run it',
  });
  const final = await conversation.run().then(() => conversation.state());
  assert.equal(final.status, 'error');
  assert.match(final.lastError ?? '', /the workspace \/no\/such\/workspace-dir does not exist on the host of faheem-tools@/);
  assert.equal(h.model.requests.length, before, 'no model call');
});

test('pause and close reach a conversation waiting for its host: the call is dropped, never run later', async () => {
  h.model.setScript((req: RecordedRequest): ScriptedReply =>
    req.body.messages.some((m) => m.role === 'tool')
      ? { content: 'Done.' }
      : { gate: 'host-gone', toolCalls: [{ name: 'terminal', arguments: { command: 'echo late >> late.txt' } }] },
  );
  const queue = `paused-host-${Date.now()}`;
  const workspace = await h.workspace();
  // The host is there for the setup, then goes away before the command.
  const first = await h.startWorker({ FAHEEM_TASK_QUEUE: `unused-${queue}`, FAHEEM_TOOL_TASK_QUEUE: queue });
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    workspace,
    firstMessage: 'Run it later',
    toolTaskQueue: queue,
    hostWaitMs: 1000,
  });
  const running = conversation.run();
  await waitFor('the setup on the host', () => h.client.workflow.getHandle(conversation.id).query('setup'), 30_000);
  // Gone while the model thinks: the reply is held at the gate 'host-gone' until the host has stopped.
  await h.model.reached('host-gone');
  await first.kill();
  h.model.release('host-gone');
  await waitFor('the wait for the host', async () => (await conversation.state()).waitingForHost === queue, 30_000);
  await conversation.pause();
  const paused = await conversation.waitUntil((s) => s.status === 'paused' && s.waitingForHost === null, 100, 10_000);
  assert.equal(paused.status, 'paused');
  assert.equal((await running).status, 'paused', 'run() returns with the pause');
  const observation = (await conversation.events()).find((e) => e.kind === 'observation');
  assert.ok(
    observation &&
      observation.kind === 'observation' &&
      /Not run: the conversation was paused \(or closed\) while waiting for the workspace host/.test(observation.content),
  );
  // The host comes back: nothing runs while paused.
  const back = await h.startWorker({ FAHEEM_TASK_QUEUE: `unused-${queue}`, FAHEEM_TOOL_TASK_QUEUE: queue });
  await conversation.close();
  await waitFor('the workflow to complete', () => conversation.isClosed(), 30_000);
  await assert.rejects(readFile(path.join(workspace, 'late.txt')), 'the dropped command never ran');
  await back.kill();
});
