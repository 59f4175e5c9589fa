import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { CheckpointStore } from '../../src/checkpoints/shadow-repo.js';
import { FileObjectStore, ObjectStoreError } from '../../src/storage/object-store.js';
import { claimPoolHost, poolSettings, pooledWorkspace, shipAfterSnapshot, type PoolSettings } from '../../src/workspaces/pool.js';
import { findManifest, readFence } from '../../src/workspaces/shipping.js';
import { movedCwd } from '../../src/workflows/pool-rules.js';

test('a pool needs the object store; host id and folder have defaults', () => {
  assert.equal(poolSettings({}), undefined);
  assert.throws(
    () => poolSettings({ FAHEEM_POOL: 'p1' }),
    (err: unknown) => err instanceof ObjectStoreError && /FAHEEM_OBJECT_STORE/.test(err.message),
  );
  assert.throws(() => poolSettings({ FAHEEM_POOL: '../x', FAHEEM_OBJECT_STORE: 'file:///tmp/s' }), ObjectStoreError);
  const s = poolSettings({
    FAHEEM_POOL: 'p1',
    FAHEEM_OBJECT_STORE: 'file:///tmp/s',
    FAHEEM_HOST_ID: 'h1',
    FAHEEM_WORKSPACES_DIR: '/srv/ws',
  })!;
  assert.deepEqual([s.pool, s.hostId, s.workspacesDir], ['p1', 'h1', '/srv/ws']);
  assert.notEqual(pooledWorkspace('/w', 'a.b'), pooledWorkspace('/w', 'a_2Eb'), 'no two ids share a folder');
});

test("the terminal's directory follows the workspace to the new host", () => {
  assert.equal(movedCwd('/a/ws', '/a/ws', '/b/ws'), '/b/ws');
  assert.equal(movedCwd('/a/ws/src/x', '/a/ws', '/b/ws'), '/b/ws/src/x');
  assert.equal(movedCwd('/a/wsother', '/a/ws', '/b/ws'), '/b/ws');
  assert.equal(movedCwd('/etc', '/a/ws', '/b/ws'), '/b/ws');
});

interface TestHost {
  settings: PoolSettings;
  checkpoints: CheckpointStore;
}

function host(root: string, id: string, store: FileObjectStore): TestHost {
  const settings: PoolSettings = { pool: 'p1', hostId: id, workspacesDir: path.join(root, id, 'ws'), store };
  const checkpoints = new CheckpointStore({
    home: path.join(root, id, 'home'),
    env: process.env,
    watch: false,
    afterSnapshot: shipAfterSnapshot(settings, {}),
  });
  return { settings, checkpoints };
}

test('a claim restores the last accepted step on the new host; the lost host is fenced out', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'faheem-pool-unit-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const store = new FileObjectStore(path.join(root, 'store'));
  const a = host(root, 'a', store);
  const b = host(root, 'b', store);

  const first = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c1', pool: 'p1' }, {});
  assert.deepEqual([first.host, first.epoch, first.restoredFromStep, first.from], ['a', 1, undefined, undefined]);
  assert.deepEqual(await readdir(first.workspace), [], 'nothing shipped yet: an empty folder');
  const repoA = await a.checkpoints.open(first.workspace);
  await writeFile(path.join(first.workspace, 'one.txt'), '1');
  await repoA.snapshot('c1', 1); // shipped before it answers
  await writeFile(path.join(first.workspace, 'two.txt'), '2');
  await repoA.snapshot('c1', 2);
  assert.equal((await findManifest(store, 'c1', undefined, {}))?.step, 2);

  // The workflow accepted step 1 only (say step 2's answer was lost with the host): b restores step 1.
  const moved = await claimPoolHost(b.settings, b.checkpoints, 'faheem-tools@b', { conversationId: 'c1', pool: 'p1', lastStep: 1 }, {});
  assert.deepEqual([moved.host, moved.epoch, moved.restoredFromStep, moved.from], ['b', 2, 1, 'a']);
  assert.deepEqual((await readdir(moved.workspace)).sort(), ['one.txt']);
  assert.deepEqual(await readFence(store, 'c1', undefined), { epoch: 2, host: 'b', ended: [{ epoch: 1, host: 'a', lastStep: 1 }] });
  assert.equal((await findManifest(store, 'c1', undefined, {}))?.step, 1, "a's step 2 no longer counts");

  // The lost host comes back and takes a checkpoint: shipped under its ended epoch, never read.
  await writeFile(path.join(first.workspace, 'late.txt'), 'late');
  await repoA.snapshot('c1', 3);
  assert.equal((await findManifest(store, 'c1', undefined, {}))?.step, 1);

  // b goes on from a's history: its next checkpoint ships the change only, and restores anywhere.
  const repoB = await b.checkpoints.open(moved.workspace);
  await writeFile(path.join(moved.workspace, 'three.txt'), '3');
  await repoB.snapshot('c1', 2);
  const latest = (await findManifest(store, 'c1', undefined, {}))!;
  assert.deepEqual([latest.step, latest.epoch, latest.bundles.length], [2, 2, 2]);
  const again = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c1', pool: 'p1', lastStep: 2 }, {});
  assert.deepEqual((await readdir(again.workspace)).sort(), ['one.txt', 'three.txt'], 'the stale copy on a is replaced');
  assert.equal(await readFile(path.join(again.workspace, 'three.txt'), 'utf8'), '3');
  assert.ok(!existsSync(path.join(again.workspace, 'late.txt')));
});

test('a workspace outside the pool folder is not shipped; one the host does not hold is refused', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'faheem-pool-unit-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const store = new FileObjectStore(path.join(root, 'store'));
  const a = host(root, 'a', store);
  const plain = path.join(root, 'plain');
  await mkdir(plain);
  await writeFile(path.join(plain, 'f'), 'x');
  await (await a.checkpoints.open(plain)).snapshot('c2', 1);
  assert.deepEqual(await store.list(''), []);
  const stray = pooledWorkspace(a.settings.workspacesDir, 'c3');
  await mkdir(stray, { recursive: true });
  await assert.rejects(
    (await a.checkpoints.open(stray)).snapshot('c3', 1),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'fenced',
  );
});
