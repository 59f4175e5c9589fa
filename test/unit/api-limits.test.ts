import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimiter, RecentStarts, StreamSlots, TenantLanes } from '../../src/api/limits.js';
import { ApiProblem } from '../../src/api/problems.js';

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

test("a tenant's starts run one after the other, another tenant's beside them", async () => {
  const lanes = new TenantLanes();
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = lanes.run('acme', async () => {
    order.push('acme 1 starts');
    await held;
    order.push('acme 1 ends');
  });
  const second = lanes.run('acme', async () => {
    order.push('acme 2');
  });
  const failing = lanes.run('acme', () => Promise.reject(new Error('refused')));
  await lanes.run('other', async () => {
    order.push('other');
  });
  assert.deepEqual(order, ['acme 1 starts', 'other'], 'the other tenant did not wait');
  release();
  await Promise.all([first, second]);
  await assert.rejects(failing, /refused/);
  await lanes.run('acme', async () => order.push('acme 4'));
  assert.deepEqual(order, ['acme 1 starts', 'other', 'acme 1 ends', 'acme 2', 'acme 4'], 'a failed start does not stop the lane');
});
