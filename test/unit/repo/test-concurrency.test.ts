// How many test files run at once: from the cores, never below two; an override for e2e.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concurrency } from '../../support/concurrency.js';

test('e2e files: half as many again as cores, two at least; the override wins', () => {
  assert.deepEqual(
    [1, 2, 4, 8].map((c) => concurrency('e2e', c)),
    [2, 3, 6, 12],
  );
  assert.equal(concurrency('e2e', 2, '5'), 5);
  assert.equal(concurrency('e2e', 2, 'nonsense'), 3);
  assert.equal(concurrency('e2e', 2, '0'), 3);
});

test('unit and workflow files: two per core', () => {
  assert.deepEqual(
    [1, 2, 4].map((c) => concurrency('unit', c)),
    [2, 4, 8],
  );
  assert.equal(concurrency('workflow', 8, '3'), 16, 'the override is for e2e only');
});
