// The failure types table (src/core/failure-types.ts): its entries, the helpers that read a failure's
// type and code, and that every failure type thrown anywhere in src/ is in it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { FAILURE, FAILURE_TYPES, failure, failureCodeOf, failureTypeOf, isFailureType } from '../../../src/core/failure-types.js';

test('each entry: its name, a snake_case code, who throws it and what it means', () => {
  for (const [type, info] of Object.entries(FAILURE_TYPES)) {
    assert.equal(FAILURE[type as keyof typeof FAILURE], type);
    assert.match(type, /^[A-Z][A-Za-z]+$/);
    assert.match(info.code, /^[a-z]+(_[a-z]+)*$/, type);
    assert.equal(typeof info.retryable, 'boolean', type);
    assert.ok(info.thrownBy.length > 0 && info.means.length > 10, type);
  }
  assert.equal(FAILURE_TYPES.ModelConfigError.code, 'model_config');
  assert.equal(FAILURE_TYPES.InvalidHooks.code, 'hooks_config');
  assert.equal(FAILURE_TYPES.RewindFailed.code, 'checkpoint');
  assert.ok(Object.isFrozen(FAILURE));
  assert.ok(isFailureType('ModelUnavailable'));
  assert.ok(!isFailureType('toString'));
  assert.ok(!isFailureType('NoSuchType'));
});

test('failureTypeOf / failureCodeOf: through the cause chain, but not past a timeout', () => {
  const app = ApplicationFailure.nonRetryable('too long', FAILURE.ContextWindowExceeded);
  const activity = new ActivityFailure('callModel failed', 'callModel', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, app);
  assert.equal(failureTypeOf(app), 'ContextWindowExceeded');
  assert.equal(failureTypeOf(activity), 'ContextWindowExceeded');
  assert.equal(failureCodeOf(activity), 'context_window_exceeded');
  // A timeout's cause is an earlier attempt's failure, not this one.
  const timeout = new TimeoutFailure('heartbeat timeout', undefined, TimeoutType.HEARTBEAT);
  (timeout as { cause?: unknown }).cause = ApplicationFailure.retryable('down', FAILURE.ModelUnavailable);
  const timedOut = new ActivityFailure('callModel timed out', 'callModel', '1', RetryState.TIMEOUT, undefined, timeout);
  assert.equal(failureTypeOf(timedOut), undefined);
  // By shape: a copy of Temporal's classes from another package still counts.
  assert.equal(
    failureTypeOf({ name: 'WorkflowUpdateFailedError', cause: { name: 'ApplicationFailure', type: 'TruncatedOffset' } }),
    'TruncatedOffset',
  );
  assert.equal(failureCodeOf({ cause: { type: 'TruncatedOffset' } }), 'live_offset_truncated');
  assert.equal(failureTypeOf(new Error('plain')), undefined);
  assert.equal(failureTypeOf(undefined), undefined);
  assert.equal(failureTypeOf('ModelUnavailable'), undefined);
  assert.equal(failureCodeOf(ApplicationFailure.nonRetryable('x', 'SomeoneElses')), undefined);
  // A cycle does not hang it.
  const a: { cause?: unknown } = {};
  a.cause = a;
  assert.equal(failureTypeOf(a), undefined);
});

test('failure(): the type, message and extras, retryable exactly when the table says', () => {
  for (const [type, info] of Object.entries(FAILURE_TYPES)) {
    const f = failure(type as keyof typeof FAILURE_TYPES, `${type} happened`);
    assert.equal(f.type, type);
    assert.equal(f.message, `${type} happened`);
    assert.equal(f.nonRetryable, !info.retryable, type);
  }
  const cause = new Error('ECONNREFUSED');
  const f = failure(FAILURE.ModelUnavailable, 'down', { nextRetryDelay: '4s', details: [{ attempt: 3 }], cause });
  assert.equal(f.nextRetryDelay, '4s');
  assert.deepEqual(f.details, [{ attempt: 3 }]);
  assert.equal(f.cause, cause);
});

test('src/ makes ApplicationFailures only through failure(), and throws every type of ours in the table', () => {
  const src = path.join(import.meta.dirname, '..', '..', '..', 'src');
  const named = new Set<string>();
  const direct: string[] = [];
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
    (f) => /\.c?ts$/.test(f) && !f.startsWith('testing/'),
  )) {
    const text = readFileSync(path.join(src, file), 'utf8');
    for (const m of text.matchAll(/\bFAILURE\.(\w+)/g)) named.add(m[1]!);
    if (file !== 'core/failure-types.ts' && /ApplicationFailure\.(?:create|nonRetryable|retryable)\(|new ApplicationFailure\(/.test(text))
      direct.push(`src/${file}`);
  }
  assert.deepEqual(direct, [], 'these make an ApplicationFailure themselves: use failure(FAILURE.X, message) instead');
  for (const type of named) assert.ok(isFailureType(type), `FAILURE.${type} is not in the table`);
  const ours = Object.entries(FAILURE_TYPES)
    .filter(([, info]) => !info.thrownBy.includes('not ours'))
    .map(([type]) => type);
  for (const type of ours) assert.ok(named.has(type), `"${type}" is in the table but nothing in src/ throws it`);
});

test('docs/errors.md lists every failure type with its code', () => {
  const page = readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'docs', 'errors.md'), 'utf8');
  const doc = page.slice(page.indexOf('## Failure types'));
  for (const [type, info] of Object.entries(FAILURE_TYPES)) {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${type}\` |`));
    assert.ok(row, `docs/errors.md has no row for ${type}`);
    assert.ok(
      row.includes(`| \`${info.code}\` | ${info.retryable ? 'yes' : 'no'} |`),
      `docs/errors.md: ${type} is ${info.code}, retried ${info.retryable}:\n${row}`,
    );
  }
});
