// Time travel in process: a checkpoint of the workspace per step (the checkpoint activities stubbed
// with made-up commits) and the rewind update. Real workflow, real server and Workers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkpointsQuery, rewindUpdate, resumeSignal, closeSignal } from '../../src/workflows/messages.js';
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
