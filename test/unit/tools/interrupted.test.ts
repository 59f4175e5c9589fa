import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ToolInterruptedError } from '../../../src/core/errors.js';
import {
  INTERRUPTED_MESSAGE,
  interruptedFailure,
  interruptedPartial,
  interruptedResult,
  partialOutputOf,
} from '../../../src/tools/interrupted.js';

test('the output so far is read from any error that carries it', () => {
  assert.equal(partialOutputOf(new ToolInterruptedError('abc')), 'abc');
  assert.equal(partialOutputOf(Object.assign(new Error('x'), { partialOutput: 'mine' })), 'mine');
  assert.equal(partialOutputOf(Object.assign(new Error('x'), { partialOutput: 3 })), undefined);
  assert.equal(partialOutputOf(new Error('x')), undefined);
  assert.equal(partialOutputOf(null), undefined);
  assert.equal(partialOutputOf('text'), undefined);
});

test('what the activity sends is what the workflow reads, through the activity failure', () => {
  const sent = interruptedFailure('line 1\nline 2');
  assert.ok(sent instanceof CancelledFailure);
  assert.equal(sent.message, INTERRUPTED_MESSAGE);
  assert.equal(interruptedPartial(sent), 'line 1\nline 2');
  const wrapped = new ActivityFailure('activity failed', 'runTool', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, sent);
  assert.equal(interruptedPartial(wrapped), 'line 1\nline 2');
  assert.equal(interruptedPartial(new CancelledFailure('cancelled')), '');
  assert.equal(interruptedPartial(ApplicationFailure.create({ message: 'x', details: ['not this'] })), '');
  assert.equal(interruptedPartial(undefined), '');
});

test('the observation keeps the exact text the workflow has always written', () => {
  assert.deepEqual(interruptedResult('so far'), {
    content: 'The command was interrupted by a pause before it finished.\nOutput so far:\nso far',
    isError: true,
    exitCode: -1,
  });
  assert.deepEqual(interruptedResult(''), {
    content: 'The command was interrupted by a pause before it finished.',
    isError: true,
    exitCode: -1,
  });
});
