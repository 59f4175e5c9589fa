// Pools of hosts (worker side). A worker started with --pool NAME (FAHEEM_POOL) hosts workspaces of
// that pool: it polls the pool's queue for claims (a pooled conversation that needs a host) and its
// own tool queue for everything else the conversation runs there. A claim bumps the conversation's
// fence epoch (fence.ts), restores the workspace from the last shipped checkpoint under
// FAHEEM_WORKSPACES_DIR/<id>, seeds this host's shadow repository with the shipped history, and
// answers with this host's queue and the path. From then on every checkpoint of that workspace is
// shipped before the activity that took it returns.
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { baseGitEnv, git } from '../time-travel/git.js';
import { encodeRefPart, type CheckpointStore } from '../time-travel/shadow-repo.js';
import type { CheckpointInfo } from '../time-travel/types.js';
import { encryptionCodec, type EncryptionCodec } from '../security/codec.js';
import { ObjectStoreError, objectStore, type ObjectStore } from '../storage/object-store.js';
import { StepManifest, firstFence, moveFence } from './fence.js';
import { checkoutTree, fetchChain, findManifest, readFence, shipCheckpoint, writeFence } from './shipping.js';

import { POOL_NAME } from './workflow/pool-rules.js';
import type { ChildEnv } from '../environment.js';
import type { StoreSettings } from '../settings/store.js';
export { poolQueueName as poolQueue } from './workflow/pool-rules.js';

/** A pool name: short, and safe in a queue name. */
export const PoolName = z.string().regex(POOL_NAME, '1 to 64 letters, digits, dot, dash and underscore');

/** This worker's part in a pool, from its environment. */
export interface PoolSettings {
  pool: string;
  /** FAHEEM_HOST_ID (default: the hostname). */
  hostId: string;
  /** FAHEEM_WORKSPACES_DIR (default ~/.faheem/workspaces). */
  workspacesDir: string;
  store: ObjectStore;
  /** The payload keys' codec (FAHEEM_ENCRYPTION_KEY(S)): shipped objects are sealed with it; undefined: in clear. */
  codec: EncryptionCodec | undefined;
}

/**
 * The pool this worker hosts (default FAHEEM_POOL), or undefined; a pool without FAHEEM_OBJECT_STORE
 * is refused, and so is a malformed payload key (EncryptionConfigError, naming the variable).
 */
export function poolSettings(settings: StoreSettings, pool = settings.pool.name): PoolSettings | undefined {
  if (!pool) return undefined;
  const name = PoolName.safeParse(pool);
  if (!name.success) throw new ObjectStoreError('config', `pool ${JSON.stringify(pool)}: ${name.error.issues[0]?.message}`);
  const store = objectStore(settings);
  if (!store) throw new ObjectStoreError('config', `a worker of pool ${pool} needs FAHEEM_OBJECT_STORE: the pool's workspaces live there`);
  return { pool, hostId: settings.pool.hostId, workspacesDir: settings.pool.workspacesDir, store, codec: encryptionCodec(settings.codec) };
}

/** A pooled conversation's folder on a host (the id encoded as in refs: no two ids share one). */
export function pooledWorkspace(dir: string, conversationId: string): string {
  return path.join(dir, encodeRefPart(conversationId));
}

/** What a host remembers of a claim it holds: `<workspaces>/.claims/<id>.json`. */
const Claim = z.object({
  conversationId: z.string(),
  epoch: z.number().int().positive(),
  host: z.string(),
  workspace: z.string(),
  last: StepManifest.optional(),
  /**
   * Released in the middle of this step (the folder is gone): kept so that a retried release
   * answers what the first one did. A released claim holds nothing: nothing ships under it.
   */
  releasedMidStep: z
    .object({ step: z.number().int().min(0), checkpoint: z.custom<CheckpointInfo>((v) => typeof v === 'object' && v !== null) })
    .optional(),
});
type Claim = z.infer<typeof Claim>;

function claimFile(settings: PoolSettings, conversationId: string): string {
  return path.join(settings.workspacesDir, '.claims', `${encodeRefPart(conversationId)}.json`);
}

/**
 * The claims this process wrote or read, by file, with the file's mtime then: a step's shipping
 * checks the file's mtime instead of reading and parsing it (another process of the host that
 * wrote it since is read again).
 */
const knownClaims = new Map<string, { mtimeMs: number; claim: Claim }>();

async function readClaim(settings: PoolSettings, conversationId: string): Promise<Claim | undefined> {
  return readClaimAt(claimFile(settings, conversationId));
}

/** The claim this host holds of the conversation whose folder `workspace` is, if any. */
async function claimOfFolder(settings: PoolSettings, workspace: string): Promise<Claim | undefined> {
  const claim = await readClaimAt(path.join(settings.workspacesDir, '.claims', `${path.basename(workspace)}.json`));
  return claim && path.resolve(claim.workspace) === path.resolve(workspace) ? claim : undefined;
}

async function readClaimAt(file: string): Promise<Claim | undefined> {
  const mtimeMs = (await stat(file).catch(() => undefined))?.mtimeMs;
  if (mtimeMs === undefined) {
    knownClaims.delete(file);
    return undefined;
  }
  const known = knownClaims.get(file);
  if (known?.mtimeMs === mtimeMs) return known.claim;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (!text) return undefined;
  const claim = Claim.parse(JSON.parse(text));
  knownClaims.set(file, { mtimeMs, claim });
  return claim;
}

async function writeClaim(settings: PoolSettings, claim: Claim): Promise<void> {
  const file = claimFile(settings, claim.conversationId);
  if (!knownClaims.has(file)) await mkdir(path.dirname(file), { recursive: true }); // a step's shipping: it is there
  await writeFile(`${file}.tmp`, JSON.stringify(claim));
  await rename(`${file}.tmp`, file);
  const mtimeMs = (await stat(file).catch(() => undefined))?.mtimeMs;
  if (mtimeMs === undefined) knownClaims.delete(file);
  else knownClaims.set(file, { mtimeMs, claim });
}

/** Input of the `claimPoolHost` activity. */
export const ClaimInput = z.object({
  conversationId: z.string().min(1).max(1000),
  pool: PoolName,
  /** The last step whose shipped checkpoint the workflow accepted (undefined: none yet). */
  lastStep: z.number().int().min(0).optional(),
});
export type ClaimInput = z.infer<typeof ClaimInput>;

/** What a claim answers. */
export interface ClaimResult {
  host: string;
  /** This host's tool queue: every later host call of the conversation goes there. */
  toolTaskQueue: string;
  /** The workspace's path on this host. */
  workspace: string;
  epoch: number;
  /** The step the workspace was restored from (undefined: nothing shipped yet, an empty folder). */
  restoredFromStep?: number;
  /** The previous holder, when the conversation moved. */
  from?: string;
}

/**
 * Takes a pooled conversation on this host (the activity on the pool's queue). Safe to retry: each
 * attempt takes a new epoch, so an attempt that lost the race is fenced like a lost host.
 */
export async function claimPoolHost(
  settings: PoolSettings,
  checkpoints: CheckpointStore,
  toolTaskQueue: string,
  raw: ClaimInput,
  env: ChildEnv,
): Promise<ClaimResult> {
  const input = ClaimInput.parse(raw);
  const { store, codec } = settings;
  const fence = await readFence(store, input.conversationId, codec);
  const manifest = await findManifest(store, input.conversationId, input.lastStep, codec).catch((err: unknown) => {
    // The accepted step's manifest is missing (never shipped): the nearest before it.
    if (err instanceof ObjectStoreError && err.reason === 'not_found') return findManifest(store, input.conversationId, undefined, codec);
    throw err;
  });
  const next = fence ? moveFence(fence, settings.hostId, input.lastStep ?? manifest?.step ?? 0) : firstFence(settings.hostId);
  const workspace = pooledWorkspace(settings.workspacesDir, input.conversationId);
  // A copy left from an earlier claim on this host is stale: the store decides what the workspace is.
  await rm(workspace, { recursive: true, force: true });
  await mkdir(workspace, { recursive: true });
  if (manifest) {
    const repo = await checkpoints.open(workspace);
    repo.stopWatching();
    // An index left by an earlier claim here describes that claim's head, not the one restored now.
    await rm(repo.indexFile(input.conversationId), { force: true });
    await fetchChain(store, input.conversationId, manifest, repo.gitDir, env, codec);
    await checkoutTree(repo.gitDir, manifest.commit, workspace, env);
    // The shipped checkpoint becomes this host's head of the conversation: the next snapshot is its child.
    const ns = `refs/faheem/${encodeRefPart(input.conversationId)}`;
    const gitEnv = { ...baseGitEnv(env), GIT_DIR: repo.gitDir };
    await git(['update-ref', `${ns}/head`, manifest.commit], { env: gitEnv, cwd: workspace });
    // The workspace in the middle of a step is not that step's checkpoint: the step takes its own when it ends.
    if (!manifest.midStep) await git(['update-ref', `${ns}/step-${manifest.step}`, manifest.commit], { env: gitEnv, cwd: workspace });
  }
  await writeFence(store, input.conversationId, next, codec);
  await writeClaim(settings, {
    conversationId: input.conversationId,
    epoch: next.epoch,
    host: settings.hostId,
    workspace,
    ...(manifest ? { last: { ...manifest, epoch: next.epoch } } : {}),
  });
  return {
    host: settings.hostId,
    toolTaskQueue,
    workspace,
    epoch: next.epoch,
    ...(manifest ? { restoredFromStep: manifest.step } : {}),
    ...(fence ? { from: fence.host } : {}),
  };
}

/**
 * The hook the checkpoint store runs after each snapshot on a pool's host (a step's, or the
 * workspace in the middle of one before it hibernates): a snapshot of a pooled
 * workspace (under FAHEEM_WORKSPACES_DIR, claimed here) is shipped before it is answered. A host
 * whose claim has ended (fenced) fails: its step's result is never accepted.
 */
export function shipAfterSnapshot(settings: PoolSettings, env: ChildEnv) {
  return async (workspace: string, gitDir: string, conversationId: string, info: CheckpointInfo): Promise<void> => {
    if (path.dirname(path.resolve(workspace)) !== settings.workspacesDir) return;
    const claim = await readClaim(settings, conversationId);
    // A sub-agent snapshots its parent's folder under its own id: the parent's checkpoints ship that folder.
    if (!claim && (await claimOfFolder(settings, workspace))) return;
    if (!claim || claim.releasedMidStep || path.resolve(claim.workspace) !== path.resolve(workspace)) {
      throw new ObjectStoreError(
        'fenced',
        `conversation ${conversationId} is not held by host ${settings.hostId}: its checkpoint is not shipped`,
      );
    }
    const manifest = await shipCheckpoint(
      settings.store,
      {
        conversationId,
        step: info.step,
        epoch: claim.epoch,
        host: settings.hostId,
        gitDir,
        commit: info.commit,
        ...(claim.last ? { previous: claim.last } : {}),
        ...(info.kind === 'mid-step' ? { midStep: true } : {}),
      },
      env,
      settings.codec,
    );
    await noteShipped(settings, { ...claim, last: manifest });
  };
}

/** Every this many steps (and when its chain starts again) a claim's last shipment is written to its file. */
const CLAIM_WRITE_EVERY = 10;

/**
 * Records the claim's last shipment: the next step's shipping reads it from memory. The file
 * is written only now and then: a worker restarted on this host that reads an older one ships its
 * first pack since that older commit (larger, and as valid), so a write a step buys nothing.
 */
async function noteShipped(settings: PoolSettings, claim: Claim): Promise<void> {
  const file = claimFile(settings, claim.conversationId);
  const known = knownClaims.get(file);
  const last = claim.last;
  if (known && last && last.bundles.length > 2 && last.step % CLAIM_WRITE_EVERY !== 0) {
    knownClaims.set(file, { mtimeMs: known.mtimeMs, claim });
    return;
  }
  await writeClaim(settings, claim);
}

/**
 * Hibernation: the conversation releases its folder on this host (its checkpoints are in the store
 * already; the next claim, on any host, restores the last one). The claim ends with it: a snapshot
 * this host takes of it later is refused. Safe to retry; a claim held by another epoch is left alone.
 * A host the conversation left as lost releases it the same way. `beforeRelease` runs first, only
 * for the claim of that epoch (it stops what the conversation runs in the folder).
 */
export async function releasePoolHost(
  settings: PoolSettings,
  checkpoints: CheckpointStore,
  conversationId: string,
  epoch: number,
  beforeRelease: () => Promise<void> = async () => {},
): Promise<boolean> {
  const claim = await readClaim(settings, conversationId);
  if (!claim || claim.epoch !== epoch) return false;
  await beforeRelease();
  const repo = await checkpoints.open(claim.workspace).catch(() => undefined);
  repo?.stopWatching();
  await rm(claimFile(settings, conversationId), { force: true });
  await rm(claim.workspace, { recursive: true, force: true });
  return true;
}

/** Input of the `releasePoolHostMidStep` activity. */
export const MidStepReleaseInput = z.object({
  conversationId: z.string().min(1).max(1000),
  epoch: z.number().int().positive(),
  /** The step the conversation is in the middle of (waiting, or awaiting approval). */
  step: z.number().int().min(0),
});
export type MidStepReleaseInput = z.infer<typeof MidStepReleaseInput>;

/** What a mid-step release did: the workspace shipped as it was, then the folder released; or nothing (not held here). */
export type MidStepRelease = { released: true; checkpoint: CheckpointInfo } | { released: false };

/**
 * Hibernation in the middle of a step (a wait, an approval): this step's actions may have changed
 * files already, and the store holds only finished steps. So the workspace is taken as it is now
 * (a mid-step checkpoint) and shipped first; only then is the folder released. A snapshot or a
 * shipment that fails releases nothing (the error is the activity's). Not held by this epoch:
 * nothing to release.
 */
export async function releasePoolHostMidStep(
  settings: PoolSettings,
  checkpoints: CheckpointStore,
  raw: MidStepReleaseInput,
  beforeRelease: () => Promise<void> = async () => {},
): Promise<MidStepRelease> {
  const input = MidStepReleaseInput.parse(raw);
  const claim = await readClaim(settings, input.conversationId);
  if (!claim || claim.epoch !== input.epoch) return { released: false };
  // A retry of a release whose answer was lost: the same answer (the workspace is in the store).
  if (claim.releasedMidStep) {
    return claim.releasedMidStep.step === input.step
      ? { released: true, checkpoint: claim.releasedMidStep.checkpoint }
      : { released: false };
  }
  const repo = await checkpoints.open(claim.workspace);
  const checkpoint = await repo.snapshotMidStep(input.conversationId, input.step); // shipped before it answers
  await beforeRelease();
  repo.stopWatching();
  const shipped = (await readClaim(settings, input.conversationId)) ?? claim; // its `last` is the mid-step shipment now
  await writeClaim(settings, { ...shipped, releasedMidStep: { step: input.step, checkpoint } });
  await rm(claim.workspace, { recursive: true, force: true });
  return { released: true, checkpoint };
}
