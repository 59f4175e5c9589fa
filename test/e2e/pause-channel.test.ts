// On a server without worker commands (an older server, or a cluster that has not turned them on)
// a pause still reaches the model call in flight, through the answer to a heartbeat: the worker says
// which channel it uses, and `faheem doctor` warns and names the settings. (With worker commands,
// the default of `faheem server`, every other pause test runs; bench/run.ts has the abort's time.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM, TerminalTool } from '../../src/client/client.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

let h: Harness;
let worker: WorkerProcess;
before(async () => {
  h = await startHarness({ name: 'pause-channel', script: countdownScript({ delayMs: 0, gates: { 1: 'pause' } }), workerCommands: false });
  worker = await h.startWorker();
});
after(async () => h?.close());

test('without worker commands: the worker says so, a pause aborts the model call through heartbeats, doctor warns', async () => {
  assert.match(worker.output(), /no worker commands: pauses reach calls in flight through heartbeats/);
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: [TerminalTool] }),
    workspace: await h.workspace(),
    firstMessage: 'Create countdown.txt with 100 down to 1',
    run: true,
  });
  const held = await h.model.reached('pause');
  await conversation.pause();
  await conversation.waitUntil((s) => s.status === 'paused');
  // The held request's connection closes: the worker learnt of the cancellation and aborted it.
  await waitFor('the held call aborted', () => held.aborted);
  h.model.release('pause');
  await conversation.close();

  const doctor = await h.cli(['doctor'], { reject: false });
  assert.match(doctor.stdout, /pause.*no worker commands.*frontend\.workerCommandsEnabled/);
});
