// The failure types table (src/failure-types.ts): its entries, the helpers that read a failure's
// type and code, and that every failure type thrown anywhere in src/ is in it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { CONTEXT_WINDOW_EXCEEDED } from '../../src/errors.js';
import { FAILURE, FAILURE_TYPES, failureCodeOf, failureTypeOf, isFailureType } from '../../src/failure-types.js';

test('each entry: its name, a snake_case code, who throws it and what it means', () => {
  for (const [type, info] of Object.entries(FAILURE_TYPES)) {
    assert.equal(FAILURE[type as keyof typeof FAILURE], type);
    assert.match(type, /^[A-Z][A-Za-z]+$/);
    assert.match(info.code, /^[a-z]+(_[a-z]+)*$/, type);
    assert.equal(typeof info.retryable, 'boolean', type);
    assert.ok(info.thrownBy.length > 0 && info.means.length > 10, type);
  }
  assert.equal(FAILURE.ContextWindowExceeded, CONTEXT_WINDOW_EXCEEDED);
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

/** The source text of every call that makes an ApplicationFailure, from its name to its closing parenthesis. */
function failureCalls(text: string): string[] {
  const calls: string[] = [];
  for (const m of text.matchAll(/ApplicationFailure\.(?:create|nonRetryable|retryable)\(/g)) {
    let depth = 0;
    let i = m.index + m[0].length - 1;
    for (; i < text.length; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')' && --depth === 0) break;
    }
    calls.push(text.slice(m.index, i + 1));
  }
  return calls;
}

test('every failure type src/ throws is in the table, and every type of ours in the table is thrown', () => {
  const src = path.join(import.meta.dirname, '..', '..', 'src');
  const thrown = new Map<string, string>();
  const named = new Set<string>();
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
    (f) => /\.c?ts$/.test(f) && !f.startsWith('testing/'),
  )) {
    const text = readFileSync(path.join(src, file), 'utf8');
    for (const m of text.matchAll(/\bFAILURE\.(\w+)/g)) named.add(m[1]!);
    for (const call of failureCalls(text)) {
      // The type: `type: '…'` in create({ … }), else the last string argument of nonRetryable / retryable.
      const literal = /\btype:\s*'(\w+)'/.exec(call)?.[1] ?? /,\s*'(\w+)',?\s*\)$/.exec(call)?.[1];
      const constant = /\bFAILURE\.(\w+)/.exec(call)?.[1] ?? /\bCONTEXT_WINDOW_EXCEEDED\b/.exec(call)?.[0];
      const type = literal ?? (constant === 'CONTEXT_WINDOW_EXCEEDED' ? FAILURE.ContextWindowExceeded : constant);
      if (type === undefined) {
        // A variable (a table lookup like activity-support's): its values are FAILURE.… names, counted above.
        assert.match(call, /,\s*type\s*\)$|type:\s*\w+\b(?!')/, `src/${file}: a failure whose type cannot be read:\n${call}`);
        continue;
      }
      thrown.set(type, file);
    }
  }
  for (const [type, file] of thrown)
    assert.ok(isFailureType(type), `src/${file} throws failure type "${type}", which is not in src/failure-types.ts`);
  for (const type of named) assert.ok(isFailureType(type), `FAILURE.${type} is not in the table`);
  const ours = Object.entries(FAILURE_TYPES)
    .filter(([, info]) => !info.thrownBy.includes('not ours'))
    .map(([type]) => type);
  for (const type of ours) assert.ok(thrown.has(type) || named.has(type), `"${type}" is in the table but nothing in src/ throws it`);
});

test('docs/errors.md lists every failure type with its code', () => {
  const page = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
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
