import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { CheckpointStore } from '../../../src/time-travel/shadow-repo.js';
import { objectStoreFailure } from '../../../src/time-travel/activity-support.js';
import { FAILURE } from '../../../src/core/failure-types.js';
import { FileObjectStore, ObjectStoreError } from '../../../src/storage/object-store.js';
import {
  claimPoolHost,
  poolSettings,
  pooledWorkspace,
  releasePoolHost,
  releasePoolHostMidStep,
  shipAfterSnapshot,
  type PoolSettings,
} from '../../../src/pool/pool.js';
import { manifestKey } from '../../../src/pool/fence.js';
import { conversationPrefix, findManifest, materialiseWorkspace, readFence } from '../../../src/pool/shipping.js';
import { hibernateAfter, movedCwd } from '../../../src/pool/workflow/pool-rules.js';
import { storeSettings } from '../../../src/settings/store.js';
import { codecSettings } from '../../../src/settings/codec.js';
import { encryptionCodec } from '../../../src/security/codec.js';

test('a pool needs the object store; host id and folder have defaults', () => {
  assert.equal(poolSettings(storeSettings({})), undefined);
  assert.throws(
    () => poolSettings(storeSettings({ FAHEEM_POOL: 'p1' })),
    (err: unknown) => err instanceof ObjectStoreError && /FAHEEM_OBJECT_STORE/.test(err.message),
  );
  assert.throws(() => poolSettings(storeSettings({ FAHEEM_POOL: '../x', FAHEEM_OBJECT_STORE: 'file:///tmp/s' })), ObjectStoreError);
  const s = poolSettings(
    storeSettings({
      FAHEEM_POOL: 'p1',
      FAHEEM_OBJECT_STORE: 'file:///tmp/s',
      FAHEEM_HOST_ID: 'h1',
      FAHEEM_WORKSPACES_DIR: '/srv/ws',
    }),
  )!;
  assert.deepEqual([s.pool, s.hostId, s.workspacesDir], ['p1', 'h1', '/srv/ws']);
  assert.notEqual(pooledWorkspace('/w', 'a.b'), pooledWorkspace('/w', 'a_2Eb'), 'no two ids share a folder');
});

test("the terminal's directory follows the workspace to the new host", () => {
  assert.equal(movedCwd('/a/ws', '/a/ws', '/b/ws'), '/b/ws');
  assert.equal(movedCwd('/a/ws/src/x', '/a/ws', '/b/ws'), '/b/ws/src/x');
  assert.equal(movedCwd('/a/wsother', '/a/ws', '/b/ws'), '/b/ws');
  assert.equal(movedCwd('/etc', '/a/ws', '/b/ws'), '/b/ws');
});

test('a wait in the middle of a step hibernates after the idle bound, only when it may last longer', () => {
  assert.equal(hibernateAfter(500, 3_600_000), 500);
  assert.equal(hibernateAfter(500, undefined), 500, 'an approval without a timeout');
  assert.equal(hibernateAfter(0, 10), 0, 'a bound of 0: at once');
  assert.equal(hibernateAfter(500, 500), undefined, 'the wait ends first');
  assert.equal(hibernateAfter(600_000, 30_000), undefined);
  assert.equal(hibernateAfter(-1, 10_000), undefined);
  assert.equal(hibernateAfter(Number.NaN, 10_000), undefined);
});

interface TestHost {
  settings: PoolSettings;
  checkpoints: CheckpointStore;
}

function host(root: string, id: string, store: FileObjectStore, env: Record<string, string> = {}): TestHost {
  const codec = encryptionCodec(codecSettings(env));
  const settings: PoolSettings = { pool: 'p1', hostId: id, workspacesDir: path.join(root, id, 'ws'), store, codec };
  const checkpoints = new CheckpointStore({
    home: path.join(root, id, 'home'),
    env: process.env,
    watch: false,
    afterSnapshot: shipAfterSnapshot(settings, env),
  });
  return { settings, checkpoints };
}

/** Hosts a and b of pool p1 sharing one folder store, under a root the test removes after it. */
async function twoHosts(t: TestContext): Promise<{ root: string; store: FileObjectStore; a: TestHost; b: TestHost }> {
  const root = await mkdtemp(path.join(tmpdir(), 'faheem-pool-unit-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const store = new FileObjectStore(path.join(root, 'store'));
  return { root, store, a: host(root, 'a', store), b: host(root, 'b', store) };
}

test('a claim restores the last accepted step on the new host; the lost host is fenced out', async (t) => {
  const { store, a, b } = await twoHosts(t);

  const first = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c1', pool: 'p1' }, {});
  assert.deepEqual([first.host, first.epoch, first.restoredFromStep, first.from], ['a', 1, undefined, undefined]);
  assert.deepEqual(await readdir(first.workspace), [], 'nothing shipped yet: an empty folder');
  const repoA = await a.checkpoints.open(first.workspace);
  await writeFile(path.join(first.workspace, 'one.txt'), '1');
  await repoA.snapshot('c1', 1); // shipped before it answers
  await writeFile(path.join(first.workspace, 'two.txt'), '2');
  await repoA.snapshot('c1', 2);
  assert.equal((await findManifest(store, 'c1', undefined, undefined))?.step, 2);

  // The workflow accepted step 1 only (say step 2's answer was lost with the host): b restores step 1.
  const moved = await claimPoolHost(b.settings, b.checkpoints, 'faheem-tools@b', { conversationId: 'c1', pool: 'p1', lastStep: 1 }, {});
  assert.deepEqual([moved.host, moved.epoch, moved.restoredFromStep, moved.from], ['b', 2, 1, 'a']);
  assert.deepEqual((await readdir(moved.workspace)).sort(), ['one.txt']);
  assert.deepEqual(await readFence(store, 'c1', undefined), { epoch: 2, host: 'b', ended: [{ epoch: 1, host: 'a', lastStep: 1 }] });
  assert.equal((await findManifest(store, 'c1', undefined, undefined))?.step, 1, "a's step 2 no longer counts");

  // The lost host comes back and takes a checkpoint: shipped under its ended epoch, never read.
  await writeFile(path.join(first.workspace, 'late.txt'), 'late');
  await repoA.snapshot('c1', 3);
  assert.equal((await findManifest(store, 'c1', undefined, undefined))?.step, 1);

  // b goes on from a's history: its next checkpoint ships the change only, and restores anywhere.
  const repoB = await b.checkpoints.open(moved.workspace);
  await writeFile(path.join(moved.workspace, 'three.txt'), '3');
  await repoB.snapshot('c1', 2);
  const latest = (await findManifest(store, 'c1', undefined, undefined))!;
  assert.deepEqual([latest.step, latest.epoch, latest.bundles.length], [2, 2, 2]);
  const again = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c1', pool: 'p1', lastStep: 2 }, {});
  assert.deepEqual((await readdir(again.workspace)).sort(), ['one.txt', 'three.txt'], 'the stale copy on a is replaced');
  assert.equal(await readFile(path.join(again.workspace, 'three.txt'), 'utf8'), '3');
  assert.ok(!existsSync(path.join(again.workspace, 'late.txt')));
});

test("a host releases a folder it was left as lost in (its processes stopped first) only for that epoch's claim", async (t) => {
  const { a } = await twoHosts(t);
  const stopped: number[] = [];
  const release = (epoch: number) => releasePoolHost(a.settings, a.checkpoints, 'c5', epoch, async () => void stopped.push(epoch));
  const first = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c5', pool: 'p1' }, {});
  // Left as lost, then claimed here again: the late release of the lost epoch leaves the new claim alone.
  const again = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c5', pool: 'p1' }, {});
  assert.equal(await release(first.epoch), false);
  assert.deepEqual(stopped, [], "the new claim's processes run on");
  assert.ok(existsSync(again.workspace));
  assert.equal(await release(again.epoch), true);
  assert.deepEqual(stopped, [again.epoch], 'stopped before the folder went');
  assert.ok(!existsSync(again.workspace));
  assert.equal(await release(again.epoch), false, 'released already: nothing to stop');
  assert.deepEqual(stopped, [again.epoch]);
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

test('hibernating mid-step ships the workspace as it is; the claim restores it, and the step still takes its own checkpoint', async (t) => {
  const { root, store, a, b } = await twoHosts(t);
  const files = async (dir: string) => (await readdir(dir)).sort();

  const first = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c4', pool: 'p1' }, {});
  const repoA = await a.checkpoints.open(first.workspace);
  await writeFile(path.join(first.workspace, 'one.txt'), '1');
  await repoA.snapshot('c4', 1);

  // Step 2 wrote a file, then waits: the folder goes only after the workspace is shipped as it is.
  await writeFile(path.join(first.workspace, 'two.txt'), '2');
  const released = await releasePoolHostMidStep(a.settings, a.checkpoints, { conversationId: 'c4', epoch: first.epoch, step: 2 });
  assert.ok(released.released);
  assert.deepEqual([released.checkpoint.kind, released.checkpoint.step, released.checkpoint.added], ['mid-step', 2, 1]);
  assert.ok(!existsSync(first.workspace), 'the folder is released');
  const shipped = (await findManifest(store, 'c4', undefined, undefined))!;
  assert.deepEqual([shipped.step, shipped.midStep, shipped.commit], [2, true, released.checkpoint.commit]);
  // A retry (the first answer was lost) gets the same answer: the workspace is in the store.
  assert.deepEqual(
    await releasePoolHostMidStep(a.settings, a.checkpoints, { conversationId: 'c4', epoch: first.epoch, step: 2 }),
    released,
  );
  // Another step, or another epoch: nothing held here, nothing to do.
  assert.deepEqual(await releasePoolHostMidStep(a.settings, a.checkpoints, { conversationId: 'c4', epoch: first.epoch, step: 3 }), {
    released: false,
  });
  assert.deepEqual(await releasePoolHostMidStep(a.settings, a.checkpoints, { conversationId: 'c4', epoch: 9, step: 2 }), {
    released: false,
  });
  // Released: nothing this host takes of it is shipped any more.
  await mkdir(first.workspace, { recursive: true });
  await assert.rejects(repoA.snapshot('c4', 3), (err: unknown) => err instanceof ObjectStoreError && err.reason === 'fenced');

  // The wait ends: another host restores the step as it was in the middle.
  const woke = await claimPoolHost(b.settings, b.checkpoints, 'faheem-tools@b', { conversationId: 'c4', pool: 'p1', lastStep: 2 }, {});
  assert.deepEqual([woke.restoredFromStep, woke.epoch], [2, 2]);
  assert.deepEqual(await files(woke.workspace), ['one.txt', 'two.txt']);
  // The rest of the step runs there; the step's own checkpoint has everything it did.
  const repoB = await b.checkpoints.open(woke.workspace);
  assert.deepEqual(await repoB.list('c4'), [], 'the workspace in the middle of step 2 is not its checkpoint');
  await writeFile(path.join(woke.workspace, 'three.txt'), '3');
  const step2 = await repoB.snapshot('c4', 2);
  assert.deepEqual(
    (await repoB.list('c4')).map((c) => [c.step, c.kind]),
    [[2, 'step']],
  );
  assert.equal(step2.parent, released.checkpoint.commit);
  const after2 = (await findManifest(store, 'c4', 2, undefined))!;
  assert.deepEqual([after2.epoch, after2.midStep, after2.commit], [2, undefined, step2.commit]);
  const pulled = path.join(root, 'pulled');
  await materialiseWorkspace(store, 'c4', after2, pulled, {}, undefined);
  assert.deepEqual(await files(pulled), ['one.txt', 'three.txt', 'two.txt']);

  // Twice in one step on the same host: the second takes the workspace as it is then, not the first again.
  await writeFile(path.join(woke.workspace, 'four.txt'), '4');
  assert.ok((await releasePoolHostMidStep(b.settings, b.checkpoints, { conversationId: 'c4', epoch: 2, step: 3 })).released);
  const back = await claimPoolHost(b.settings, b.checkpoints, 'faheem-tools@b', { conversationId: 'c4', pool: 'p1', lastStep: 3 }, {});
  assert.deepEqual(await files(back.workspace), ['four.txt', 'one.txt', 'three.txt', 'two.txt']);
  await writeFile(path.join(back.workspace, 'five.txt'), '5');
  const second = await releasePoolHostMidStep(b.settings, b.checkpoints, { conversationId: 'c4', epoch: back.epoch, step: 3 });
  assert.ok(second.released);
  const onA = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c4', pool: 'p1', lastStep: 3 }, {});
  assert.deepEqual(await files(onA.workspace), ['five.txt', 'four.txt', 'one.txt', 'three.txt', 'two.txt']);
  // And the step ends there: its checkpoint is a new one (the mid-step one is no step ref to reuse).
  await writeFile(path.join(onA.workspace, 'six.txt'), '6');
  const step3 = await (await a.checkpoints.open(onA.workspace)).snapshot('c4', 3);
  assert.notEqual(step3.commit, second.checkpoint.commit);
  assert.equal(step3.added, 1);
});

test('a worker restarted on the host ships on from the claim file it finds, older than the last step', async (t) => {
  const { root, store, a } = await twoHosts(t);
  const first = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: 'c9', pool: 'p1' }, {});
  const repo = await a.checkpoints.open(first.workspace);
  const claimPath = path.join(a.settings.workspacesDir, '.claims', 'c9.json');
  const written: number[] = [];
  for (let step = 1; step <= 13; step++) {
    await writeFile(path.join(first.workspace, `f${step}.txt`), `${step}`);
    await repo.snapshot('c9', step);
    written.push(JSON.parse(await readFile(claimPath, 'utf8')).last.step);
  }
  // The file holds the last step shipped only now and then (the next step reads it from memory).
  assert.deepEqual(written, [1, 2, 2, 2, 2, 2, 2, 2, 2, 10, 10, 10, 10]);
  // A new process (a fresh instance of the module) finds the claim at step 10 and ships step 14 on.
  const fresh = (await import(`../../../src/pool/pool.js?restart=${Date.now()}`)) as typeof import('../../../src/pool/pool.js');
  const restarted = new CheckpointStore({
    home: path.join(root, 'a', 'home'),
    env: process.env,
    watch: false,
    afterSnapshot: fresh.shipAfterSnapshot(a.settings, {}),
  });
  await writeFile(path.join(first.workspace, 'f14.txt'), '14');
  await (await restarted.open(first.workspace)).snapshot('c9', 14);
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c9', (await findManifest(store, 'c9', undefined, undefined))!, there, {}, undefined);
  assert.deepEqual((await readdir(there)).length, 14, 'every file, through a chain that skips steps 11-13');
});

test('with a key, a claim refuses a step object copied from another conversation: a final failure, nothing restored', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'faheem-pool-unit-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const env = { FAHEEM_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  const store = new FileObjectStore(path.join(root, 'store'));
  const a = host(root, 'a', store, env);
  const b = host(root, 'b', store, env);
  for (const id of ['c1', 'c2']) {
    const claimed = await claimPoolHost(a.settings, a.checkpoints, 'faheem-tools@a', { conversationId: id, pool: 'p1' }, env);
    await writeFile(path.join(claimed.workspace, `${id}.txt`), id);
    await (await a.checkpoints.open(claimed.workspace)).snapshot(id, 1);
  }
  const planted = manifestKey(conversationPrefix('c1'), 1, 1);
  await store.put(planted, await store.getBytes(manifestKey(conversationPrefix('c2'), 1, 1)));
  const refusal = await claimPoolHost(
    b.settings,
    b.checkpoints,
    'faheem-tools@b',
    { conversationId: 'c1', pool: 'p1', lastStep: 1 },
    env,
  ).then(
    () => assert.fail('the claim restored an object copied from c2'),
    (err: unknown) => err,
  );
  assert.ok(refusal instanceof ObjectStoreError && refusal.reason === 'refused' && refusal.message.includes(planted), String(refusal));
  // The workflow gets a final failure that says why (the host call fails, and says so), not a claim retried for ever.
  const failed = objectStoreFailure(refusal);
  assert.deepEqual([failed.type, failed.nonRetryable], [FAILURE.ObjectStoreConfig, true]);
  assert.ok(!existsSync(path.join(pooledWorkspace(b.settings.workspacesDir, 'c1'), 'c2.txt')), "c2's files never reach c1's folder");
});
