// withTimeout (src/core/timeout.ts): the result when it comes first, the caller's error when time runs out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NoWorkerError } from '../../../src/core/errors.js';
import { withTimeout } from '../../../src/core/timeout.js';

test('the result, or the failure, of work that settles in time', async () => {
  assert.equal(await withTimeout(Promise.resolve(7), 60_000, () => new Error('late')), 7);
  await assert.rejects(
    withTimeout(Promise.reject(new Error('own')), 60_000, () => new Error('late')),
    /own/,
  );
});

test("work that never settles: the caller's error", async () => {
  const never = new Promise<never>(() => undefined);
  await assert.rejects(
    withTimeout(never, 1, () => new NoWorkerError('no worker answered')),
    (err: unknown) => err instanceof NoWorkerError && err.message === 'no worker answered',
  );
});
