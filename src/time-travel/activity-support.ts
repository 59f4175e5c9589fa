// What the checkpoint activities share: input schemas, and turning store errors into the failures
// the workflow should see (shown as they are, or retried).
import { z } from 'zod';
import type { ApplicationFailure } from '@temporalio/common';
import { FAILURE, failure } from '../core/failure-types.js';
import { ObjectStoreError } from '../storage/object-store.js';
import { CheckpointError } from './git.js';

const id = z.string().min(1).max(1000);
const dir = z
  .string()
  .min(1)
  .refine((p) => p.startsWith('/'), 'an absolute path');
const commit = z.string().regex(/^[0-9a-f]{7,64}$/, 'a commit id (hex)');

/** Input schemas of the checkpoint activities (they come from workflow history: checked anyway). */
export const checkpointInputs = {
  checkpoint: z.object({ conversationId: id, workspace: dir, step: z.number().int().min(0) }),
  restore: z.object({ conversationId: id, workspace: dir, commit, rewindId: id }),
  fork: z.object({ workspace: dir, conversationId: id, commit, newConversationId: id, target: dir.optional() }),
  list: z.object({ conversationId: id, workspace: dir }),
};

/** Parses an activity input; a bad one fails for good (a retry would not fix it). */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, activity: string): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success)
    throw failure(
      FAILURE.CheckpointInvalid,
      `${activity}: invalid input: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/**
 * Runs a store operation; its CheckpointErrors become ApplicationFailures: no git, no such
 * checkpoint and invalid requests are final (type CheckpointGitMissing / CheckpointNotFound /
 * CheckpointInvalid, the message says what to do); a failing git run is retried (CheckpointGitFailed).
 */
export async function asActivity<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ObjectStoreError) throw objectStoreFailure(err);
    if (!(err instanceof CheckpointError)) throw err;
    const type = {
      git_missing: FAILURE.CheckpointGitMissing,
      not_found: FAILURE.CheckpointNotFound,
      invalid: FAILURE.CheckpointInvalid,
      git_failed: FAILURE.CheckpointGitFailed,
    }[err.reason];
    throw failure(type, err.message);
  }
}

/**
 * An object store error as the failure the workflow sees: fenced, configuration and a refused object
 * (not what the conversation wrote there: retried, it would be refused again) are final.
 */
export function objectStoreFailure(err: ObjectStoreError): ApplicationFailure {
  if (err.reason === 'fenced') return failure(FAILURE.HostFenced, err.message);
  if (err.reason === 'unreachable' || err.reason === 'not_found') return failure(FAILURE.ObjectStoreUnreachable, err.message);
  return failure(FAILURE.ObjectStoreConfig, err.message);
}
