// `--workspace-from DIR` / `workspaceFrom`: a pooled conversation's workspace starts from DIR's
// files, shipped to the object store at start as the checkpoint before step 0 (what a checkpoint
// takes: `git add -A` of DIR, .gitignore honoured), so that whichever host claims it restores them.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CheckpointStore } from '../time-travel/shadow-repo.js';
import { InvalidRequestError } from '../core/errors.js';
import { ObjectStoreError, objectStore } from '../storage/object-store.js';
import { shipCheckpoint } from './shipping.js';
import { encryptionCodec } from '../security/codec.js';
import type { ChildEnv } from '../environment.js';
import type { StoreSettings } from '../settings/store.js';

/** Ships DIR's files as conversation `id`'s starting workspace (to the store `storage` names; git runs with `env`). */
export async function seedWorkspace(id: string, dir: string, storage: StoreSettings, env: ChildEnv): Promise<void> {
  const store = objectStore(storage);
  const codec = encryptionCodec(storage.codec);
  if (!store) throw new ObjectStoreError('config', '--workspace-from uploads to the object store: set FAHEEM_OBJECT_STORE');
  const from = path.resolve(dir);
  if (!(await stat(from).catch(() => undefined))?.isDirectory()) throw new InvalidRequestError(`--workspace-from ${from}: not a directory`);
  const home = await mkdtemp(path.join(tmpdir(), 'faheem-seed-'));
  try {
    const repo = await new CheckpointStore({ home, env, watch: false }).open(from);
    const info = await repo.snapshot(id, 0);
    await shipCheckpoint(
      store,
      { conversationId: id, step: 0, epoch: 1, host: 'seed', gitDir: repo.gitDir, commit: info.commit },
      env,
      codec,
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
