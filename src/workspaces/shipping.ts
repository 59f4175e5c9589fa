// Shipping a pooled conversation's checkpoints to the object store, and materialising a workspace
// from it on any host. A step's checkpoint (a commit of the shadow repository, see
// checkpoints/shadow-repo.ts) goes up as a git bundle of the objects new since the last shipped
// commit, a full bundle every FULL_BUNDLE_EVERY shipments (so a restore applies a short chain);
// then the step's manifest names the chain. The bundle is written before the manifest, so a
// manifest always names bundles that are there. With a payload key the bundles are encrypted by
// the payload codec (security/codec.ts), so the store holds ciphertext.
//
// Store layout, under `conversations/<encoded id>/`:
//   fence.json                    the epoch that may ship, and where ended epochs stopped (fence.ts)
//   bundles/<step>@<epoch>.bundle a bundle (Payload bytes: encrypted or plain)
//   steps/<step>@<epoch>.json     the manifest of a shipped step (StepManifest)
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { baseGitEnv, git } from '../checkpoints/git.js';
import { encodeRefPart } from '../checkpoints/shadow-repo.js';
import { encryptionCodec, type EncryptionCodec } from '../security/codec.js';
import { ObjectStoreError, type ObjectStore } from '../storage/object-store.js';
import { Fence, StepManifest, mayShip, manifestKey, pickManifest } from './fence.js';
import type { ChildEnv } from '../environment.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;

/** Every this many shipments the bundle is a full one, so a restore applies at most this many. */
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
  const key = `${conversationPrefix(conversationId)}/fence.json`;
  if (!(await store.head(key))) return undefined;
  const bytes = await openObject(await store.getBytes(key), codec);
  return Fence.parse(JSON.parse(Buffer.from(bytes).toString('utf8')));
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
}

/** Ships a step's checkpoint: a bundle, then its manifest. Returns the manifest. */
export async function shipCheckpoint(store: ObjectStore, input: ShipInput, env: ChildEnv): Promise<StepManifest> {
  const codec = encryptionCodec(env);
  const prefix = conversationPrefix(input.conversationId);
  const fence = await readFence(store, input.conversationId, codec);
  if (!mayShip(fence, input.epoch)) {
    throw new ObjectStoreError(
      'fenced',
      `conversation ${input.conversationId} moved to host ${fence?.host} (epoch ${fence?.epoch}); this host (epoch ${input.epoch}) may not ship it`,
    );
  }
  const previous = input.previous;
  if (previous && previous.commit === input.commit) {
    // Nothing changed since the last shipment: the same chain under the new step.
    const manifest: StepManifest = { ...previous, step: input.step, epoch: input.epoch, host: input.host };
    await store.put(manifestKey(prefix, input.step, input.epoch), await sealObject(Buffer.from(JSON.stringify(manifest)), codec));
    return manifest;
  }
  const full = !previous || previous.bundles.length >= FULL_BUNDLE_EVERY;
  const scratch = await mkdtemp(path.join(tmpdir(), 'faheem-ship-'));
  try {
    const file = path.join(scratch, 'step.bundle');
    const ref = `refs/faheem/ship/${input.step}`;
    const gitEnv = { ...baseGitEnv(env), GIT_DIR: input.gitDir };
    // A ref for the bundle to carry (bundles name refs); removed after.
    await git(['update-ref', ref, input.commit], { env: gitEnv, cwd: scratch });
    try {
      await git(['bundle', 'create', '--quiet', file, ref, ...(full ? [] : [`^${previous.commit}`])], { env: gitEnv, cwd: scratch });
    } finally {
      await git(['update-ref', '-d', ref], { env: gitEnv, cwd: scratch }).catch(() => undefined);
    }
    const bundleKey = `${prefix}/bundles/${String(input.step).padStart(8, '0')}@${input.epoch}.bundle`;
    await store.put(bundleKey, await sealObject(await readFile(file), codec));
    const manifest: StepManifest = {
      step: input.step,
      epoch: input.epoch,
      host: input.host,
      commit: input.commit,
      bundles: full ? [bundleKey] : [...previous.bundles, bundleKey],
    };
    await store.put(manifestKey(prefix, input.step, input.epoch), await sealObject(Buffer.from(JSON.stringify(manifest)), codec));
    return manifest;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
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

/** Fetches a manifest's bundles, in order, into a (bare) repository: its commit is there after. */
export async function fetchChain(store: ObjectStore, manifest: StepManifest, gitDir: string, env: ChildEnv): Promise<void> {
  const codec = encryptionCodec(env);
  const scratch = await mkdtemp(path.join(tmpdir(), 'faheem-chain-'));
  try {
    const gitEnv = { ...baseGitEnv(env), GIT_DIR: gitDir };
    for (const [i, key] of manifest.bundles.entries()) {
      const file = path.join(scratch, `${i}.bundle`);
      await writeFile(file, await openObject(await store.getBytes(key), codec));
      await git(['fetch', '--quiet', '--no-tags', file, `+refs/*:refs/faheem-shipped/${i}/*`], { env: gitEnv, cwd: scratch });
    }
    // The commit is kept by a ref of its own; the fetched refs go.
    await git(['update-ref', `refs/faheem-shipped/at/${manifest.commit}`, manifest.commit], { env: gitEnv, cwd: scratch });
    for (const i of manifest.bundles.keys()) {
      const refs = (await git(['for-each-ref', '--format=%(refname)', `refs/faheem-shipped/${i}/`], { env: gitEnv, cwd: scratch })).stdout
        .toString()
        .split('\n')
        .filter(Boolean);
      for (const ref of refs) await git(['update-ref', '-d', ref], { env: gitEnv, cwd: scratch });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
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
 * Writes a shipped checkpoint's files into `dir` (created when missing): the bundles are applied
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
 * source's bundles (they are immutable), so whichever host claims the fork restores that step.
 */
export async function forkShipped(store: ObjectStore, sourceId: string, step: number, newId: string, env: ChildEnv): Promise<void> {
  const codec = encryptionCodec(env);
  const manifest = await findManifest(store, sourceId, step, env);
  if (!manifest) throw new ObjectStoreError('not_found', `step ${step} of conversation ${sourceId} was never shipped to ${store.location}`);
  const forked: StepManifest = { ...manifest, epoch: 1, host: 'fork' };
  await store.put(manifestKey(conversationPrefix(newId), step, 1), await sealObject(Buffer.from(JSON.stringify(forked)), codec));
}
