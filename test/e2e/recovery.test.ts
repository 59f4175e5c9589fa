// Workers die with SIGKILL mid-conversation; a new worker carries on with no step lost or run twice.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { countdownScript, lastUserMessage, type Script } from '../../src/testing/scripted-model.js';
import { ToolRegistry, toolSpec } from '../../src/tools/registry.js';
import type { PrepareToolsResult } from '../../src/core/types.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'recovery', script: countdownScript() });
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor'] });

test('a worker killed during a model call: a new worker finishes the countdown, each step once', async () => {
  // The reply after three steps is held at the gate 'kill': the worker dies with that call in flight.
  h.model.setScript(countdownScript({ delayMs: 0, gates: { 3: 'kill' } }));
  let worker = await h.startWorker();
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace,
    firstMessage: 'Create countdown.txt with the numbers 100 down to 1.',
    run: true,
  });
  const held = await h.model.reached('kill');
  assert.ok((await conversation.state()).iterations >= 3);
  const before = h.model.requests.length;
  await worker.kill('SIGKILL');
  await waitFor('the held call gone with its worker', () => held.aborted);
  h.model.release('kill');

  const restartedAt = Date.now();
  worker = await h.startWorker();
  await waitFor('the model call made again', () => h.model.requests.length > before);
  const recoveryMs = h.model.requests[before]!.startedAt - restartedAt;

  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'finished');
  const lines = (await readFile(path.join(workspace, 'countdown.txt'), 'utf8')).trim().split('\n');
  assert.deepEqual(
    lines,
    Array.from({ length: 100 }, (_, i) => String(100 - i)),
    'every step ran exactly once',
  );
  const events = await conversation.events();
  const actions = events.filter((e) => e.kind === 'action').length;
  const observations = events.filter((e) => e.kind === 'observation').length;
  assert.equal(actions, observations, 'every action has its observation');
  console.log(`# recovery: next model request ${recoveryMs} ms after the new worker process was spawned`);
  await worker.kill();
});

test('a worker killed during a command: the command is reported as interrupted, not run again', async () => {
  const script: Script = (req) => {
    const tools = req.body.messages.filter((m) => m.role === 'tool');
    if (tools.length === 0) {
      return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo ran >> marker.txt; sleep 30; echo slept' } }] };
    }
    return { content: `Done. Last observation: ${String(tools[tools.length - 1]?.content).slice(0, 200)}` };
  };
  h.model.setScript(script);
  let worker = await h.startWorker();
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'Run it', run: true });
  await waitFor('the command started', async () =>
    (await readFile(path.join(workspace, 'marker.txt'), 'utf8').catch(() => '')).includes('ran'),
  );
  await worker.kill('SIGKILL');
  worker = await h.startWorker();

  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'finished');
  const observation = (await conversation.events()).find((e) => e.kind === 'observation');
  assert.ok(observation && observation.kind === 'observation');
  assert.equal(observation.isError, true);
  assert.match(observation.content, /effects are unknown/);
  const marker = await readFile(path.join(workspace, 'marker.txt'), 'utf8');
  assert.equal(marker, 'ran\n', 'the command was not run a second time');
  assert.ok(lastUserMessage(h.model.requests[h.model.requests.length - 1]!).includes('Run it'));
  await worker.kill();
});

test('a command handed to a worker that died before starting it runs on the retry, once', async () => {
  h.model.setScript((req) =>
    req.body.messages.some((m) => m.role === 'tool')
      ? { content: 'Done.' }
      : { toolCalls: [{ name: 'terminal', arguments: { command: 'echo ran >> marker.txt' } }] },
  );
  const worker = await h.startWorker();
  const toolTaskQueue = `lost-poll-${Date.now()}`;
  const poll = () =>
    h.client.connection.withDeadline(Date.now() + 60_000, () =>
      h.client.connection.workflowService.pollActivityTaskQueue({
        namespace: h.namespace,
        taskQueue: { name: toolTaskQueue },
        identity: 'dies-before-starting',
      }),
    );
  const workspace = await h.workspace();
  // No checkpoints: this stand-in host answers only the setup step, then loses the command.
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace,
    firstMessage: 'Run it',
    run: true,
    toolTaskQueue,
    checkpoints: false,
  });
  // This stand-in host answers the setup step as a worker would…
  const prepare = await poll();
  assert.equal(prepare.activityType?.name, 'prepareTools');
  const registry = new ToolRegistry([], { env: process.env });
  const result: PrepareToolsResult = {
    tools: ['terminal', 'file_editor', 'think', 'finish'].map((n) => toolSpec(registry.get(n)!)),
    errors: [],
  };
  await h.client.connection.workflowService.respondActivityTaskCompleted({
    namespace: h.namespace,
    taskToken: prepare.taskToken,
    result: { payloads: [h.client.options.loadedDataConverter.payloadConverter.toPayload(result)] },
  });
  // …then its poll takes the command's task and dies: it never starts the command.
  const task = await poll();
  assert.equal(task.activityType?.name, 'runTool');
  const tools = await h.startWorker({ FAHEEM_TOOL_TASK_QUEUE: toolTaskQueue });

  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'finished');
  const observation = (await conversation.events()).find((e) => e.kind === 'observation');
  assert.ok(observation && observation.kind === 'observation');
  assert.equal(observation.isError, false, observation.content);
  assert.equal(await readFile(path.join(workspace, 'marker.txt'), 'utf8'), 'ran\n');
  await Promise.all([worker.kill(), tools.kill()]);
});

test('a worker killed right after a pause cancelled its model call: a new worker resumes it', async () => {
  // The reply after two steps is held at the gate 'pause' until the worker is gone, so the pause
  // (signal, workflow task, the cancellation sent to the worker) lands inside the call on any machine.
  h.model.setScript(countdownScript({ delayMs: 0, gates: { 2: 'pause' } }));
  let worker = await h.startWorker();
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace,
    firstMessage: 'Create countdown.txt with 100 down to 1.',
    run: true,
  });
  // Pause while a model call is in flight and kill the worker before the call's cancellation is
  // acknowledged: the activity then ends in a timeout, which must still count as the pause.
  const held = await h.model.reached('pause');
  await conversation.pause();
  await conversation.waitUntil((s) => s.status === 'paused', 5);
  await worker.kill('SIGKILL');
  await waitFor('the held call gone with its worker', () => held.aborted);
  h.model.release('pause');
  worker = await h.startWorker();
  const final = await conversation.run();
  assert.equal(final.status, 'finished');
  const lines = (await readFile(path.join(workspace, 'countdown.txt'), 'utf8')).trim().split('\n');
  assert.deepEqual(
    lines,
    Array.from({ length: 100 }, (_, i) => String(100 - i)),
  );
  await worker.kill();
});
