// More of the conversation workflow in process (see conversation.test.ts): the confirmation rules
// around pause, resume and close, messages refused by the update's validator, continue-as-new, and
// condensation. Real workflow, real server and Workers; our activities stubbed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { FAILURE, failureTypeOf } from '../../src/core/failure-types.js';
import type { CondensationEvent, ConversationState, ObservationEvent } from '../../src/core/types.js';
import {
  addMessageUpdate,
  approveUpdate,
  closeSignal,
  eventRunsQuery,
  pauseSignal,
  rejectUpdate,
  resumeSignal,
  runUpdate,
} from '../../src/conversation/workflow/messages.js';
import { startWorkflowEnv, type Reply, type WorkflowEnv } from '../support/workflow-env.js';

let env: WorkflowEnv;
before(async () => {
  env = await startWorkflowEnv('workflow-confirmation');
});
after(async () => env?.close());

/** An update refused by the workflow's validator: the one InvalidRequest failure, with this reason. */
const refused = (reason: RegExp) => (err: unknown) =>
  err instanceof WorkflowUpdateFailedError &&
  failureTypeOf(err) === FAILURE.InvalidRequest &&
  reason.test(String((err.cause as Error | undefined)?.message));
const terminal = (command: string): Reply => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
const oneCommand = (command: string) => (_: unknown, events: { kind: string }[]) =>
  events.some((e) => e.kind === 'observation') ? { content: 'done' } : terminal(command);

describe('confirmation', () => {
  test('reject: the reason becomes the observation the model sees; nothing runs', async () => {
    let seen = '';
    const c = await env.start({
      options: { confirmationPolicy: 'always' },
      model: (_i, events) => {
        const obs = events.find((e): e is ObservationEvent => e.kind === 'observation');
        if (!obs) return terminal('rm -rf data');
        seen = obs.content;
        return { content: 'ok, not deleting' };
      },
    });
    await c.until('waiting for confirmation', (s) => s.status === 'waiting_for_confirmation');
    assert.deepEqual(await c.handle.executeUpdate(rejectUpdate, { args: ['do not delete data'] }), { rejected: 1 });
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.match(seen, /rejected this action: do not delete data/);
    assert.equal(c.toolCalls.length, 0);
    assert.equal(final.pendingActions.length, 0);
    await assert.rejects(c.handle.executeUpdate(approveUpdate), refused(/nothing is waiting for confirmation/));
  });

  test('paused while waiting: approve is refused, the resume signal never approves, resume returns to waiting', async () => {
    const c = await env.start({ options: { confirmationPolicy: 'always' }, model: oneCommand('echo approved') });
    await c.until('waiting for confirmation', (s) => s.status === 'waiting_for_confirmation');
    await c.handle.signal(pauseSignal, {});
    await c.until('paused', (s) => s.status === 'paused');
    await assert.rejects(c.handle.executeUpdate(approveUpdate), refused(/resume it first/));
    await c.handle.signal(resumeSignal);
    const again = await c.until('waiting again', (s) => s.status === 'waiting_for_confirmation');
    assert.equal(again.pendingActions.length, 1);
    await c.handle.signal(resumeSignal);
    // A resume signal while waiting does nothing: still waiting, nothing ran (a query after the signal sees it handled).
    assert.equal((await c.state()).status, 'waiting_for_confirmation');
    assert.equal(c.toolCalls.length, 0);
    await c.handle.executeUpdate(runUpdate); // run() approves, as in the seed SDK
    await c.until('finished', (s) => s.status === 'finished');
    assert.equal(c.toolCalls.length, 1);
  });

  test('close while waiting for confirmation: the actions are rejected and the workflow completes', async () => {
    const c = await env.start({ options: { confirmationPolicy: 'always' }, model: oneCommand('echo never') });
    await c.until('waiting for confirmation', (s) => s.status === 'waiting_for_confirmation');
    await c.handle.signal(closeSignal);
    const result = (await c.handle.result()) as ConversationState;
    assert.equal(result.closed, true);
    assert.equal(c.toolCalls.length, 0);
    const obs = (await c.events()).find((e): e is ObservationEvent => e.kind === 'observation');
    assert.match(obs?.content ?? '', /rejected this action: the conversation was closed/);
  });
});

describe('messages and runs', () => {
  test('addMessage refuses an empty or oversized message before anything is recorded; a valid one answers with its index', async () => {
    const c = await env.start({ run: false, model: () => ({ content: 'hi' }) });
    const before = (await c.state()).events;
    await assert.rejects(c.handle.executeUpdate(addMessageUpdate, { args: ['   '] }), refused(/the message is empty/));
    await assert.rejects(
      c.handle.executeUpdate(addMessageUpdate, { args: ['x'.repeat(100_001)] }),
      refused(/longer than 100000 characters/),
    );
    assert.equal((await c.state()).events, before, 'nothing recorded');
    const added = await c.handle.executeUpdate(addMessageUpdate, { args: ['hello'] });
    assert.deepEqual(added, { index: before, status: 'idle' });
    assert.equal((await c.state()).pendingMessages, 2);
    await c.handle.executeUpdate(runUpdate);
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.equal(final.pendingMessages, 0);
    await c.handle.signal(closeSignal);
  });

  test('continue-as-new every 3 steps: counters, tool state and every event carry over; each run says which events it recorded', async () => {
    const c = await env.start({
      options: { continueAsNewEverySteps: 3 },
      // Counted from the events the call covers, not per call: a call retried under load (its worker
      // slow to answer) must not skip a step.
      model: (_input, events) => {
        const done = events.filter((e) => e.kind === 'observation').length;
        return done < 7 ? terminal(`echo ${done + 1}`) : { content: 'all done' };
      },
      host: {
        run: (input) => ({
          content: `out ${JSON.stringify(input.arguments)}`,
          isError: false,
          exitCode: 0,
          state: { cwd: '/w', env: { N: String(((input.state as { env?: { N?: string } } | undefined)?.env?.N ?? '') + 'x') } },
        }),
      },
    });
    const final = await c.until('finished', (s) => s.status === 'finished', 30_000);
    assert.equal(final.iterations, 8);
    assert.equal(final.metrics.llmCalls, 8);
    assert.equal(final.terminal.env.N, 'xxxxxxx', 'the tool state went through every run');
    const runs = await c.handle.query(eventRunsQuery);
    assert.ok(runs.length >= 3, `${runs.length} runs`);
    const events = await c.events();
    assert.deepEqual(
      events.map((e) => e.index),
      events.map((_, i) => i),
      'every event, in order',
    );
    assert.equal(events.filter((e) => e.kind === 'observation').length, 7);
    await c.handle.signal(closeSignal);
  });

  test('condensation: past maxEvents the condense activity summarises older events; the first ones stay', async () => {
    let n = 0;
    const c = await env.start({
      options: { condenser: { maxEvents: 8, maxPromptTokens: 1_000_000_000, keepFirst: 2 } },
      model: () => (++n <= 8 ? { toolCalls: [{ name: 'think', arguments: { thought: `t${n}` } }] } : { content: 'done' }),
    });
    await c.until('finished', (s) => s.status === 'finished', 30_000);
    const condensations = (await c.events()).filter((e): e is CondensationEvent => e.kind === 'condensation');
    assert.ok(condensations.length >= 1, 'condensed');
    assert.match(condensations[0]!.summary, /^summary of \d+-\d+$/);
    assert.ok(condensations[0]!.forgottenFrom >= 2, 'the first events stay');
    await c.handle.signal(closeSignal);
  });
});
