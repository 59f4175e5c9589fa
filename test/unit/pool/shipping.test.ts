import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import proto from '@temporalio/proto';
import { CheckpointStore } from '../../../src/time-travel/shadow-repo.js';
import { encryptionCodec } from '../../../src/security/codec.js';
import { FileObjectStore, ObjectStoreError } from '../../../src/storage/object-store.js';
import { firstFence, manifestCounts, moveFence, pickManifest, manifestKey, type StepManifest } from '../../../src/pool/fence.js';
import {
  FULL_BUNDLE_EVERY,
  conversationPrefix,
  joinPacks,
  decodeStep,
  encodeStep,
  findManifest,
  forkShipped,
  materialiseWorkspace,
  openObject,
  packSince,
  sealObject,
  shipCheckpoint,
  storeGuarantee,
  writeFence,
} from '../../../src/pool/shipping.js';
import { codecSettings } from '../../../src/settings/codec.js';
import { storeSettings } from '../../../src/settings/store.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;

/** The codec of the payload keys `env` sets (undefined: none). */
const codecOf = (env: Record<string, string | undefined>) => encryptionCodec(codecSettings(env));

test('the fence: what a lost host shipped after its epoch ended never counts', () => {
  const one = firstFence('host-a');
  const two = moveFence(one, 'host-b', 4);
  assert.deepEqual(two, { epoch: 2, host: 'host-b', ended: [{ epoch: 1, host: 'host-a', lastStep: 4 }] });
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

/**
 * Ships conversation `c`'s checkpoint after each step, each following the last (epoch 1, host h),
 * folding the chain every `fullBundleEvery` shipments (shipCheckpoint's default when undefined).
 */
function chainOf(shadow: Awaited<ReturnType<typeof setup>>['shadow'], store: FileObjectStore, fullBundleEvery?: number) {
  let previous: StepManifest | undefined;
  const ship = async (step: number) => {
    const c = await shadow.snapshot('c', step);
    previous = await shipCheckpoint(
      store,
      { conversationId: 'c', step, epoch: 1, host: 'h', gitDir: shadow.gitDir, commit: c.commit, ...(previous ? { previous } : {}) },
      {},
      undefined,
      fullBundleEvery,
    );
  };
  return { ship, last: () => previous! };
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
    undefined,
  );
  assert.equal(m1.bundles.length, 1);
  await writeFile(path.join(workspace, 'a.txt'), 'two\n');
  const c2 = await shadow.snapshot('conv/1', 2);
  const m2 = await shipCheckpoint(
    store,
    { conversationId: 'conv/1', step: 2, epoch: 1, host: 'h1', gitDir: shadow.gitDir, commit: c2.commit, previous: m1 },
    {},
    undefined,
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
    undefined,
  );
  assert.deepEqual(m3.bundles, m2.bundles);

  const latest = await findManifest(store, 'conv/1', undefined, undefined);
  assert.equal(latest?.step, 3);
  const there = path.join(root, 'elsewhere');
  await materialiseWorkspace(store, 'conv/1', latest!, there, {}, undefined);
  assert.equal(await readFile(path.join(there, 'a.txt'), 'utf8'), 'two\n');
  assert.deepEqual(await readFile(path.join(there, 'src', 'big.bin')), await readFile(path.join(workspace, 'src', 'big.bin')));
  const atOne = path.join(root, 'at-one');
  await materialiseWorkspace(store, 'conv/1', (await findManifest(store, 'conv/1', 1, undefined))!, atOne, {}, undefined);
  assert.equal(await readFile(path.join(atOne, 'a.txt'), 'utf8'), 'one\n');
  await assert.rejects(
    findManifest(store, 'conv/1', 7, undefined),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'not_found',
  );
  assert.equal(await findManifest(store, 'other', undefined, undefined), undefined);
});

test('a step is one object in the store; a chain of the earlier layout (a pack beside its manifest) still restores', async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  await writeFile(path.join(workspace, 'a.txt'), 'one\n');
  const c1 = await shadow.snapshot('c', 1);
  const prefix = conversationPrefix('c');
  // Earlier layout: step 1's pack at packs/…, its manifest alone at steps/….
  const oldPack = `${prefix}/packs/00000001@1.pack`;
  await store.put(oldPack, await sealObject(oldPack, await packSince(shadow.gitDir, c1.commit, undefined, process.env), undefined));
  const m1: StepManifest = { step: 1, epoch: 1, host: 'h', commit: c1.commit, bundles: [oldPack] };
  await store.put(manifestKey(prefix, 1, 1), await sealObject(manifestKey(prefix, 1, 1), Buffer.from(JSON.stringify(m1)), undefined));
  // This version ships step 2 on top of it: one object, which holds both its manifest and its pack.
  await writeFile(path.join(workspace, 'b.txt'), 'two\n');
  const c2 = await shadow.snapshot('c', 2);
  const before = await store.list('');
  const m2 = await shipCheckpoint(
    store,
    { conversationId: 'c', step: 2, epoch: 1, host: 'h', gitDir: shadow.gitDir, commit: c2.commit, previous: m1 },
    {},
    undefined,
  );
  const added = (await store.list('')).filter((k) => !before.includes(k));
  assert.deepEqual(added, [manifestKey(prefix, 2, 1)], 'one object for the step');
  assert.deepEqual(m2.bundles, [oldPack, manifestKey(prefix, 2, 1)]);
  const stored = decodeStep(await openObject(manifestKey(prefix, 2, 1), await store.getBytes(manifestKey(prefix, 2, 1)), undefined));
  assert.deepEqual(stored.manifest, m2);
  assert.ok(stored.pack && stored.pack.subarray(0, 4).toString() === 'PACK', 'the pack follows the manifest');
  for (const step of [1, 2]) {
    const there = path.join(root, `at-${step}`);
    await materialiseWorkspace(store, 'c', (await findManifest(store, 'c', step, undefined))!, there, {}, undefined);
    assert.deepEqual((await readdir(there)).sort(), step === 1 ? ['a.txt'] : ['a.txt', 'b.txt']);
  }
  // A chain that names a step object without a pack is a clear error, not a wrong workspace.
  const broken: StepManifest = { ...m2, step: 3, bundles: [manifestKey(prefix, 1, 1)] };
  await assert.rejects(
    materialiseWorkspace(store, 'c', broken, path.join(root, 'broken'), {}, undefined),
    (err: unknown) => err instanceof ObjectStoreError && /holds no pack/.test(err.message),
  );
});

test("a step shipped again in its epoch (a seed's step 0, then the first host's) keeps the chain whole", async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  await writeFile(path.join(workspace, 'seed.txt'), 'seed\n');
  const c0 = await shadow.snapshot('c', 0);
  const ship = (commit: string, host: string, previous?: StepManifest) =>
    shipCheckpoint(
      store,
      { conversationId: 'c', step: 0, epoch: 1, host, gitDir: shadow.gitDir, commit, ...(previous ? { previous } : {}) },
      {},
      undefined,
    );
  const seeded = await ship(c0.commit, 'seed');
  const again = await ship(c0.commit, 'a', seeded); // unchanged: the seed's object stays
  assert.deepEqual(again.bundles, seeded.bundles);
  await writeFile(path.join(workspace, 'more.txt'), 'more\n');
  const c0b = await shadow.snapshot('c', 1);
  const changed = await ship(c0b.commit, 'a', seeded); // changed in the same step and epoch: a full pack of its own
  assert.deepEqual(changed.bundles, [manifestKey(conversationPrefix('c'), 0, 1)]);
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c', (await findManifest(store, 'c', 0, undefined))!, there, {}, undefined);
  assert.deepEqual((await readdir(there)).sort(), ['more.txt', 'seed.txt']);
});

// The chain rules hold for any length: the tests fold every EVERY shipments (FULL_BUNDLE_EVERY, 100,
// would make them ship 100-200 steps of git work for the same claims).
const EVERY = 5;
test('unless told otherwise, a chain grows to FULL_BUNDLE_EVERY before it is folded', async (t) => {
  assert.ok(FULL_BUNDLE_EVERY > EVERY + 1);
  const { workspace, shadow, store } = await setup(t);
  const { ship, last } = chainOf(shadow, store);
  for (let step = 1; step <= EVERY + 1; step++) {
    await writeFile(path.join(workspace, 'n.txt'), `${step}\n`);
    await ship(step);
  }
  assert.equal(last().bundles.length, EVERY + 1);
});

test(`a full bundle every N shipments keeps a restore's chain short`, async (t) => {
  const FULL_BUNDLE_EVERY = EVERY;
  const { root, workspace, shadow, store } = await setup(t);
  const { ship, last } = chainOf(shadow, store, FULL_BUNDLE_EVERY);
  for (let step = 1; step <= FULL_BUNDLE_EVERY + 2; step++) {
    await writeFile(path.join(workspace, 'n.txt'), `${step}\n`);
    await ship(step);
  }
  const previous = last();
  assert.equal(previous.bundles.length, 2, 'a full one, then one more');
  // The workspace is one small file: its full pack is under FOLD_FLOOR_BYTES, so the history was
  // packed whole again at step FULL_BUNDLE_EVERY + 1 (its size is the history's; a fold is no smaller).
  assert.equal(previous.bundles[0], manifestKey(conversationPrefix('c'), FULL_BUNDLE_EVERY + 1, 1));
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c', previous, there, {}, undefined);
  assert.equal(await readFile(path.join(there, 'n.txt'), 'utf8'), `${FULL_BUNDLE_EVERY + 2}\n`);
});

test('a chain is applied as one pack: an object shipped twice restores', async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  const { ship, last } = chainOf(shadow, store);
  await writeFile(path.join(workspace, 'a.txt'), 'first\n');
  await ship(1);
  await writeFile(path.join(workspace, 'a.txt'), 'second\n');
  await ship(2);
  await writeFile(path.join(workspace, 'a.txt'), 'first\n'); // the step's pack holds step 1's blob again
  await ship(3);
  assert.equal(last().bundles.length, 3);
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c', last(), there, {}, undefined);
  assert.equal(await readFile(path.join(there, 'a.txt'), 'utf8'), 'first\n');
  // A pack whose header is not version 2 is not joined: the caller gives the packs to git one by one.
  const pack = decodeStep(await openObject(last().bundles[0]!, await store.getBytes(last().bundles[0]!), undefined)).pack!;
  assert.ok(joinPacks([pack, pack]));
  const v3 = Buffer.from(pack);
  v3.writeUInt32BE(3, 4);
  assert.equal(joinPacks([pack, v3]), undefined);
  assert.equal(joinPacks([pack, Buffer.from('PACK')]), undefined);
  const flipped = Buffer.from(pack);
  flipped[14]! ^= 1; // a byte of an entry: the trailer no longer matches
  assert.equal(joinPacks([pack, flipped]), undefined);
});

test("a chain where a delta's base was shipped twice restores: its packs go one by one", async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  const { ship, last } = chainOf(shadow, store);
  const text = (end: string) => `${'a line that stays the same in every version\n'.repeat(100)}${end}\n`;
  await writeFile(path.join(workspace, 'a.txt'), text('A'));
  await ship(1);
  await writeFile(path.join(workspace, 'a.txt'), text('B'));
  await ship(2);
  await writeFile(path.join(workspace, 'a.txt'), text('A'));
  await ship(3); // step 3's pack holds step 1's blob again, whole
  // Packed (as after a restore): step 4's pack is git's, thin, its blob a delta against that blob.
  execFileSync('git', ['--git-dir', shadow.gitDir, '-c', 'repack.writeBitmaps=false', 'repack', '-a', '-d', '-q']);
  await writeFile(path.join(workspace, 'a.txt'), text('C'));
  await ship(4);
  assert.equal(last().bundles.length, 4);
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c', last(), there, {}, undefined);
  assert.equal(await readFile(path.join(there, 'a.txt'), 'utf8'), text('C'));
});

test('a long chain over a large workspace is folded since its full pack, not packed whole again', async (t) => {
  const FULL_BUNDLE_EVERY = EVERY;
  const { root, workspace, shadow, store } = await setup(t);
  await writeFile(path.join(workspace, 'big.bin'), randomBytes(300_000));
  const { ship, last } = chainOf(shadow, store, FULL_BUNDLE_EVERY);
  const sizes: number[] = [];
  for (let step = 1; step <= 2 * FULL_BUNDLE_EVERY; step++) {
    await writeFile(path.join(workspace, 'n.txt'), `${step}\n`);
    await ship(step);
    sizes.push((await store.head(last().bundles.at(-1)!))!.size);
  }
  const previous = last();
  const first = manifestKey(conversationPrefix('c'), 1, 1);
  // Folded at step FULL_BUNDLE_EVERY + 1 (the chain is then two long) and again at 2 * FULL_BUNDLE_EVERY:
  // the full pack stays first.
  assert.deepEqual(previous.bundles, [first, manifestKey(conversationPrefix('c'), 2 * FULL_BUNDLE_EVERY, 1)]);
  assert.equal(previous.base?.commit, (await findManifest(store, 'c', 1, undefined))!.commit);
  assert.ok(sizes.at(-1)! < sizes[0]! / 4, `the fold (${sizes.at(-1)} B) is small beside the full pack (${sizes[0]} B)`);
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c', previous, there, {}, undefined);
  assert.equal(await readFile(path.join(there, 'n.txt'), 'utf8'), `${2 * FULL_BUNDLE_EVERY}\n`);
  assert.equal((await readFile(path.join(there, 'big.bin'))).length, 300_000);
  // A step between folds restores from the full pack, the fold and the steps after it.
  const mid = (await findManifest(store, 'c', FULL_BUNDLE_EVERY + 3, undefined))!;
  assert.equal(mid.bundles.length, 4);
  const between = path.join(root, 'between');
  await materialiseWorkspace(store, 'c', mid, between, {}, undefined);
  assert.equal(await readFile(path.join(between, 'n.txt'), 'utf8'), `${FULL_BUNDLE_EVERY + 3}\n`);
});

test('a moved conversation fences the lost host out: what it ships after the move is never read', async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  await writeFile(path.join(workspace, 'f'), '1');
  const c1 = await shadow.snapshot('c', 1);
  const m1 = await shipCheckpoint(
    store,
    { conversationId: 'c', step: 1, epoch: 1, host: 'a', gitDir: shadow.gitDir, commit: c1.commit },
    {},
    undefined,
  );
  await writeFence(store, 'c', moveFence(firstFence('a'), 'b', 1), undefined);
  // The lost host comes back, not knowing, and ships step 2 of its old epoch: one object, never taken.
  await writeFile(path.join(workspace, 'f'), '2');
  const c2 = await shadow.snapshot('c', 2);
  await shipCheckpoint(
    store,
    { conversationId: 'c', step: 2, epoch: 1, host: 'a', gitDir: shadow.gitDir, commit: c2.commit, previous: m1 },
    {},
    undefined,
  );
  assert.equal((await findManifest(store, 'c', undefined, undefined))?.step, 1);
  await assert.rejects(
    findManifest(store, 'c', 2, undefined),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'not_found',
  );
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c', (await findManifest(store, 'c', undefined, undefined))!, there, {}, undefined);
  assert.equal(await readFile(path.join(there, 'f'), 'utf8'), '1');
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
    codecOf(env),
  );
  for (const key of await store.list('')) {
    assert.ok(!Buffer.from(await store.getBytes(key)).includes('guava'), key);
    assert.ok(!Buffer.from(await store.getBytes(key)).includes(c.commit), `${key} names no commit in clear`);
  }
  const there = path.join(root, 'there');
  await materialiseWorkspace(store, 'c', (await findManifest(store, 'c', undefined, codecOf(env)))!, there, env, codecOf(env));
  assert.equal(await readFile(path.join(there, 'secret.txt'), 'utf8'), 'guava-guava-guava\n');
  const other = { FAHEEM_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  // A key this process lacks is a final, clear error (a claim retried for ever would wedge the conversation).
  await assert.rejects(
    findManifest(store, 'c', undefined, codecOf(other)),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'config' && /is not in FAHEEM_ENCRYPTION_KEYS/.test(err.message),
  );
  await assert.rejects(materialiseWorkspace(store, 'c', m, path.join(root, 'nope'), {}, undefined), ObjectStoreError);
  assert.deepEqual(await readdir(path.join(root, 'nope')).catch(() => []), []);
  await unlink(path.join(workspace, 'secret.txt'));
});

// ---- Objects bound to their place ----

const keyEnv = () => ({ FAHEEM_ENCRYPTION_KEY: randomBytes(32).toString('base64') });

/** An object as someone without the key can write it: a plain Payload. */
function plainObject(bytes: Uint8Array): Uint8Array {
  return ProtoPayload.encode(ProtoPayload.fromObject({ metadata: { encoding: Buffer.from('binary/plain') }, data: bytes })).finish();
}

/** Writes conversation `id`'s workspace as it is restored from `manifest` into `dir`. */
function restore(store: FileObjectStore, id: string, manifest: StepManifest, dir: string, env: Record<string, string>) {
  return materialiseWorkspace(store, id, manifest, dir, env, codecOf(env));
}

const refused = (key: string, why: RegExp) => (err: unknown) =>
  err instanceof ObjectStoreError && err.reason === 'refused' && err.message.includes(key) && why.test(err.message);

test('with a key, an unencrypted object planted at a step is refused, and so is one encrypted unbound', async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  const env = keyEnv();
  await writeFile(path.join(workspace, 'a.txt'), 'mine\n');
  const c1 = await shadow.snapshot('c', 1);
  const m1 = await shipCheckpoint(
    store,
    { conversationId: 'c', step: 1, epoch: 1, host: 'h', gitDir: shadow.gitDir, commit: c1.commit },
    env,
    codecOf(env),
  );
  // Someone who can write to the store but has no key plants step 2: a workspace of their own.
  await writeFile(path.join(workspace, 'a.txt'), 'planted\n');
  const c2 = await shadow.snapshot('c', 2);
  const key2 = manifestKey(conversationPrefix('c'), 2, 1);
  const forged: StepManifest = { step: 2, epoch: 1, host: 'h', commit: c2.commit, bundles: [...m1.bundles, key2] };
  await store.put(key2, plainObject(encodeStep(forged, await packSince(shadow.gitDir, c2.commit, c1.commit, process.env))));
  await assert.rejects(findManifest(store, 'c', undefined, codecOf(env)), refused(key2, /not encrypted.*FAHEEM_ENCRYPTION_KEY/));
  // Encrypted with the key but without its place (as versions before binding wrote): refused too.
  const [sealed] = await codecOf(env)!.encode([
    { metadata: { encoding: Buffer.from('binary/plain') }, data: encodeStep(forged, undefined) },
  ]);
  await store.put(key2, ProtoPayload.encode(ProtoPayload.fromObject(sealed!)).finish());
  await assert.rejects(findManifest(store, 'c', undefined, codecOf(env)), refused(key2, /not bound to its place/));
  // Step 1 is still what was shipped.
  const there = path.join(root, 'there');
  await restore(store, 'c', (await findManifest(store, 'c', 1, codecOf(env)))!, there, env);
  assert.equal(await readFile(path.join(there, 'a.txt'), 'utf8'), 'mine\n');
});

/** Ships step `step` of conversation `id` (epoch 1, host h) from `gitDir`, after `previous` when given. */
function shipperOf(store: Parameters<typeof shipCheckpoint>[0], gitDir: string, env: Parameters<typeof shipCheckpoint>[2]) {
  return (id: string, step: number, commit: string, previous?: StepManifest) =>
    shipCheckpoint(
      store,
      { conversationId: id, step, epoch: 1, host: 'h', gitDir, commit, ...(previous ? { previous } : {}) },
      env,
      codecOf(env),
    );
}

test("with a key, conversation a's object copied to conversation b's key is refused", async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  const env = keyEnv();
  const ship = shipperOf(store, shadow.gitDir, env);
  await writeFile(path.join(workspace, 'from-a.txt'), 'a\n');
  await ship('a', 1, (await shadow.snapshot('a', 1)).commit);
  await unlink(path.join(workspace, 'from-a.txt'));
  await writeFile(path.join(workspace, 'from-b.txt'), 'b\n');
  const b1 = await ship('b', 1, (await shadow.snapshot('b', 1)).commit);
  await writeFile(path.join(workspace, 'more-b.txt'), 'b\n');
  const b2 = await ship('b', 2, (await shadow.snapshot('b', 2)).commit, b1);
  const keyA = manifestKey(conversationPrefix('a'), 1, 1);
  const keyB = manifestKey(conversationPrefix('b'), 1, 1);
  await store.put(keyB, await store.getBytes(keyA));
  // Read as b's step 1: it does not decrypt there.
  await assert.rejects(findManifest(store, 'b', 1, codecOf(env)), refused(keyB, /does not decrypt as the object at this key/));
  // Named in b's chain (step 2 is b's own): the same, and nothing is written.
  assert.deepEqual((await findManifest(store, 'b', 2, codecOf(env)))?.bundles, b2.bundles);
  const there = path.join(root, 'there');
  await assert.rejects(restore(store, 'b', b2, there, env), refused(keyB, /does not decrypt as the object at this key/));
  assert.deepEqual(await readdir(there).catch(() => []), []);
});

test("a chain that names another conversation's object is refused", async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  await writeFile(path.join(workspace, 'from-a.txt'), 'a\n');
  const a1 = await shadow.snapshot('a', 1);
  const ma = await shipCheckpoint(
    store,
    { conversationId: 'a', step: 1, epoch: 1, host: 'h', gitDir: shadow.gitDir, commit: a1.commit },
    {},
    undefined,
  );
  // b's manifest names a's step object, though b was never forked from a.
  const mb = await shipCheckpoint(
    store,
    { conversationId: 'b', step: 1, epoch: 1, host: 'h', gitDir: shadow.gitDir, commit: a1.commit, previous: ma },
    {},
    undefined,
  );
  assert.deepEqual(mb.bundles, ma.bundles);
  const there = path.join(root, 'there');
  await assert.rejects(
    restore(store, 'b', (await findManifest(store, 'b', undefined, undefined))!, there, {}),
    refused(ma.bundles[0]!, /outside conversation b/),
  );
  assert.deepEqual(await readdir(there).catch(() => []), []);
});

test('with a key a shipped step restores, and so does a fork, and a fork of a fork', async (t) => {
  const { root, workspace, shadow, store } = await setup(t);
  const env = keyEnv();
  const ship = shipperOf(store, shadow.gitDir, env);
  const files = async (id: string, step: number) => {
    const dir = path.join(root, `${id}-${step}`);
    await restore(store, id, (await findManifest(store, id, step, codecOf(env)))!, dir, env);
    return (await readdir(dir)).sort();
  };
  await writeFile(path.join(workspace, 'one.txt'), '1');
  const a1 = await ship('a', 1, (await shadow.snapshot('a', 1)).commit);
  await writeFile(path.join(workspace, 'two.txt'), '2');
  await ship('a', 2, (await shadow.snapshot('a', 2)).commit, a1);
  assert.deepEqual(await files('a', 2), ['one.txt', 'two.txt']);
  // b is a fork of a at step 2: its chain is a's objects, then its own.
  await forkShipped(store, 'a', 2, 'b', codecOf(env));
  assert.deepEqual(await files('b', 2), ['one.txt', 'two.txt']);
  await writeFile(path.join(workspace, 'three.txt'), '3');
  const b3 = await ship('b', 3, (await shadow.snapshot('b', 3)).commit, (await findManifest(store, 'b', 2, codecOf(env)))!);
  assert.deepEqual(
    b3.bundles.map((k) => k.split('/')[1]),
    ['a', 'a', 'b'],
  );
  assert.deepEqual(b3.forkSources, ['a']);
  assert.deepEqual(await files('b', 3), ['one.txt', 'three.txt', 'two.txt']);
  // c is a fork of b at step 3: a's objects and b's.
  await forkShipped(store, 'b', 3, 'c', codecOf(env));
  assert.deepEqual((await findManifest(store, 'c', 3, codecOf(env)))?.forkSources, ['b', 'a']);
  assert.deepEqual(await files('c', 3), ['one.txt', 'three.txt', 'two.txt']);
});

test('doctor and a pool worker say a store without a key is unauthenticated', () => {
  assert.equal(storeGuarantee(storeSettings({})), undefined, 'no store: nothing to say');
  assert.equal(storeGuarantee(storeSettings({ FAHEEM_ENCRYPTION_KEY: 'k' })), undefined);
  const open = storeGuarantee(storeSettings({ FAHEEM_OBJECT_STORE: 'file:///srv/store' }));
  assert.equal(open?.bound, false);
  assert.match(open!.detail, /unauthenticated: anyone who can write to it can change what a conversation restores.*FAHEEM_ENCRYPTION_KEY/);
  for (const key of ['FAHEEM_ENCRYPTION_KEY', 'FAHEEM_ENCRYPTION_KEYS']) {
    assert.equal(storeGuarantee(storeSettings({ FAHEEM_OBJECT_STORE: 's3://b/p', [key]: 'k' }))?.bound, true, key);
  }
});
