import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { CheckpointStore } from '../../src/checkpoints/shadow-repo.js';
import { DecryptionError } from '../../src/errors.js';
import { FileObjectStore, ObjectStoreError } from '../../src/storage/object-store.js';
import { firstFence, manifestCounts, mayShip, moveFence, pickManifest, manifestKey } from '../../src/workspaces/fence.js';
import {
  FULL_BUNDLE_EVERY,
  conversationPrefix,
  findManifest,
  materialiseWorkspace,
  shipCheckpoint,
  writeFence,
} from '../../src/workspaces/shipping.js';

test('the fence: a lost host ships nothing and what it shipped after its epoch ended never counts', () => {
  const one = firstFence('host-a');
  assert.ok(mayShip(one, 1));
  assert.ok(mayShip(undefined, 1), 'no fence yet: epoch 1 may ship');
  assert.ok(!mayShip(undefined, 2));
  const two = moveFence(one, 'host-b', 4);
  assert.deepEqual(two, { epoch: 2, host: 'host-b', ended: [{ epoch: 1, host: 'host-a', lastStep: 4 }] });
  assert.ok(!mayShip(two, 1), 'the lost host is fenced');
  assert.ok(mayShip(two, 2));
  assert.ok(manifestCounts(two, { epoch: 1, step: 4 }));
  assert.ok(!manifestCounts(two, { epoch: 1, step: 5 }), 'shipped by the lost host after the move');
  assert.ok(manifestCounts(two, { epoch: 2, step: 5 }));
  assert.ok(!manifestCounts(two, { epoch: 3, step: 5 }), 'an epoch that never was');
  const p = 'conversations/c';
  const keys = [manifestKey(p, 3, 1), manifestKey(p, 4, 1), manifestKey(p, 5, 1), manifestKey(p, 6, 1), manifestKey(p, 5, 2)];
  assert.equal(pickManifest(two, keys), manifestKey(p, 5, 2));
  assert.equal(pickManifest(two, keys, 4), manifestKey(p, 4, 1));
  assert.equal(pickManifest(one, keys), manifestKey(p, 6, 1));
  assert.equal(pickManifest(two, ['junk', `${p}/steps/x@1.json`]), undefined);
});

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const root = await mkdtemp(path.join(tmpdir(), 'faheem-ship-test-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const workspace = path.join(root, 'ws');
  await mkdir(workspace);
  const checkpoints = new CheckpointStore({ home: path.join(root, 'home'), env: process.env, watch: false });
  const shadow = await checkpoints.open(workspace);
  const store = new FileObjectStore(path.join(root, 'store'));
  return { root, workspace, shadow, store };
}

test('each step ships the new objects only; any step materialises elsewhere', async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  await writeFile(path.join(workspace, 'a.txt'), 'one\n');
  await mkdir(path.join(workspace, 'src'));
  await writeFile(path.join(workspace, 'src', 'big.bin'), randomBytes(200_000));
  const c1 = await shadow.snapshot('conv/1', 1);
  const m1 = await shipCheckpoint(
    store,
    { conversationId: 'conv/1', step: 1, epoch: 1, host: 'h1', gitDir: shadow.gitDir, commit: c1.commit },
    {},
  );
  assert.equal(m1.bundles.length, 1);
  await writeFile(path.join(workspace, 'a.txt'), 'two\n');
  const c2 = await shadow.snapshot('conv/1', 2);
  const m2 = await shipCheckpoint(
    store,
    { conversationId: 'conv/1', step: 2, epoch: 1, host: 'h1', gitDir: shadow.gitDir, commit: c2.commit, previous: m1 },
    {},
  );
  assert.equal(m2.bundles.length, 2);
  const sizes = await Promise.all(m2.bundles.map(async (k) => (await store.head(k))!.size));
  assert.ok(sizes[0]! > 200_000, `the first bundle holds the big file (${sizes[0]})`);
  assert.ok(sizes[1]! < 2_000, `the second holds only the change (${sizes[1]} bytes)`);
  // Unchanged: no new bundle.
  const m3 = await shipCheckpoint(
    store,
    { conversationId: 'conv/1', step: 3, epoch: 1, host: 'h1', gitDir: shadow.gitDir, commit: c2.commit, previous: m2 },
    {},
  );
  assert.deepEqual(m3.bundles, m2.bundles);

  const latest = await findManifest(store, 'conv/1', undefined, {});
  assert.equal(latest?.step, 3);
  const there = path.join(root, 'elsewhere');
  await materialiseWorkspace(store, latest!, there, {});
  assert.equal(await readFile(path.join(there, 'a.txt'), 'utf8'), 'two\n');
  assert.deepEqual(await readFile(path.join(there, 'src', 'big.bin')), await readFile(path.join(workspace, 'src', 'big.bin')));
  const atOne = path.join(root, 'at-one');
  await materialiseWorkspace(store, (await findManifest(store, 'conv/1', 1, {}))!, atOne, {});
  assert.equal(await readFile(path.join(atOne, 'a.txt'), 'utf8'), 'one\n');
  await assert.rejects(
    findManifest(store, 'conv/1', 7, {}),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'not_found',
  );
  assert.equal(await findManifest(store, 'other', undefined, {}), undefined);
});

test(`a full bundle every ${FULL_BUNDLE_EVERY} shipments keeps a restore's chain short`, async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  let previous;
  for (let step = 1; step <= FULL_BUNDLE_EVERY + 2; step++) {
    await writeFile(path.join(workspace, 'n.txt'), `${step}\n`);
    const c = await shadow.snapshot('c', step);
    previous = await shipCheckpoint(
      store,
      { conversationId: 'c', step, epoch: 1, host: 'h', gitDir: shadow.gitDir, commit: c.commit, ...(previous ? { previous } : {}) },
      {},
    );
  }
  assert.equal(previous!.bundles.length, 2, 'a full one, then one more');
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, previous!, there, {});
  assert.equal(await readFile(path.join(there, 'n.txt'), 'utf8'), `${FULL_BUNDLE_EVERY + 2}\n`);
});

test('a moved conversation fences the lost host out of the store', async (t) => {
  const { workspace, shadow, store } = await setup(t);
  await writeFile(path.join(workspace, 'f'), '1');
  const c1 = await shadow.snapshot('c', 1);
  const m1 = await shipCheckpoint(
    store,
    { conversationId: 'c', step: 1, epoch: 1, host: 'a', gitDir: shadow.gitDir, commit: c1.commit },
    {},
  );
  await writeFence(store, 'c', moveFence(firstFence('a'), 'b', 1), undefined);
  await writeFile(path.join(workspace, 'f'), '2');
  const c2 = await shadow.snapshot('c', 2);
  await assert.rejects(
    shipCheckpoint(
      store,
      { conversationId: 'c', step: 2, epoch: 1, host: 'a', gitDir: shadow.gitDir, commit: c2.commit, previous: m1 },
      {},
    ),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'fenced',
  );
  // Even a manifest the lost host slipped in before it read the fence is not taken.
  await store.put(manifestKey(conversationPrefix('c'), 2, 1), await store.getBytes(manifestKey(conversationPrefix('c'), 1, 1)));
  assert.equal((await findManifest(store, 'c', undefined, {}))?.step, 1);
});

test('with a payload key the store holds ciphertext, and another key cannot read it', async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  const env = { FAHEEM_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  await writeFile(path.join(workspace, 'secret.txt'), 'guava-guava-guava\n');
  const c = await shadow.snapshot('c', 1);
  const m = await shipCheckpoint(
    store,
    { conversationId: 'c', step: 1, epoch: 1, host: 'h', gitDir: shadow.gitDir, commit: c.commit },
    env,
  );
  for (const key of await store.list('')) {
    assert.ok(!Buffer.from(await store.getBytes(key)).includes('guava'), key);
    assert.ok(!Buffer.from(await store.getBytes(key)).includes(c.commit), `${key} names no commit in clear`);
  }
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, (await findManifest(store, 'c', undefined, env))!, there, env);
  assert.equal(await readFile(path.join(there, 'secret.txt'), 'utf8'), 'guava-guava-guava\n');
  const other = { FAHEEM_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  await assert.rejects(findManifest(store, 'c', undefined, other), DecryptionError);
  await assert.rejects(materialiseWorkspace(store, m, path.join(root, 'nope'), {}), ObjectStoreError);
  assert.deepEqual(await readdir(path.join(root, 'nope')).catch(() => []), []);
  await unlink(path.join(workspace, 'secret.txt'));
});
