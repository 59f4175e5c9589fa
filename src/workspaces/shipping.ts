// Shipping a pooled conversation's checkpoints to the object store, and materialising a workspace
// from it on any host. A step's checkpoint (a commit of the shadow repository, see
// checkpoints/shadow-repo.ts) goes up as a git pack of the objects new since the last shipped
// commit (written in-process when it can be, step-pack.ts), a full pack every FULL_BUNDLE_EVERY
// shipments (so a restore applies a short chain); then the step's manifest names the chain. The
// pack is written before the manifest, so a manifest always names packs that are there. With a
// payload key the packs are encrypted by the payload codec (security/codec.ts), so the store holds
// ciphertext. A chain may also name bundles (`.bundle`), which earlier versions shipped.
//
// Store layout, under `conversations/<encoded id>/`:
//   fence.json                    the epoch that may ship, and where ended epochs stopped (fence.ts)
//   packs/<step>@<epoch>.pack     a pack (Payload bytes: encrypted or plain)
//   steps/<step>@<epoch>.json     the manifest of a shipped step (StepManifest), or of the workspace
//                                 in the middle of that step when it hibernated there (midStep)
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { baseGitEnv, git } from '../checkpoints/git.js';
import { usesSha1 } from '../checkpoints/objects.js';
import { encodeRefPart } from '../checkpoints/shadow-repo.js';
import { encryptionCodec, type EncryptionCodec } from '../security/codec.js';
import { ObjectStoreError, type ObjectStore } from '../storage/object-store.js';
import { Fence, StepManifest, mayShip, manifestKey, pickManifest } from './fence.js';
import { objectsSince, writePack } from './step-pack.js';
import type { ChildEnv } from '../environment.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;

/** Every this many shipments the pack is a full one, so a restore applies at most this many. */
export const FULL_BUNDLE_EVERY = 40;

/** The store prefix of a conversation. */
export function conversationPrefix(conversationId: string): string {
  return `conversations/${encodeRefPart(conversationId)}`;
}

/** Bytes to the stored form: the codec's encrypted Payload with a key, a plain Payload without. */
export async function sealObject(bytes: Uint8Array, codec: EncryptionCodec | undefined): Promise<Uint8Array> {
  const plain: Payload = { metadata: { encoding: new TextEncoder().encode('binary/plain') }, data: bytes };
  const [sealed] = codec ? await codec.encode([plain]) : [plain];
  return ProtoPayload.encode(ProtoPayload.fromObject(sealed!)).finish();
}

/** The stored form back to bytes (a key this process lacks: DecryptionError). */
export async function openObject(stored: Uint8Array, codec: EncryptionCodec | undefined): Promise<Uint8Array> {
  let payload = ProtoPayload.decode(stored) as Payload;
  if (codec) [payload] = (await codec.decode([payload])) as [Payload];
  const encoding = Buffer.from(payload.metadata?.encoding ?? new Uint8Array()).toString();
  if (encoding !== 'binary/plain') {
    throw new ObjectStoreError(
      'config',
      `an object in the store is ${encoding || 'not a payload'}: set the FAHEEM_ENCRYPTION_KEY(S) it was written with`,
    );
  }
  return payload.data ?? new Uint8Array();
}

/** Reads the fence (undefined when the conversation has none yet). */
export async function readFence(
  store: ObjectStore,
  conversationId: string,
  codec: EncryptionCodec | undefined,
): Promise<Fence | undefined> {
  let stored: Uint8Array;
  try {
    stored = await store.getBytes(`${conversationPrefix(conversationId)}/fence.json`);
  } catch (err) {
    if (err instanceof ObjectStoreError && err.reason === 'not_found') return undefined;
    throw err;
  }
  return Fence.parse(JSON.parse(Buffer.from(await openObject(stored, codec)).toString('utf8')));
}

/** Writes the fence (the workflow's claim of a host decides it; the store only records it). */
export async function writeFence(
  store: ObjectStore,
  conversationId: string,
  fence: Fence,
  codec: EncryptionCodec | undefined,
): Promise<void> {
  await store.put(
    `${conversationPrefix(conversationId)}/fence.json`,
    await sealObject(Buffer.from(JSON.stringify(Fence.parse(fence))), codec),
  );
}

/** What a host ships for one step. */
export interface ShipInput {
  conversationId: string;
  /** The step the checkpoint follows. */
  step: number;
  /** The host's epoch (fence.ts); a host whose epoch ended is refused. */
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
 * Ships a step's checkpoint: a pack, then its manifest. Returns the manifest. The fence is read
 * while git packs, and a host whose epoch ended writes nothing.
 */
export async function shipCheckpoint(store: ObjectStore, input: ShipInput, env: ChildEnv): Promise<StepManifest> {
  const codec = encryptionCodec(env);
  const prefix = conversationPrefix(input.conversationId);
  const previous = input.previous;
  // Nothing changed since the last shipment: the same chain under the new step.
  const unchanged = previous !== undefined && previous.commit === input.commit;
  const full = !previous || previous.bundles.length >= FULL_BUNDLE_EVERY;
  const [fence, pack] = await Promise.all([
    readFence(store, input.conversationId, codec),
    unchanged ? undefined : packSince(input.gitDir, input.commit, full ? undefined : previous.commit, env),
  ]);
  if (!mayShip(fence, input.epoch)) {
    throw new ObjectStoreError(
      'fenced',
      `conversation ${input.conversationId} moved to host ${fence?.host} (epoch ${fence?.epoch}); this host (epoch ${input.epoch}) may not ship it`,
    );
  }
  let bundles: string[];
  if (pack) {
    const packKey = `${prefix}/packs/${String(input.step).padStart(8, '0')}@${input.epoch}.pack`;
    await store.put(packKey, await sealObject(pack, codec));
    bundles = full || !previous ? [packKey] : [...previous.bundles, packKey];
  } else {
    bundles = previous!.bundles;
  }
  const manifest: StepManifest = {
    step: input.step,
    epoch: input.epoch,
    host: input.host,
    commit: input.commit,
    bundles,
    ...(input.midStep ? { midStep: true as const } : {}),
  };
  await store.put(manifestKey(prefix, input.step, input.epoch), await sealObject(Buffer.from(JSON.stringify(manifest)), codec));
  return manifest;
}

/** The manifest to restore (the latest that counts, or the one of `step`), or undefined when none was shipped. */
export async function findManifest(
  store: ObjectStore,
  conversationId: string,
  step: number | undefined,
  env: ChildEnv,
): Promise<StepManifest | undefined> {
  const codec = encryptionCodec(env);
  const prefix = conversationPrefix(conversationId);
  const fence = await readFence(store, conversationId, codec);
  const key = pickManifest(fence, await store.list(`${prefix}/steps/`), step);
  if (!key) return undefined;
  const manifest = StepManifest.parse(JSON.parse(Buffer.from(await openObject(await store.getBytes(key), codec)).toString('utf8')));
  if (step !== undefined && manifest.step !== step) {
    throw new ObjectStoreError(
      'not_found',
      `step ${step} of conversation ${conversationId} was never shipped; the nearest before it is step ${manifest.step}`,
    );
  }
  return manifest;
}

/**
 * Fetches a manifest's packs, in order, into a (bare) repository: its commit is there after. A
 * `.bundle` in the chain (what earlier versions shipped) is fetched as a bundle.
 */
export async function fetchChain(store: ObjectStore, manifest: StepManifest, gitDir: string, env: ChildEnv): Promise<void> {
  const codec = encryptionCodec(env);
  const gitEnv = { ...baseGitEnv(env), GIT_DIR: gitDir };
  let scratch: string | undefined;
  try {
    for (const [i, key] of manifest.bundles.entries()) {
      const bytes = await openObject(await store.getBytes(key), codec);
      if (!key.endsWith('.bundle')) {
        await git(['index-pack', '--stdin', '--fix-thin'], { env: gitEnv, cwd: gitDir, input: Buffer.from(bytes) });
        continue;
      }
      scratch ??= await mkdtemp(path.join(tmpdir(), 'faheem-chain-'));
      const file = path.join(scratch, `${i}.bundle`);
      await writeFile(file, bytes);
      await git(['fetch', '--quiet', '--no-tags', file, `+refs/*:refs/faheem-shipped/${i}/*`], { env: gitEnv, cwd: scratch });
      // The commit is kept by a ref of its own (below); the bundle's refs go.
      const refs = (await git(['for-each-ref', '--format=%(refname)', `refs/faheem-shipped/${i}/`], { env: gitEnv, cwd: scratch })).stdout;
      const deletes = splitLines(refs)
        .map((ref) => `delete ${ref}\n`)
        .join('');
      if (deletes) await git(['update-ref', '--stdin'], { env: gitEnv, cwd: scratch, input: deletes });
    }
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
 * Writes a shipped checkpoint's files into `dir` (created when missing): the packs are applied
 * to a scratch repository in order and the commit's tree is checked out from there. Returns the
 * manifest restored.
 */
export async function materialiseWorkspace(store: ObjectStore, manifest: StepManifest, dir: string, env: ChildEnv): Promise<StepManifest> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'faheem-pull-'));
  try {
    const gitDir = path.join(scratch, 'repo.git');
    await git(['init', '--quiet', '--bare', gitDir], { env: baseGitEnv(env), cwd: scratch });
    await fetchChain(store, manifest, gitDir, env);
    await checkoutTree(gitDir, manifest.commit, dir, env);
    return manifest;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * A fork of a pooled conversation at `step`: the new conversation's manifest of that step names the
 * source's packs (they are immutable), so whichever host claims the fork restores that step.
 */
export async function forkShipped(store: ObjectStore, sourceId: string, step: number, newId: string, env: ChildEnv): Promise<void> {
  const codec = encryptionCodec(env);
  const manifest = await findManifest(store, sourceId, step, env);
  if (!manifest) throw new ObjectStoreError('not_found', `step ${step} of conversation ${sourceId} was never shipped to ${store.location}`);
  // The fork starts after that step: what was shipped for it is its step's checkpoint there.
  const { midStep: _midStep, ...shipped } = manifest;
  const forked: StepManifest = { ...shipped, epoch: 1, host: 'fork' };
  await store.put(manifestKey(conversationPrefix(newId), step, 1), await sealObject(Buffer.from(JSON.stringify(forked)), codec));
}
