// Time travel in process: a checkpoint of the workspace per step (the checkpoint activities stubbed
// with made-up commits) and the rewind update. Real workflow, real server and Workers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ChatMessage } from '../../src/core/types.js';
import {
  checkpointsQuery,
  closeSignal,
  eventRunsQuery,
  messageSignal,
  resumeSignal,
  rewindUpdate,
  runUpdate,
} from '../../src/conversation/workflow/messages.js';
import { buildMessages } from '../../src/conversation/workflow/prompt.js';
import { fakeCommit, startWorkflowEnv, type WorkflowEnv } from '../support/workflow-env.js';

let env: WorkflowEnv;
before(async () => {
  env = await startWorkflowEnv('workflow-time-travel');
});
after(async () => env?.close());

test('a checkpoint before the first step and after each step on the host; a rewind restores a step, pauses, and resume goes on from there', async () => {
  let n = 0;
  const c = await env.start({
    model: () => {
      n++;
      if (n === 2) return { toolCalls: [{ name: 'think', arguments: { thought: 'no host tool' } }] };
      return n <= 3 ? { toolCalls: [{ name: 'terminal', arguments: { command: `echo ${n}` } }] } : { content: `done after ${n} calls` };
    },
  });
  await c.until('finished', (s) => s.status === 'finished');
  // Step 2 ran only think (in the workflow): it reuses step 1's commit, no snapshot.
  assert.deepEqual(
    c.checkpointCalls.map((x) => x.step),
    [0, 1, 3],
  );
  const list = await c.handle.query(checkpointsQuery);
  const byStep = new Map(list.map((e) => [e.step, e.commit]));
  assert.equal(byStep.get(0), fakeCommit(`${c.id}:0`));
  assert.equal(byStep.get(1), fakeCommit(`${c.id}:1`));
  assert.equal(byStep.get(2), fakeCommit(`${c.id}:1`), 'a step with no host tool keeps the last commit');
  assert.equal(byStep.get(3), fakeCommit(`${c.id}:3`));

  const answer = await c.handle.executeUpdate(rewindUpdate, { args: [{ to: 1 }] });
  assert.equal(answer.toStep, 1);
  assert.equal(answer.commit, fakeCommit(`${c.id}:1`));
  assert.ok(answer.dropped > 0, 'later steps left the prompt');
  assert.deepEqual(
    c.restoreCalls.map((r) => r.commit),
    [fakeCommit(`${c.id}:1`)],
  );
  const rewound = await c.until('paused', (s) => s.status === 'paused');
  assert.equal(rewound.closed, false);
  assert.ok(
    (await c.handle.query(checkpointsQuery)).some((e) => e.rewound),
    'the later checkpoints are marked rewound',
  );

  const calls = c.modelCalls.length;
  await c.handle.signal(resumeSignal);
  await c.until('finished again', (s) => s.status === 'finished' && c.modelCalls.length > calls);
  await c.handle.signal(closeSignal);
});

test('a rewind across continue-as-new and across a condensation brings the condensed events back into the prompt', async () => {
  // The prompt of each call, as the model activity builds it from the events the call covers.
  const prompts: ChatMessage[][] = [];
  const c = await env.start({
    firstMessage: 'append eight steps',
    options: { continueAsNewEverySteps: 3, condenser: { maxEvents: 10, maxPromptTokens: 1_000_000, keepFirst: 1 } },
    model: (input, events) => {
      prompts.push(buildMessages(events, input.systemPrompt));
      const said = events.filter((e) => e.kind === 'message' && e.source === 'user');
      if (said.some((e) => e.kind === 'message' && e.text === 'stop') || input.step > 8) return { content: 'done' };
      return { toolCalls: [{ name: 'terminal', arguments: { command: `append step ${input.step}` } }] };
    },
  });
  await c.until('finished', (s) => s.status === 'finished', 120_000);
  assert.ok(
    (await c.events()).some((e) => e.kind === 'condensation'),
    'a condensation happened',
  );
  assert.ok((await c.handle.query(eventRunsQuery)).length > 1, 'the conversation continued as new');

  await c.handle.executeUpdate(rewindUpdate, { args: [{ to: 2 }] });
  // The workspace put back as after step 2 (the store's own tests hold what a restore writes).
  assert.deepEqual(
    c.restoreCalls.map((r) => r.commit),
    [fakeCommit(`${c.id}:2`)],
  );
  await c.until('paused', (s) => s.status === 'paused');
  const before = prompts.length;
  await c.handle.signal(messageSignal, 'stop');
  await c.handle.executeUpdate(runUpdate);
  await c.until('finished again', (s) => s.status === 'finished' && prompts.length > before);
  const prompt = prompts[before]!;
  assert.deepEqual(prompt.filter((m) => m.role === 'tool').length, 2, 'steps 1 and 2 are back, whole');
  assert.ok(!prompt.some((m) => String(m.content).includes('summary of')), 'the condensation was rewound too');
  assert.deepEqual(
    prompt.filter((m) => m.role === 'user').map((m) => m.content),
    ['append eight steps', 'stop'],
  );
  await c.handle.signal(closeSignal);
});
