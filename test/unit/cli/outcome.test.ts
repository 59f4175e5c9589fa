// The CLI's outcomes: the exit code and the line of a run that stopped, and the one line each
// changing command prints (CONTRACT, "CLI outcomes").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  EXIT,
  answeredLine,
  closedLine,
  lastPauseReason,
  outcomeOf,
  appliedPauseLine,
  pausedLine,
  queuedLine,
  resumedLine,
} from '../../../src/cli/outcome.js';
import type { ConversationEvent } from '../../../src/core/types.js';
import { stopReason } from '../../../src/conversation/stop-reason.js';
import { ServiceError } from '@temporalio/client';
import { describeTemporalError, isUnanswered } from '../../../src/cli/waiting.js';
import { ConversationClosedError, NoWorkerError } from '../../../src/core/errors.js';

const run = (status: Parameters<typeof outcomeOf>[0]['status'], extra: Partial<Parameters<typeof outcomeOf>[0]> = {}) =>
  outcomeOf({ id: 'conv-1', status, lastError: null, ...extra });

test('a stopped run exits 0 finished, 1 error, 2 stuck, 3 paused by someone else, 4 waiting for approval', () => {
  assert.deepEqual(
    ['finished', 'error', 'stuck', 'paused', 'waiting_for_confirmation'].map((s) => run(s as never).code),
    [0, 1, 2, 3, 4],
  );
  assert.equal(EXIT.timeout, 124);
  assert.equal(run('finished').failed, false);
  for (const s of ['error', 'stuck', 'paused', 'waiting_for_confirmation'] as const) assert.equal(run(s).failed, true, s);
});

test('the line says why: the last error, the pause reason, what to answer', () => {
  assert.equal(
    run('error', { lastError: 'model call failed:\n connection refused' }).line,
    'conv-1 error: model call failed: connection refused',
  );
  assert.match(run('stuck', { lastError: 'the same command 3 times' }).line, /^conv-1 stuck: the same command 3 times$/);
  assert.equal(
    outcomeOf({ id: 'conv-1', status: 'paused', lastError: null }, 'budget').line,
    'conv-1 paused by someone else: budget (`faheem resume conv-1` goes on)',
  );
  assert.match(
    run('waiting_for_confirmation', { pendingActions: [{}, {}] }).line,
    /2 actions: `faheem approve conv-1` or `faheem reject conv-1`/,
  );
  assert.equal(run('finished', { finalMessage: 'Done.' }).line, 'conv-1 finished: Done.');
});

test("the last pause event's reason; a pause without one says who", () => {
  const e = (i: number, extra: Record<string, unknown>) =>
    ({ index: i, timestamp: '2026-12-04T00:00:00.000Z', source: 'user', ...extra }) as unknown as ConversationEvent;
  assert.equal(lastPauseReason([e(0, { kind: 'pause', now: false, reason: 'budget' }), e(1, { kind: 'resume' })]), 'budget');
  assert.equal(
    lastPauseReason([e(0, { kind: 'pause', now: false, reason: 'budget' }), e(1, { kind: 'pause', now: true })]),
    'a pause request (now)',
  );
  assert.equal(lastPauseReason([e(0, { kind: 'resume' })]), undefined);
});

test('each changing command says what happened in one line', () => {
  assert.equal(pausedLine('conv-1', 'running', false, true), 'paused conv-1 (was running)');
  assert.equal(pausedLine('conv-1', 'running', true, true), 'paused conv-1, interrupting the running command (was running)');
  assert.equal(pausedLine('conv-1', 'paused', false, true), 'conv-1 was already paused');
  assert.match(pausedLine('conv-1', 'running', false, false), /^pause sent to conv-1; no worker runs it now/);
  assert.equal(appliedPauseLine('conv-1', 'running', 'paused', true), 'paused conv-1, interrupting the running command (was running)');
  assert.equal(appliedPauseLine('conv-1', 'paused', 'paused', false), 'conv-1 was already paused');
  assert.equal(appliedPauseLine('conv-1', 'finished', 'finished', false), 'conv-1 is finished: nothing to pause');
  assert.equal(queuedLine('conv-1', 'paused', 2, false), 'message queued (2 waiting); `faheem resume conv-1` runs it');
  assert.equal(queuedLine('conv-1', 'running', 1, false), 'message queued (1 waiting); conv-1 reads it before its next model call');
  assert.equal(resumedLine('conv-1', { runNumber: 3, status: 'running' }, 'paused'), 'resumed conv-1 (run 3, was paused)');
  assert.equal(resumedLine('conv-1', { runNumber: 3, status: 'running' }, 'running'), 'conv-1 was already running (run 3)');
  assert.equal(resumedLine('conv-1', { runNumber: 2, status: 'finished' }, 'finished'), 'conv-1 is finished: nothing to run');
  assert.equal(closedLine('conv-1', 'paused', true), 'closed conv-1 (was paused)');
  assert.match(closedLine('conv-1', 'paused', false), /^close sent to conv-1; no worker/);
  assert.equal(answeredLine('conv-1', 'approved', 2), 'approved 2 actions of conv-1');
  assert.equal(answeredLine('conv-1', 'rejected', 1, 'too risky'), 'rejected 1 action of conv-1: too risky');
  assert.equal(answeredLine('conv-1', 'approved', 0), 'nothing waited for confirmation in conv-1');
});

test("run()'s reason: the last error, the pause's reason, what waits; null for a finish", () => {
  const s = (status: Parameters<typeof stopReason>[0]['status'], lastError: string | null = null) => ({ status, lastError });
  assert.equal(stopReason(s('finished')), null);
  assert.equal(stopReason(s('error', 'HTTP 401')), 'HTTP 401');
  assert.equal(stopReason(s('stuck', 'the same action 4 times')), 'the same action 4 times');
  assert.equal(stopReason(s('paused'), 'budget'), 'budget');
  assert.equal(stopReason({ ...s('waiting_for_confirmation'), pendingActions: [{}] }), '1 action waits for approve() or reject()');
});

test('a raw Temporal error reads as what happened; one nobody answered is waited out, a refusal is not', () => {
  const grpc = (code: number, details: string) => Object.assign(new Error(details), { code, details, metadata: {} });
  const noAnswer = new ServiceError('Failed to query Workflow', { cause: grpc(4, 'context deadline exceeded') });
  const line = describeTemporalError(noAnswer, '127.0.0.1:7233');
  assert.match(line ?? '', /^no answer in time: is `npx faheem worker` running against the Temporal server at 127\.0\.0\.1:7233\?$/);
  assert.doesNotMatch(line ?? '', /Failed to query/);
  assert.match(describeTemporalError(grpc(14, 'No connection established'), 'h:1') ?? '', /^lost the Temporal server at h:1/);
  assert.equal(describeTemporalError(new Error('plain'), 'h:1'), undefined);
  assert.equal(isUnanswered(noAnswer), true);
  assert.equal(isUnanswered(new NoWorkerError('none')), true);
  assert.equal(isUnanswered(new ConversationClosedError('conv-1')), false);
  assert.equal(isUnanswered(new ServiceError('Failed to query Workflow', { cause: grpc(3, 'bad') })), false);
});
