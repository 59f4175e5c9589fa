import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyedLanes } from '../../../src/core/keyed-lanes.js';

test("a key's tasks run one after the other, another key's beside them", async () => {
  const lanes = new KeyedLanes();
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
