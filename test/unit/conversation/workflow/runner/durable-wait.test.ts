// waitPlan: how long a `wait` call sleeps for its arguments, capped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitPlan } from '../../../../../src/conversation/workflow/runner/durable-wait.js';
import { WaitArgs } from '../../../../../src/tools/schemas.js';

const now = Date.parse('2026-12-01T09:00:00Z');
const week = 7 * 24 * 3600 * 1000;

test('seconds, until, the past and the cap', () => {
  assert.deepEqual(waitPlan({ seconds: 90 }, now, week), { ms: 90_000, capped: false });
  assert.deepEqual(waitPlan({ until: '2026-12-01T10:00:00Z' }, now, week), { ms: 3_600_000, capped: false });
  assert.deepEqual(waitPlan({ until: '2026-12-01T08:00:00Z' }, now, week), { ms: 0, capped: false });
  assert.deepEqual(waitPlan({ seconds: 30 * 24 * 3600 }, now, week), { ms: week, capped: true });
  // until wins over seconds when both are given
  assert.deepEqual(waitPlan({ seconds: 5, until: '2026-12-01T09:01:00+00:00' }, now, week), { ms: 60_000, capped: false });
});

test('the arguments the model may give', () => {
  assert.ok(WaitArgs.safeParse({ seconds: 3, reason: 'CI' }).success);
  assert.ok(WaitArgs.safeParse({ until: '2026-12-01T10:00:00Z', reason: 'CI' }).success);
  assert.ok(!WaitArgs.safeParse({ reason: 'CI' }).success, 'neither seconds nor until');
  assert.ok(!WaitArgs.safeParse({ seconds: -1, reason: 'CI' }).success);
  assert.ok(!WaitArgs.safeParse({ until: 'tomorrow', reason: 'CI' }).success);
  assert.ok(!WaitArgs.safeParse({ seconds: 3 }).success, 'a reason is required');
});
