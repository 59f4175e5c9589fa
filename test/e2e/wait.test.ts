// The `wait` tool: a durable timer. The worker may die while the conversation waits; a message or a
// resume ends a long wait early; the state says what it waits for.
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { messageSignal, waitForChangeUpdate } from '../../src/workflows/messages.js';
import { startHarness, waitFor, workflowBundle, type Harness, type WorkerProcess } from '../support/harness.js';

const EventType = proto.temporal.api.enums.v1.EventType;

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

// Issue 23. A query sent while the worker is dead waits on its sticky queue, then goes to the new
// worker, which answers it from the history as it is then: past the last completed task (here the
// message that ended the wait), so the workflow schedules the next model call there. The update
// sent meanwhile comes with the next task: its acceptance follows the call in history. Replay hands
// the message and the update to one activation; the history replays only because an update is
// accepted after the other commands of its activation (src/workflows/interceptors.ts).
test('a query that runs the workflow ahead of the task an update comes with leaves a history that replays', async () => {
  const code = await workflowBundle();
  let shaped = 0;
  for (let attempt = 0; attempt < 3 && shaped === 0; attempt++) {
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      firstMessage: 'wait 3600',
      run: true,
    });
    const handle = h.client.workflow.getHandle(conversation.id);
    const s = await waitFor('the wait to begin', async () => {
      const state = await conversation.state();
      return state.waitingUntil ? state : undefined;
    });
    await worker.kill('SIGKILL');
    worker = await h.startWorker();
    const query = conversation.state();
    await handle.signal(messageSignal, 'CI is green, go on');
    await waitFor('the message in history', async () =>
      (await handle.fetchHistory()).events?.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
    );
    const update = handle.executeUpdate(waitForChangeUpdate, { args: [{ afterEvents: s.events }] });
    await query;
    await update;
    const final = await conversation.waitUntil((st) => st.status !== 'running', 200, 60_000);
    assert.equal(final.status, 'finished');
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    if (
      events.some(
        (e, i) =>
          e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
          events[i - 1]?.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
          events.slice(0, i).some((x) => x.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT),
      )
    ) {
      shaped++;
    }
    await Worker.runReplayHistory({ workflowBundle: { codePath: code } }, history, conversation.id);
  }
  assert.ok(shaped > 0, 'no attempt made the history of issue 23 (acceptance after the model call, after a timed-out task)');
});
