import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimiter, RecentStarts, StreamSlots } from '../../../src/api/limits.js';
import { ApiProblem } from '../../../src/api/problems.js';

test('a tenant may burst up to its rate, then waits; another tenant has its own bucket', () => {
  let now = 0;
  const limiter = new RateLimiter(() => now);
  for (let i = 0; i < 3; i++) assert.equal(limiter.take('acme', 3), undefined);
  assert.equal(limiter.take('acme', 3), 1, 'the fourth in the same instant waits a second');
  assert.equal(limiter.take('other', 3), undefined);
  now += 400; // 1.2 tokens back
  assert.equal(limiter.take('acme', 3), undefined);
  assert.equal(limiter.take('acme', 3), 1);
});

test('a slow rate says how many seconds to wait', () => {
  let now = 0;
  const limiter = new RateLimiter(() => now);
  assert.equal(limiter.take('acme', 0.25), undefined, 'a fresh bucket holds its size (below one token: still one request)');
  now += 1_000;
  assert.equal(limiter.take('acme', 0.25), 3, 'a quarter of a token back, three quarters to go');
});

test('recent starts are counted until visibility has had time to list them', () => {
  let now = 0;
  const recent = new RecentStarts(10_000, () => now);
  recent.add('acme', 'a');
  now += 5_000;
  recent.add('acme', 'b');
  assert.deepEqual(recent.of('acme'), ['a', 'b']);
  assert.deepEqual(recent.of('other'), []);
  now += 6_000;
  assert.deepEqual(recent.of('acme'), ['b']);
});

test('a tenant holds at most its stream slots; a slot given back twice counts once', () => {
  const slots = new StreamSlots(2);
  const a = slots.take('acme');
  slots.take('acme');
  assert.throws(
    () => slots.take('acme'),
    (err: ApiProblem) => err.status === 429 && err.headers['Retry-After'] === '5',
  );
  slots.take('other');
  a();
  a();
  slots.take('acme');
  assert.throws(() => slots.take('acme'), ApiProblem);
});
