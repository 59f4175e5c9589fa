// Shipping a pooled conversation's checkpoints to the object store, and materialising a workspace
// from it on any host. A step's checkpoint (a commit of the shadow repository, see
// time-travel/shadow-repo.ts) goes up as one step object: its manifest and a git pack of the
// objects new since the last shipped commit (written in-process when it can be, step-pack.ts); a
// chain of FULL_BUNDLE_EVERY is folded into one pack since its full pack (so a restore reads a
// bounded chain, and a large workspace is not packed whole again for a small change). The manifest
// names the chain: the step objects (or, from earlier versions, `.pack` and `.bundle` objects)
// whose packs rebuild the commit. One object a step is one request to the store, and a manifest can
// never name a pack that is not there. With a payload key the objects are encrypted by the payload
// codec (security/codec.ts), so the store holds ciphertext, each bound to its key in the store (AES-GCM
// associated data): only objects encrypted for the place they are read from are read, so nobody
// without the key can plant an object or move one from another conversation. A chain reads only
// its own conversation's objects and those of the conversations it was forked from (its manifest's
// `forkSources`). Without a key nothing is authenticated: whoever can write to the store decides
// what a conversation restores (`faheem doctor` and a pool worker's start say so).
//
// Store layout, under `conversations/<encoded id>/`:
//   fence.json                    the epoch that may ship, and where ended epochs stopped (fence.ts)
//   steps/<step>@<epoch>.json     a shipped step (Payload bytes: encrypted or plain): its manifest
//                                 (StepManifest JSON), then, when the step changed files, a newline
//                                 and its pack. A step that changed nothing is the manifest alone.
//                                 `midStep` in the manifest: the workspace in the middle of that step,
//                                 shipped when it hibernated there.
//   packs/<step>@<epoch>.pack     a pack, as earlier versions shipped it beside a manifest alone
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { baseGitEnv, git } from '../time-travel/git.js';
import { usesSha1 } from '../time-travel/objects.js';
import { encodeRefPart } from '../time-travel/shadow-repo.js';
import { DecryptionError } from '../core/errors.js';
import { boundTo, isEncrypted, payloadKeyId, type EncryptionCodec } from '../security/codec.js';
import { ObjectStoreError, type ObjectStore } from '../storage/object-store.js';
import { Fence, StepManifest, manifestKey, parseManifestKey, pickManifest } from './fence.js';
import { objectsSince, writePack } from './step-pack.js';
import type { ChildEnv } from '../environment.js';
import type { StoreSettings } from '../settings/store.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;

/**
 * A chain this long is folded when the next step ships: into one pack of everything since the
 * chain's full pack, or a full pack again when that would be over FOLD_SHARE of the full one. A
 * restore reads at most this many step objects and one more, and applies them as one pack
 * (joinPacks). A fold is a git process (20-50 ms of CPU): 100 makes it under 0.5 ms a step.
 */
export const FULL_BUNDLE_EVERY = 100;

/** A fold larger than this share of the chain's full pack is replaced by a full pack. */
export const FOLD_SHARE = 0.5;

/**
 * A chain's full pack under this size is made again instead of folded: it costs one git process,
 * as a fold does, and a small workspace's history is its size (a fold of it is seldom small beside it).
 */
export const FOLD_FLOOR_BYTES = 64 * 1024;

/**
 * What the workspace store (FAHEEM_OBJECT_STORE) guarantees under `settings`, for `faheem doctor` and
 * a pool worker's start: undefined without a store; `bound` with a key (FAHEEM_ENCRYPTION_KEY(S)).
 */
export function storeGuarantee(settings: Pick<StoreSettings, 'url' | 'codec'>): { bound: boolean; detail: string } | undefined {
  if (!settings.url) return undefined;
  if (settings.codec.encrypts) {
    return { bound: true, detail: 'workspace objects are encrypted and bound to their place: a planted or moved object is refused' };
  }
  return {
    bound: false,
    detail:
      'the workspace store is unauthenticated: anyone who can write to it can change what a conversation restores ' +
      '(set FAHEEM_ENCRYPTION_KEY to bind objects to their place)',
  };
}

/** The store prefix of a conversation. */
export function conversationPrefix(conversationId: string): string {
  return `conversations/${encodeRefPart(conversationId)}`;
}

/** What a bound object's associated data is: its key in the store (ASSOCIATED_DATA_METADATA). */
const BOUND_TO_KEY = 'store-key';

/**
 * The associated data an object at `key` is encrypted with: its key, relative to the store's own
 * prefix (a store moved whole to another bucket or folder still reads).
 */
function placeOf(key: string): Buffer {
  return Buffer.from(`faheemcode store object\n${key}`);
}

/** Bytes to the stored form at `key`: the codec's Payload encrypted and bound to `key` with a key, a plain Payload without. */
export async function sealObject(key: string, bytes: Uint8Array, codec: EncryptionCodec | undefined): Promise<Uint8Array> {
  const plain: Payload = { metadata: { encoding: new TextEncoder().encode('binary/plain') }, data: bytes };
  const sealed = codec ? codec.encodeBound(plain, BOUND_TO_KEY, placeOf(key)) : plain;
  return ProtoPayload.encode(ProtoPayload.fromObject(sealed)).finish();
}

/**
 * The stored form read from `key` back to bytes. With a key only an object encrypted for `key` is
 * read: one in clear, one encrypted unbound (by a version before objects were bound) or one bound to
 * another key is refused (ObjectStoreError `refused`), as is one whose key this process lacks
 * (`config`); neither is retried.
 */
export async function openObject(key: string, stored: Uint8Array, codec: EncryptionCodec | undefined): Promise<Uint8Array> {
  let payload = ProtoPayload.decode(stored) as Payload;
  if (codec) payload = openBound(key, payload, codec);
  const encoding = Buffer.from(payload.metadata?.encoding ?? new Uint8Array()).toString();
  if (encoding !== 'binary/plain') {
    throw new ObjectStoreError(
      'config',
      `the object ${key} in the store is ${encoding || 'not a payload'}: set the FAHEEM_ENCRYPTION_KEY(S) it was written with`,
    );
  }
  return payload.data ?? new Uint8Array();
}

function openBound(key: string, payload: Payload, codec: EncryptionCodec): Payload {
  if (!isEncrypted(payload)) {
    throw new ObjectStoreError(
      'refused',
      `the object ${key} in the store is not encrypted, but FAHEEM_ENCRYPTION_KEY(S) is set: anyone who can write to the store ` +
        'could have put it there, so it is not read',
    );
  }
  if (boundTo(payload) !== BOUND_TO_KEY) {
    throw new ObjectStoreError(
      'refused',
      `the object ${key} in the store is encrypted but not bound to its place (written before objects were bound to their key, ` +
        "or altered): it cannot be told from a copy of another conversation's object, so it is not read",
    );
  }
  const keyId = payloadKeyId(payload) ?? '';
  if (!codec.hasKey(keyId)) {
    throw new ObjectStoreError(
      'config',
      `the object ${key} in the store was encrypted with key ${keyId || '(no id)'}, which is not in FAHEEM_ENCRYPTION_KEYS/FAHEEM_ENCRYPTION_KEY ` +
        'of this process: add that key to FAHEEM_ENCRYPTION_KEYS (the first key encrypts, all decrypt)',
    );
  }
  try {
    return codec.decodeBound(payload, placeOf(key));
  } catch (err) {
    if (!(err instanceof DecryptionError)) throw err;
    throw new ObjectStoreError(
      'refused',
      `the object ${key} in the store does not decrypt as the object at this key (key ${keyId}): it was moved here from ` +
        'another key of the store (another conversation, step or epoch), or altered, so it is not read',
      { cause: err },
    );
  }
}

/** `read()`, or a refusal naming the object when its bytes are not the `what` its place holds. */
function parseObject<T>(key: string, what: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new ObjectStoreError('refused', `the object ${key} in the store is not ${what}: ${why}`, { cause: err });
  }
}

/** The key of a conversation's fence. */
function fenceKey(conversationId: string): string {
  return `${conversationPrefix(conversationId)}/fence.json`;
}

/** Reads the fence (undefined when the conversation has none yet). */
export async function readFence(
  store: ObjectStore,
  conversationId: string,
  codec: EncryptionCodec | undefined,
): Promise<Fence | undefined> {
  const key = fenceKey(conversationId);
  let stored: Uint8Array;
  try {
    stored = await store.getBytes(key);
  } catch (err) {
    if (err instanceof ObjectStoreError && err.reason === 'not_found') return undefined;
    throw err;
  }
  const bytes = await openObject(key, stored, codec);
  return parseObject(key, 'a fence', () => Fence.parse(JSON.parse(Buffer.from(bytes).toString('utf8'))));
}

/** Writes the fence (the workflow's claim of a host decides it; the store only records it). */
export async function writeFence(
  store: ObjectStore,
  conversationId: string,
  fence: Fence,
  codec: EncryptionCodec | undefined,
): Promise<void> {
  const key = fenceKey(conversationId);
  await store.put(key, await sealObject(key, Buffer.from(JSON.stringify(Fence.parse(fence))), codec));
}

/** What a host ships for one step. */
export interface ShipInput {
  conversationId: string;
  /** The step the checkpoint follows. */
  step: number;
  /** The host's epoch (fence.ts): what it ships after that epoch ended never counts. */
  epoch: number;
  host: string;
  /** The shadow repository (bare) and the checkpoint's commit in it. */
  gitDir: string;
  commit: string;
  /** The last manifest this host shipped for the conversation, when there is one. */
  previous?: StepManifest;
  /** The workspace in the middle of the step (hibernating in a wait or an approval), not after it. */
  midStep?: boolean;
}

/**
 * The objects of `commit` that `since` lacks (all of them without `since`) as one pack: written
 * here from the loose objects the snapshot just wrote when `since` is the commit's parent
 * (step-pack.ts), else by one `git pack-objects` (a thin pack: a changed file may be a delta
 * against its version earlier in the chain, which a restore applies first).
 */
export async function packSince(gitDir: string, commit: string, since: string | undefined, env: ChildEnv): Promise<Buffer> {
  if (since && (await usesSha1(gitDir))) {
    const objects = await objectsSince(gitDir, commit, since);
    if (objects) return writePack(objects);
  }
  const gitEnv = { ...baseGitEnv(env), GIT_DIR: gitDir };
  const revs = `${commit}\n${since ? `^${since}\n` : ''}`;
  const { stdout } = await git(['pack-objects', '--revs', '--stdout', '--thin', '--delta-base-offset', '--quiet'], {
    env: gitEnv,
    cwd: gitDir,
    input: revs,
  });
  return stdout;
}

/**
 * Ships a step's checkpoint as one step object (its manifest and its pack): one request to the
 * store. Returns the manifest. The fence is not read here: the host's own claim says it holds the
 * conversation (pool.ts), and what a lost host still writes after its epoch ended is never read
 * (every reader goes through the fence: `pickManifest`). Reading the fence first could not have
 * stopped such a write anyway (another host may claim between the read and the write), and it cost
 * a request a step. Git runs with `env`; the object is sealed with `codec` (the payload keys; none: in clear).
 */
export async function shipCheckpoint(
  store: ObjectStore,
  input: ShipInput,
  env: ChildEnv,
  codec: EncryptionCodec | undefined,
  /** How long a chain grows before it is folded (FULL_BUNDLE_EVERY). */
  fullBundleEvery = FULL_BUNDLE_EVERY,
): Promise<StepManifest> {
  const prefix = conversationPrefix(input.conversationId);
  const previous = input.previous;
  const key = manifestKey(prefix, input.step, input.epoch);
  // Nothing changed since the last shipment: the same chain under the new step.
  const unchanged = previous !== undefined && previous.commit === input.commit;
  // This step's object is in the chain already (a seed's step 0 shipped again by the first host, a
  // step shipped again in the same epoch): writing over it would drop the pack the chain needs, so
  // it is left alone, or (changed, or now marked mid-step) written as a full pack of its own.
  const inChain = previous?.bundles.includes(key) ?? false;
  if (unchanged && inChain && !input.midStep) {
    const { midStep: _midStep, ...same } = previous;
    return { ...same, host: input.host };
  }
  const { pack, bundles, base } = await chainStep(input, key, inChain ? undefined : previous, unchanged, env, fullBundleEvery);
  const manifest: StepManifest = {
    step: input.step,
    epoch: input.epoch,
    host: input.host,
    commit: input.commit,
    bundles,
    ...forkSourcesNamed(previous?.forkSources ?? [], bundles),
    ...(input.midStep ? { midStep: true as const } : {}),
    ...(base ? { base } : {}),
  };
  await store.put(key, await sealObject(key, encodeStep(manifest, pack), codec));
  return manifest;
}

/**
 * What a step adds to the chain (`previous`: the chain it follows; undefined: none, or one it
 * cannot follow): nothing when nothing changed; the objects new since the last shipped commit; or,
 * when the chain is long, one pack since its full pack (a fold, whose cost follows what changed
 * since, not the workspace's size), or a full pack of the whole history when the fold is not small
 * beside it (or the chain's full pack is not known).
 */
async function chainStep(
  input: ShipInput,
  key: string,
  previous: StepManifest | undefined,
  unchanged: boolean,
  env: ChildEnv,
  fullBundleEvery: number,
): Promise<{ pack: Uint8Array | undefined; bundles: string[]; base: StepManifest['base'] }> {
  if (previous && unchanged) return { pack: undefined, bundles: previous.bundles, base: previous.base };
  if (previous && previous.bundles.length < fullBundleEvery) {
    const pack = await packSince(input.gitDir, input.commit, previous.commit, env);
    return { pack, bundles: [...previous.bundles, key], base: previous.base };
  }
  if (previous?.base && previous.base.bytes >= FOLD_FLOOR_BYTES) {
    const fold = await packSince(input.gitDir, input.commit, previous.base.commit, env);
    if (fold.length <= previous.base.bytes * FOLD_SHARE) return { pack: fold, bundles: [previous.bundles[0]!, key], base: previous.base };
  }
  const pack = await packSince(input.gitDir, input.commit, undefined, env);
  return { pack, bundles: [key], base: { commit: input.commit, bytes: pack.length } };
}

/** A step object's bytes: the manifest's JSON (which holds no raw newline), then a newline and the pack. */
export function encodeStep(manifest: StepManifest, pack: Uint8Array | undefined): Buffer {
  const json = Buffer.from(JSON.stringify(manifest));
  return pack ? Buffer.concat([json, NEWLINE, pack]) : json;
}

/** A step object's manifest, and its pack when it has one. */
export function decodeStep(bytes: Uint8Array): { manifest: StepManifest; pack: Uint8Array | undefined } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = buf.indexOf(NEWLINE);
  const manifest = StepManifest.parse(JSON.parse(buf.subarray(0, end < 0 ? buf.length : end).toString('utf8')));
  return { manifest, pack: end < 0 ? undefined : buf.subarray(end + 1) };
}

const NEWLINE = Buffer.from('\n');

/** The pack of the step object a manifest was read from (its key): a restore applies it without reading it again. */
const packsRead = new WeakMap<StepManifest, { key: string; pack: Uint8Array | undefined }>();

/** The manifest to restore (the latest that counts, or the one of `step`), or undefined when none was shipped. */
export async function findManifest(
  store: ObjectStore,
  conversationId: string,
  step: number | undefined,
  codec: EncryptionCodec | undefined,
): Promise<StepManifest | undefined> {
  const prefix = conversationPrefix(conversationId);
  const fence = await readFence(store, conversationId, codec);
  const key = pickManifest(fence, await store.list(`${prefix}/steps/`), step);
  if (!key) return undefined;
  const bytes = await openObject(key, await store.getBytes(key), codec);
  const { manifest, pack } = parseObject(key, 'a step object', () => decodeStep(bytes));
  packsRead.set(manifest, { key, pack });
  if (step !== undefined && manifest.step !== step) {
    throw new ObjectStoreError(
      'not_found',
      `step ${step} of conversation ${conversationId} was never shipped; the nearest before it is step ${manifest.step}`,
    );
  }
  return manifest;
}

/** Step objects a restore fetches from the store at once. */
const FETCH_AT_ONCE = 8;

/** A chain object as fetched: a pack (a step object's, or an earlier version's `.pack`), or a bundle. */
type ChainObject = { key: string; pack: Uint8Array } | { key: string; bundle: Uint8Array };

/** The store prefixes a chain may read: its conversation's, and those of the conversations it was forked from. */
function chainScope(conversationId: string, manifest: StepManifest): string[] {
  return [conversationId, ...(manifest.forkSources ?? [])].map((id) => `${conversationPrefix(id)}/`);
}

/** Of `ids` (the fork sources a chain had, nearest first), those whose objects `bundles` still names. */
function forkSourcesNamed(ids: readonly string[], bundles: readonly string[]): Pick<StepManifest, 'forkSources'> {
  const named = [...new Set(ids)].filter((id) => bundles.some((key) => key.startsWith(`${conversationPrefix(id)}/`)));
  return named.length > 0 ? { forkSources: named } : {};
}

/**
 * The objects of conversation `conversationId`'s chain, in its order, fetched FETCH_AT_ONCE at a
 * time. A chain that names an object outside the conversation (and the conversations it was forked
 * from) is refused before anything is fetched.
 */
async function readChain(
  store: ObjectStore,
  conversationId: string,
  manifest: StepManifest,
  codec: EncryptionCodec | undefined,
): Promise<ChainObject[]> {
  const scope = chainScope(conversationId, manifest);
  const outside = manifest.bundles.find((key) => !scope.some((prefix) => key.startsWith(prefix)));
  if (outside !== undefined) {
    const sources = manifest.forkSources?.length ? ` and the conversations it was forked from (${manifest.forkSources.join(', ')})` : '';
    throw new ObjectStoreError(
      'refused',
      `the chain of step ${manifest.step} of conversation ${conversationId} names the object ${outside}, outside conversation ` +
        `${conversationId}${sources}: a chain reads only those, so it is not restored`,
    );
  }
  const read = packsRead.get(manifest);
  const packOf = async (key: string) => {
    const bytes = await openObject(key, await store.getBytes(key), codec);
    return parseObject(key, 'a step object', () => decodeStep(bytes)).pack;
  };
  const one = async (key: string): Promise<ChainObject> => {
    if (!parseManifestKey(key)) {
      const bytes = await openObject(key, await store.getBytes(key), codec);
      return key.endsWith('.bundle') ? { key, bundle: bytes } : { key, pack: bytes };
    }
    const pack = read?.key === key ? read.pack : await packOf(key);
    if (!pack) throw new ObjectStoreError('not_found', `the step object ${key} in the chain of step ${manifest.step} holds no pack`);
    return { key, pack };
  };
  const keys = manifest.bundles;
  const out: ChainObject[] = new Array<ChainObject>(keys.length);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    try {
      for (let i = next++; i < keys.length && !failed; i = next++) out[i] = await one(keys[i]!);
    } catch (err) {
      failed = true; // the other lanes stop at their next object
      throw err;
    }
  };
  await Promise.all(Array.from({ length: Math.min(FETCH_AT_ONCE, keys.length) }, lane));
  return out;
}

/**
 * Several packs as one (gitformat-pack, version 2): their entries in order under one header and
 * one trailer. A delta's base keeps its place relative to it (OFS_DELTA, within its own pack) or
 * is found by name (REF_DELTA: a thin pack's base from earlier in the chain is now in the same
 * pack), so one `git index-pack` applies a whole chain. Undefined when a pack is not version 2
 * (none this code ships) or its SHA-1 trailer does not match its bytes: the caller applies the
 * packs one by one, and git names what is wrong.
 */
export function joinPacks(packs: readonly Uint8Array[]): Buffer | undefined {
  let count = 0;
  let size = 12;
  for (const p of packs) {
    const b = Buffer.from(p.buffer, p.byteOffset, p.byteLength);
    if (b.length < 32 || b.toString('latin1', 0, 4) !== 'PACK' || b.readUInt32BE(4) !== 2) return undefined;
    if (
      !createHash('sha1')
        .update(b.subarray(0, b.length - 20))
        .digest()
        .equals(b.subarray(b.length - 20))
    )
      return undefined;
    count += b.readUInt32BE(8);
    size += b.length - 32;
  }
  // One buffer: the header, each pack's entries, then the SHA-1 of all that.
  const joined = Buffer.allocUnsafe(size + 20);
  joined.write('PACK', 0, 'latin1');
  joined.writeUInt32BE(2, 4);
  joined.writeUInt32BE(count, 8);
  let at = 12;
  for (const p of packs) {
    joined.set(p.subarray(12, p.length - 20), at);
    at += p.length - 32;
  }
  createHash('sha1').update(joined.subarray(0, size)).digest().copy(joined, size);
  return joined;
}

/**
 * Fetches a manifest's chain into a (bare) repository: its commit is there after. The packs go in
 * as one (joinPacks: one git process however long the chain); a `.bundle` in the chain (what
 * earlier versions shipped) is fetched as a bundle, after the packs before it.
 */
export async function fetchChain(
  store: ObjectStore,
  conversationId: string,
  manifest: StepManifest,
  gitDir: string,
  env: ChildEnv,
  codec: EncryptionCodec | undefined,
): Promise<void> {
  const gitEnv = { ...baseGitEnv(env), GIT_DIR: gitDir };
  const indexPack = (pack: Uint8Array) =>
    git(['index-pack', '--stdin', '--fix-thin'], {
      env: gitEnv,
      cwd: gitDir,
      input: Buffer.isBuffer(pack) ? pack : Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength),
    });
  let scratch: string | undefined;
  let packs: Uint8Array[] = [];
  const applyPacks = async () => {
    const joined = packs.length > 1 ? joinPacks(packs) : undefined;
    // git refuses a joined pack where a delta's base is there twice (a file back to earlier
    // bytes, shipped again whole, then the base of a git pack's delta): the packs go one by one.
    const applied =
      joined !== undefined &&
      (await indexPack(joined).then(
        () => true,
        () => false,
      ));
    if (!applied) for (const pack of packs) await indexPack(pack);
    packs = [];
  };
  try {
    for (const [i, object] of (await readChain(store, conversationId, manifest, codec)).entries()) {
      if ('pack' in object) {
        packs.push(object.pack);
        continue;
      }
      await applyPacks(); // a bundle's prerequisites are in the packs before it
      scratch ??= await mkdtemp(path.join(tmpdir(), 'faheem-chain-'));
      const file = path.join(scratch, `${i}.bundle`);
      await writeFile(file, object.bundle);
      await git(['fetch', '--quiet', '--no-tags', file, `+refs/*:refs/faheem-shipped/${i}/*`], { env: gitEnv, cwd: scratch });
      // The commit is kept by a ref of its own (below); the bundle's refs go.
      const refs = (await git(['for-each-ref', '--format=%(refname)', `refs/faheem-shipped/${i}/`], { env: gitEnv, cwd: scratch })).stdout;
      const deletes = splitLines(refs)
        .map((ref) => `delete ${ref}\n`)
        .join('');
      if (deletes) await git(['update-ref', '--stdin'], { env: gitEnv, cwd: scratch, input: deletes });
    }
    await applyPacks();
    await git(['update-ref', `refs/faheem-shipped/at/${manifest.commit}`, manifest.commit], { env: gitEnv, cwd: gitDir });
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

function splitLines(buf: Buffer): string[] {
  return buf.toString('utf8').split('\n').filter(Boolean);
}

/** Writes a commit's tree into `dir` (created when missing); files it also has are replaced, others left. */
export async function checkoutTree(gitDir: string, commit: string, dir: string, env: ChildEnv): Promise<void> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'faheem-checkout-'));
  try {
    await mkdir(dir, { recursive: true });
    const index = { ...baseGitEnv(env), GIT_DIR: gitDir, GIT_INDEX_FILE: path.join(scratch, 'index'), GIT_WORK_TREE: path.resolve(dir) };
    await git(['read-tree', commit], { env: index, cwd: scratch });
    await git(['checkout-index', '--all', '--force'], { env: index, cwd: scratch });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Writes a shipped checkpoint of conversation `conversationId` into `dir` (created when missing): the
 * packs are applied to a scratch repository in order and the commit's tree is checked out from
 * there. Returns the manifest restored.
 */
export async function materialiseWorkspace(
  store: ObjectStore,
  conversationId: string,
  manifest: StepManifest,
  dir: string,
  env: ChildEnv,
  codec: EncryptionCodec | undefined,
): Promise<StepManifest> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'faheem-pull-'));
  try {
    const gitDir = path.join(scratch, 'repo.git');
    await git(['init', '--quiet', '--bare', gitDir], { env: baseGitEnv(env), cwd: scratch });
    await fetchChain(store, conversationId, manifest, gitDir, env, codec);
    await checkoutTree(gitDir, manifest.commit, dir, env);
    return manifest;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * A fork of a pooled conversation at `step`: the new conversation's manifest of that step names the
 * source's step objects, and records the source (and the source's own sources) as the conversations
 * whose objects its chain may read, so whichever host claims the fork restores that step.
 */
export async function forkShipped(
  store: ObjectStore,
  sourceId: string,
  step: number,
  newId: string,
  codec: EncryptionCodec | undefined,
): Promise<void> {
  const manifest = await findManifest(store, sourceId, step, codec);
  if (!manifest) throw new ObjectStoreError('not_found', `step ${step} of conversation ${sourceId} was never shipped to ${store.location}`);
  // The fork starts after that step: what was shipped for it is its step's checkpoint there.
  const { midStep: _midStep, forkSources, ...shipped } = manifest;
  const forked: StepManifest = {
    ...shipped,
    epoch: 1,
    host: 'fork',
    ...forkSourcesNamed([sourceId, ...(forkSources ?? [])], shipped.bundles),
  };
  const key = manifestKey(conversationPrefix(newId), step, 1);
  await store.put(key, await sealObject(key, encodeStep(forked, undefined), codec));
}
