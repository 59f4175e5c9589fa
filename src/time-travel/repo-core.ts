// What the checkpoint modules share of a workspace's shadow repository (shadow-repo.ts): its
// paths, its git runner, its refs and its per-conversation state. Snapshot (snapshot.ts), restore
// (restore-journal.ts) and fork (checkpoint-fork.ts) are functions over it; ShadowRepo is the one
// implementation and the only way in from outside this folder.
import type { GitResult } from './git.js';
import type { ChildEnv } from '../environment.js';
import type { WorkspaceWatcher } from './watch.js';
import type { CheckpointInfo } from './types.js';

/** Encodes a conversation id (or rewind id) for a ref component or file name: [A-Za-z0-9_-] stay, every other byte is %XX. */
export function encodeRefPart(id: string): string {
  let out = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out || '%';
}

/** Options of one git call in the shadow repository. */
export interface RunOptions {
  /** GIT_INDEX_FILE: a conversation's own index. */
  index?: string;
  input?: string | Buffer;
  okCodes?: number[];
  /** GIT_ALTERNATE_OBJECT_DIRECTORIES: the user's objects, borrowed. */
  alternates?: string;
  cwd?: string;
  env?: ChildEnv;
}

/** The user's repository around a workspace, when there is one (read only). */
export interface UserRepo {
  /** Its git directory (for a linked worktree, the worktree's own). */
  gitDir: string;
  /** Where its objects are (the common directory's). */
  objects: string;
  /** The workspace's path inside it, '' at its root, with a trailing '/' otherwise. */
  prefix: string;
  /** Its info/exclude, when the workspace is its root or inside it. */
  exclude?: string;
}

/** A workspace's shadow repository, as the checkpoint modules use it. */
export interface RepoCore {
  /** The workspace's real path. */
  readonly workspace: string;
  /** The shadow repository's directory (bare). */
  readonly gitDir: string;
  /** The environment git runs with (GIT_DIR and GIT_WORK_TREE set). */
  readonly env: ChildEnv;
  readonly maxFileBytes: number;
  /** Test hook: SIGKILL this process after this many files written by a restore. */
  readonly killAfterWrites: number;
  readonly user: UserRepo | undefined;
  readonly borrow: boolean;
  readonly watcher: WorkspaceWatcher | undefined;
  /** Whether the shadow repository names objects by SHA-1 (read once; see objects.ts). */
  sha1: Promise<boolean> | undefined;
  /** Per conversation: the watcher's generation its head checkpoint was taken at. */
  readonly clean: Map<string, { gen: number; head: string; info: CheckpointInfo }>;
  /** How many snapshots were answered without running git. */
  unchangedSnapshots: number;
  run(args: readonly string[], opts?: RunOptions): Promise<GitResult>;
  text(args: readonly string[], opts?: RunOptions): Promise<string>;
  /** Runs `work` after every earlier operation of the same conversation (in this process) has ended. */
  serial<T>(conversationId: string, work: () => Promise<T>): Promise<T>;
  ns(conversationId: string): string;
  indexFile(conversationId: string): string;
  journalFile(conversationId: string): string;
  refs(patterns: readonly string[]): Promise<Map<string, string>>;
  readRefs(names: readonly string[]): Promise<(string | undefined)[]>;
  writeRefs(updates: readonly { name: string; to: string; from: string | undefined }[]): Promise<void>;
  clearStaleLocks(index: string, refs: readonly string[]): Promise<void>;
  headRef(conversationId: string): Promise<string | undefined>;
  info(commit: string): Promise<CheckpointInfo>;
}

/** What opens another workspace's shadow repository (a fork writes into the new one). */
export interface RepoOpener {
  open(workspace: string): Promise<RepoCore>;
}
