// `faheem workspace pull ID DIR [--step N]`: a pooled conversation's files, from the object store,
// written anywhere the store is reachable (no worker, no host of the pool needed).
import { Command, InvalidArgumentError } from 'commander';
import path from 'node:path';
import { checkConversationId } from '../conversation/conversation-id.js';
import { ObjectStoreError, objectStore } from '../storage/object-store.js';
import { storeSettings } from '../settings/store.js';
import { encryptionCodec } from '../security/codec.js';
import { findManifest, materialiseWorkspace } from '../pool/shipping.js';
import type { ChildEnv } from '../environment.js';
import { clientChildEnv } from '../connection.js';

function stepNumber(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('a step is a whole number ≥ 0');
  return n;
}

/** Writes the workspace of `id` (its latest shipped step, or `step`) into `dir`; returns what was written. */
export async function pullWorkspace(
  id: string,
  dir: string,
  step: number | undefined,
  env: ChildEnv,
): Promise<{ step: number; midStep: boolean }> {
  const storage = storeSettings(env);
  const store = objectStore(storage);
  if (!store)
    throw new ObjectStoreError(
      'config',
      'faheem workspace pull reads the object store: set FAHEEM_OBJECT_STORE (and the AWS_* variables for s3://)',
    );
  const codec = encryptionCodec(storage.codec);
  const manifest = await findManifest(store, id, step, codec);
  if (!manifest)
    throw new ObjectStoreError(
      'not_found',
      `no shipped workspace of conversation ${id} in ${store.location} (only pooled conversations ship theirs)`,
    );
  await materialiseWorkspace(store, id, manifest, dir, env, codec);
  return { step: manifest.step, midStep: manifest.midStep === true };
}

/**
 * The line `workspace pull` ends with. A step ships only when it ran actions on the workspace host,
 * so the latest shipped step can be older than the conversation's step count (a last answer ships nothing).
 */
export function pulledLine(id: string, dir: string, pulled: { step: number; midStep: boolean }, asked: number | undefined): string {
  const files = pulled.midStep
    ? `its files in the middle of step ${pulled.step} (shipped as it hibernated)`
    : `its files after step ${pulled.step}`;
  const which = asked !== undefined ? '' : ', the last step shipped (a step that runs no command or edit ships nothing)';
  return `faheem workspace pull: ${id}: ${files}${which}, written to ${dir}`;
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
      const pulled = await pullWorkspace(id, path.resolve(dir), o.step, clientChildEnv());
      console.error(pulledLine(id, path.resolve(dir), pulled, o.step));
    });
  return workspace;
}
