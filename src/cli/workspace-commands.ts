// `faheem workspace pull ID DIR [--step N]`: a pooled conversation's files, from the object store,
// written anywhere the store is reachable (no worker, no host of the pool needed).
import { Command, InvalidArgumentError } from 'commander';
import path from 'node:path';
import { checkConversationId } from '../conversation-id.js';
import { ObjectStoreError, objectStore } from '../storage/object-store.js';
import { findManifest, materialiseWorkspace } from '../workspaces/shipping.js';
import type { ChildEnv } from '../environment.js';
import { clientChildEnv } from '../connection.js';

function stepNumber(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('a step is a whole number ≥ 0');
  return n;
}

/** Writes the workspace of `id` (its latest shipped step, or `step`) into `dir`; returns the step written. */
export async function pullWorkspace(id: string, dir: string, step: number | undefined, env: ChildEnv): Promise<number> {
  const store = objectStore(env);
  if (!store)
    throw new ObjectStoreError(
      'config',
      'faheem workspace pull reads the object store: set FAHEEM_OBJECT_STORE (and the AWS_* variables for s3://)',
    );
  const manifest = await findManifest(store, id, step, env);
  if (!manifest)
    throw new ObjectStoreError(
      'not_found',
      `no shipped workspace of conversation ${id} in ${store.location} (only pooled conversations ship theirs)`,
    );
  await materialiseWorkspace(store, id, manifest, dir, env);
  return manifest.step;
}

/** The `workspace` command group. */
export function workspaceCommand(): Command {
  const workspace = new Command('workspace').description("a pooled conversation's workspace in the object store (FAHEEM_OBJECT_STORE)");
  workspace
    .command('pull')
    .description("write a pooled conversation's files into DIR (the latest shipped step, or --step N)")
    .argument('<id>', 'the conversation id')
    .argument('<dir>', 'where to write the files (created when missing)')
    .option('--step <n>', 'the workspace as of this step', stepNumber)
    .action(async (id: string, dir: string, o: { step?: number }) => {
      checkConversationId(id);
      const step = await pullWorkspace(id, path.resolve(dir), o.step, clientChildEnv());
      console.error(`faheem workspace pull: ${id} as of step ${step} written to ${path.resolve(dir)}`);
    });
  return workspace;
}
