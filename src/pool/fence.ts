// The fence of a pooled conversation's workspace in the object store. Each host that holds the
// conversation does so in an epoch (1, 2, …); when the conversation moves to another host the
// epoch goes up and the fence records the last step the old epoch's host had shipped and the
// workflow accepted. A manifest written by a lost host after that (its clock, its retries, a
// process that comes back) names an older epoch and a later step: every reader (a claim, a pull,
// a fork) goes through pickManifest and never takes it, and its results are never accepted (its
// activity attempts have timed out). Pure: the store and the workflow both use it.
import { z } from 'zod';

/** One epoch that has ended: its host, and the last step of it that counts. */
export const EndedEpoch = z.object({
  epoch: z.number().int().positive(),
  host: z.string().max(256),
  lastStep: z.number().int().min(0),
});
export type EndedEpoch = z.infer<typeof EndedEpoch>;

/** `conversations/<id>/fence.json`. */
export const Fence = z.object({
  /** The epoch whose host may ship now. */
  epoch: z.number().int().positive(),
  /** The host that holds it in that epoch. */
  host: z.string().max(256),
  ended: z.array(EndedEpoch).max(10_000),
});
export type Fence = z.infer<typeof Fence>;

/** A shipped checkpoint: `conversations/<id>/steps/<step>@<epoch>.json`. */
export const StepManifest = z.object({
  step: z.number().int().min(0),
  epoch: z.number().int().positive(),
  host: z.string().max(256),
  /** The checkpoint's commit in the shadow repository. */
  commit: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/),
  /** The step objects whose packs to apply (or packs and bundles, from earlier versions), in order, from a full one: their keys in the store. */
  bundles: z.array(z.string().max(1024)).min(1).max(100),
  /**
   * The conversations this one was forked from, nearest first, whose step objects `bundles` still
   * names (a fork's chain starts with its source's): a restore reads no other conversation's objects.
   * Missing in a conversation that was never forked, and in forks made by earlier versions (their
   * chains, which name the source's objects without it, are refused).
   */
  forkSources: z.array(z.string().min(1).max(1000)).min(1).max(100).optional(),
  /**
   * The workspace in the middle of this step, shipped when the conversation hibernated in a wait
   * or an approval: what a claim restores, but not the step's own checkpoint (taken when it ends).
   */
  midStep: z.literal(true).optional(),
  /**
   * The chain's full pack: its commit and size. Later shipments fold the chain into one pack since
   * this commit while that stays small beside it, instead of packing the whole history again.
   * Missing in manifests of earlier versions (their chain gets a full pack when it is long).
   */
  base: z.object({ commit: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/), bytes: z.number().int().nonnegative() }).optional(),
});
export type StepManifest = z.infer<typeof StepManifest>;

/** The first fence of a conversation, held by `host`. */
export function firstFence(host: string): Fence {
  return { epoch: 1, host, ended: [] };
}

/** The fence after the conversation moved to `host`: the old epoch ends at `lastStep`. */
export function moveFence(fence: Fence, host: string, lastStep: number): Fence {
  return { epoch: fence.epoch + 1, host, ended: [...fence.ended, { epoch: fence.epoch, host: fence.host, lastStep }] };
}

/** Whether a manifest counts under this fence: the current epoch's, or an ended epoch's up to its last step. */
export function manifestCounts(fence: Fence | undefined, m: Pick<StepManifest, 'epoch' | 'step'>): boolean {
  if (!fence) return m.epoch === 1;
  if (m.epoch === fence.epoch) return true;
  const ended = fence.ended.find((e) => e.epoch === m.epoch);
  return ended !== undefined && m.step <= ended.lastStep;
}

/** The key of a step's manifest, and what a manifest key says. */
export function manifestKey(prefix: string, step: number, epoch: number): string {
  return `${prefix}/steps/${String(step).padStart(8, '0')}@${epoch}.json`;
}
export function parseManifestKey(key: string): { step: number; epoch: number } | undefined {
  const m = /\/steps\/(\d{8,})@(\d+)\.json$/.exec(key);
  return m ? { step: Number(m[1]), epoch: Number(m[2]) } : undefined;
}

/**
 * Of the manifest keys found, the one to restore: the highest step that counts under the fence
 * (at or below `atStep` when given), its latest epoch first.
 */
export function pickManifest(fence: Fence | undefined, keys: readonly string[], atStep?: number): string | undefined {
  let best: { key: string; step: number; epoch: number } | undefined;
  for (const key of keys) {
    const m = parseManifestKey(key);
    if (!m || !manifestCounts(fence, m) || (atStep !== undefined && m.step > atStep)) continue;
    if (!best || m.step > best.step || (m.step === best.step && m.epoch > best.epoch)) best = { key, ...m };
  }
  return best?.key;
}
