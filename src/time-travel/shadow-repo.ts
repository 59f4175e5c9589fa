// Checkpoints of a workspace in a shadow git repository of the workspace host, outside the
// workspace: <FAHEEM_HOME>/checkpoints/<hash of the workspace's real path>.git (bare), one index
// file and one ref namespace per conversation. Every git call runs with GIT_DIR = the shadow,
// GIT_WORK_TREE = the workspace and GIT_INDEX_FILE = the conversation's own index, so the user's
// repository (its .git, HEAD, branches, refs and index) is only ever read, never written.
//
// What a checkpoint holds: what `git add -A` would take in the workspace (it honours the
// workspace's .gitignore files and, when the workspace is a repository's root, that repository's
// .git/info/exclude; never a `.git`; not the user's global excludes nor .gitignore files above the
// workspace), minus files over the size cap (listed as skipped).
// Nested repositories are recorded as gitlinks and left alone by restore.
//
// Refs, with the conversation id encoded (encodeRefPart):
//   refs/faheem/<c>/head            the latest checkpoint, parent of the next one
//   refs/faheem/<c>/step-<n>        the checkpoint after step n
//   refs/faheem/<c>/mid-step-<n>    the workspace in the middle of step n, when it hibernated there
//   refs/faheem/<c>/rewind/<id>     the workspace just before rewind <id> (undo)
//   refs/faheem/<c>/rewound/<id>/step-<n>, refs/faheem/<c>/replaced/step-<n>-<commit>
//                                   checkpoints set aside by a rewind or a new take of a step: kept, not listed
//
// This file is the store: CheckpointStore, and ShadowRepo (the repository, its refs, its git runner,
// one operation of a conversation at a time). Its jobs are modules over repo-core.ts: a checkpoint
// (snapshot.ts), a rewind (restore-journal.ts) and a fork's files (checkpoint-fork.ts).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { baseGitEnv, CheckpointError, git } from './git.js';
import { WorkspaceWatcher } from './watch.js';
import { materialize as materializeCheckpoint } from './checkpoint-fork.js';
import { encodeRefPart, type RepoCore, type RunOptions, type UserRepo } from './repo-core.js';
import { restore as restoreCheckpoint } from './restore-journal.js';
import { take } from './snapshot.js';
import type { CheckpointInfo, CheckpointKind, ForkResult, RestoreResult } from './types.js';
import type { ChildEnv } from '../environment.js';
import type { CheckpointSettings } from '../settings/checkpoints.js';
import { KeyedLanes } from '../core/keyed-lanes.js';

export { encodeRefPart };

/** Files larger than this are left out of checkpoints unless configured otherwise (10 MB). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
const ZERO = '0000000000000000000000000000000000000000';
/** A lock file older than this was left by a process that died holding it (see clearStaleLocks). */
const STALE_LOCK_MS = 5_000;

/** How the store is set up on a host. */
export interface CheckpointStoreOptions {
  /** Where the shadow repositories live: `<home>/checkpoints/`. */
  home: string;
  /** Files larger than this many bytes are skipped (default DEFAULT_MAX_FILE_BYTES). */
  maxFileBytes?: number;
  /** Borrow the user's objects for a first checkpoint of a git repository (default true). */
  borrow?: boolean;
  /** The environment git runs with, as the worker has it (its GIT_* variables are dropped). */
  env: ChildEnv;
  /** Tests only: the process dies after this many of a checkpoint's writes (FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES). */
  killAfterWrites?: number;
  /**
   * Watch each workspace (inotify, see watch.ts) so that a step that changed nothing is recorded
   * without running git (default true; off for workspaces that other machines write to).
   */
  watch?: boolean;
  /**
   * Runs after each step's snapshot (and mid-step one), before it is answered (a pool's host ships
   * it to the object store there: pool/pool.ts); its failure is the snapshot's.
   */
  afterSnapshot?: (workspace: string, gitDir: string, conversationId: string, info: CheckpointInfo) => Promise<void>;
}

/** At most this many workspaces are watched by one store; the least recently used one stops. */
const MAX_WATCHED_WORKSPACES = 256;

/**
 * The checkpoint store of one workspace host. `open(workspace)` gives that workspace's shadow
 * repository; one instance per worker, so that operations of a conversation never overlap.
 */
export class CheckpointStore {
  private readonly repos = new Map<string, Promise<ShadowRepo>>();

  constructor(readonly options: CheckpointStoreOptions) {}

  /**
   * The store a worker uses: under the checkpoint settings' home, with their cap, borrowing and
   * watching as they say (src/settings/checkpoints.ts).
   */
  static fromSettings(
    checkpoints: CheckpointSettings,
    childEnv: ChildEnv,
    extra: Pick<CheckpointStoreOptions, 'afterSnapshot'> = {},
  ): CheckpointStore {
    return new CheckpointStore({
      ...extra,
      home: checkpoints.home,
      ...(checkpoints.maxFileBytes !== undefined ? { maxFileBytes: checkpoints.maxFileBytes } : {}),
      borrow: checkpoints.borrow,
      watch: checkpoints.watch,
      env: childEnv,
      ...(checkpoints.killAfterWrites !== undefined ? { killAfterWrites: checkpoints.killAfterWrites } : {}),
    });
  }

  /** The shadow repository of `workspace` (created on first use). Fails when the workspace is not a directory. */
  open(workspace: string): Promise<ShadowRepo> {
    const key = path.resolve(workspace);
    let repo = this.repos.get(key);
    if (repo) {
      // Most recently used last (what the watcher limit goes by).
      this.repos.delete(key);
      this.repos.set(key, repo);
    } else {
      repo = ShadowRepo.open(key, this.options);
      this.repos.set(key, repo);
      repo.catch(() => this.repos.delete(key));
      if (this.repos.size > MAX_WATCHED_WORKSPACES) {
        const oldest = this.repos.values().next().value as Promise<ShadowRepo>;
        void oldest.then((r) => r.stopWatching()).catch(() => undefined);
      }
    }
    return repo;
  }

  /** Stops every watcher (the repositories still work, taking the full path). */
  async close(): Promise<void> {
    for (const repo of this.repos.values()) (await repo.catch(() => undefined))?.stopWatching();
  }
}

/** Where a fork of `workspace` goes by default: a sibling directory named after the new conversation. */
export function defaultForkDir(workspace: string, newConversationId: string): string {
  const abs = path.resolve(workspace);
  return path.join(path.dirname(abs), `${path.basename(abs)}-${encodeRefPart(newConversationId).replace(/%/g, '_')}`);
}

/** A parsed commit message of a checkpoint. */
interface Trailers {
  conversation?: string;
  step?: number;
  kind?: CheckpointKind;
  added?: number;
  changed?: number;
  deleted?: number;
  skipped?: string[];
}

/** A workspace's shadow repository. Get one with CheckpointStore.open. */
export class ShadowRepo implements RepoCore {
  /** The shadow repository's directory (bare). */
  readonly gitDir: string;
  readonly env: ChildEnv;
  readonly maxFileBytes: number;
  private readonly lanes = new KeyedLanes();
  /** Test hook: SIGKILL this process after this many files written by a restore. */
  readonly killAfterWrites: number;
  watcher: WorkspaceWatcher | undefined;
  /** Whether the shadow repository names objects by SHA-1 (read once; see objects.ts). */
  sha1: Promise<boolean> | undefined;
  /** Per conversation: the watcher's generation its head checkpoint was taken at. */
  readonly clean = new Map<string, { gen: number; head: string; info: CheckpointInfo }>();
  /** How many snapshots were answered without running git (tests and benches read it). */
  unchangedSnapshots = 0;
  private readonly afterSnapshot: CheckpointStoreOptions['afterSnapshot'];

  private constructor(
    /** The workspace's real path. */
    readonly workspace: string,
    options: CheckpointStoreOptions,
    readonly user: UserRepo | undefined,
    readonly borrow: boolean,
  ) {
    const id = createHash('sha256').update(workspace).digest('hex').slice(0, 24);
    this.gitDir = path.join(options.home, 'checkpoints', `${id}.git`);
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.afterSnapshot = options.afterSnapshot;
    this.killAfterWrites = options.killAfterWrites ?? 0;
    this.env = { ...baseGitEnv(options.env), GIT_DIR: this.gitDir, GIT_WORK_TREE: workspace };
  }

  /** Opens (creating when needed) the shadow repository of a workspace directory. */
  static async open(workspace: string, options: CheckpointStoreOptions): Promise<ShadowRepo> {
    let real: string;
    try {
      real = await realpath(workspace);
      if (!(await stat(real)).isDirectory()) throw new Error('not a directory');
    } catch (err) {
      throw new CheckpointError('invalid', `the workspace ${workspace} is not a directory on this host`, { cause: err });
    }
    const repo = new ShadowRepo(real, options, await findUserRepo(real, options.env), options.borrow ?? true);
    await repo.init();
    if (options.watch ?? true) repo.watcher = new WorkspaceWatcher(real, path.join(repo.gitDir, 'watch'));
    return repo;
  }

  /** Stops watching the workspace (every later snapshot runs git). */
  stopWatching(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.clean.clear();
  }

  /**
   * The commits refs name (undefined where there is none), read from their loose files without a
   * process; through `for-each-ref` when the repository has packed refs (this store never packs).
   */
  async readRefs(names: readonly string[]): Promise<(string | undefined)[]> {
    if (existsSync(path.join(this.gitDir, 'packed-refs'))) {
      const known = await this.refs(names);
      return names.map((n) => known.get(n));
    }
    return Promise.all(
      names.map(async (name) => {
        const text = (await readFile(path.join(this.gitDir, ...name.split('/')), 'utf8').catch(() => '')).trim();
        return /^[0-9a-f]{40,64}$/.test(text) ? text : undefined;
      }),
    );
  }

  /**
   * Moves refs (each from the commit it must still name, undefined: none) as `git update-ref`
   * does, without a process: a `<ref>.lock` made exclusively, the old value checked, renamed into
   * place; in order, so that a crash between two leaves the first moved (which a retry handles).
   * A lock held by someone else, a changed value or packed refs: through `git update-ref` (which
   * then fails as git does, and the activity retries).
   */
  async writeRefs(updates: readonly { name: string; to: string; from: string | undefined }[]): Promise<void> {
    const viaGit = async () => {
      const tx = ['start', ...updates.map((u) => `update ${u.name} ${u.to} ${u.from ?? ZERO}`), 'commit', ''];
      await this.run(['update-ref', '--stdin'], { input: tx.join('\n') });
    };
    if (existsSync(path.join(this.gitDir, 'packed-refs'))) return viaGit();
    for (const [i, u] of updates.entries()) {
      const file = path.join(this.gitDir, ...u.name.split('/'));
      const lock = `${file}.lock`;
      let h;
      try {
        // The ref's folder is made by its first write (a step's ref is new: its folder is not).
        h = await open(lock, 'wx').catch(async (err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
          await mkdir(path.dirname(file), { recursive: true });
          return open(lock, 'wx');
        });
      } catch {
        return i === 0 ? viaGit() : Promise.reject(new CheckpointError('git_failed', `the ref ${u.name} is locked`));
      }
      try {
        const [now] = await this.readRefs([u.name]);
        if (now !== u.from)
          throw new CheckpointError('git_failed', `the ref ${u.name} changed meanwhile (${now ?? 'none'}, not ${u.from ?? 'none'})`);
        await h.writeFile(`${u.to}\n`);
        await h.close();
        h = undefined;
        await rename(lock, file);
      } catch (err) {
        await h?.close().catch(() => undefined);
        await rm(lock, { force: true });
        throw err;
      }
    }
  }

  /**
   * Removes lock files left by a process killed while it held them (a worker's SIGKILL mid-`git
   * add` leaves `<index>.lock`, and git then refuses every later add). A lock is held for
   * milliseconds; one older than STALE_LOCK_MS has no live holder. Only this conversation's own
   * index and refs: nobody else writes them.
   */
  async clearStaleLocks(index: string, refs: readonly string[]): Promise<void> {
    const locks = [`${index}.lock`, ...refs.map((r) => `${path.join(this.gitDir, ...r.split('/'))}.lock`)];
    for (const lock of locks) {
      const st = await lstat(lock).catch(() => undefined);
      if (st && Date.now() - st.mtimeMs > STALE_LOCK_MS) await rm(lock, { force: true });
    }
  }

  /** The commit a conversation's head ref names, read from its file (undefined: not a loose ref). */
  async headRef(conversationId: string): Promise<string | undefined> {
    const file = path.join(this.gitDir, ...`${this.ns(conversationId)}/head`.split('/'));
    const text = await readFile(file, 'utf8').catch(() => '');
    return /^[0-9a-f]{40,64}$/.test(text.trim()) ? text.trim() : undefined;
  }

  private async init(): Promise<void> {
    if (existsSync(path.join(this.gitDir, 'HEAD'))) return;
    // Made beside and renamed into place, so that two workers starting at once cannot half-make it.
    const tmp = `${this.gitDir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    await mkdir(path.dirname(this.gitDir), { recursive: true });
    // What `git init --bare --template=` makes (gitrepository-layout), without a process: a new
    // conversation's first checkpoint runs git as little as it can.
    for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) await mkdir(path.join(tmp, dir), { recursive: true });
    await writeFile(path.join(tmp, 'HEAD'), 'ref: refs/heads/main\n');
    const config: [string, string][] = [
      ['core.repositoryformatversion', '0'],
      ['core.bare', 'true'],
      ['core.autocrlf', 'false'],
      ['core.safecrlf', 'false'],
      ['core.hooksPath', '/dev/null'],
      ['core.fsmonitor', 'false'],
      ['core.untrackedCache', 'true'],
      ['core.quotePath', 'false'],
      ['core.symlinks', 'true'],
      ['core.fileMode', 'true'],
      ['gc.auto', '0'],
      ['faheem.workspace', this.workspace],
    ];
    // Written as one file (not one `git config` process each): nothing in the values needs quoting
    // but the workspace path, quoted and escaped as git's config syntax wants.
    const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
    const sections = new Map<string, string[]>();
    for (const [k, v] of config) {
      const [section, name] = k.split('.') as [string, string];
      sections.set(section, [...(sections.get(section) ?? []), `\t${name} = ${quote(v)}`]);
    }
    const text = [...sections].map(([section, lines]) => `[${section}]\n${lines.join('\n')}\n`).join('');
    await writeFile(path.join(tmp, 'config'), text);
    try {
      await rename(tmp, this.gitDir);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      if (!existsSync(path.join(this.gitDir, 'HEAD'))) throw err;
    }
  }

  run(args: readonly string[], opts: RunOptions = {}) {
    const env: Record<string, string | undefined> = { ...this.env, ...opts.env };
    if (opts.index) env.GIT_INDEX_FILE = opts.index;
    if (opts.alternates) env.GIT_ALTERNATE_OBJECT_DIRECTORIES = opts.alternates;
    const config = ['-c', `core.excludesFile=${this.user?.exclude ?? '/dev/null'}`];
    return git([...config, ...args], {
      env,
      cwd: opts.cwd ?? this.workspace,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
      ...(opts.okCodes ? { okCodes: opts.okCodes } : {}),
    });
  }

  async text(args: readonly string[], opts: RunOptions = {}): Promise<string> {
    return (await this.run(args, opts)).stdout.toString('utf8').trim();
  }

  /** Runs `work` after every earlier operation of the same conversation (in this process) has ended. */
  serial<T>(conversationId: string, work: () => Promise<T>): Promise<T> {
    return this.lanes.run(conversationId, work);
  }

  ns(conversationId: string): string {
    return `refs/faheem/${encodeRefPart(conversationId)}`;
  }

  indexFile(conversationId: string): string {
    return path.join(this.gitDir, `index-${encodeRefPart(conversationId)}`);
  }

  journalFile(conversationId: string): string {
    return path.join(this.gitDir, `restore-${encodeRefPart(conversationId)}.json`);
  }

  /** Reads refs (name → commit) that exist among `names`. */
  async refs(patterns: readonly string[]): Promise<Map<string, string>> {
    const out = await this.text(['for-each-ref', '--format=%(refname) %(objectname)', ...patterns]);
    const map = new Map<string, string>();
    for (const line of out.split('\n')) {
      const [name, sha] = line.split(' ');
      if (name && sha) map.set(name, sha);
    }
    return map;
  }

  /**
   * Records the workspace as the checkpoint after `step` of the conversation, parent = the
   * conversation's latest checkpoint. A retry of the same step (after a crash, say) returns the
   * checkpoint already written when its ref exists with the same parent and tree; a different
   * take of the step sets the old one aside (kept, not listed).
   */
  snapshot(conversationId: string, step: number): Promise<CheckpointInfo> {
    if (!Number.isInteger(step) || step < 0) throw new CheckpointError('invalid', `a checkpoint's step is a whole number ≥ 0, not ${step}`);
    return this.serial(conversationId, async () => {
      const info = await take(this, conversationId, step, 'step', `${this.ns(conversationId)}/step-${step}`);
      await this.afterSnapshot?.(this.workspace, this.gitDir, conversationId, info);
      return info;
    });
  }

  /**
   * Records the workspace as it is now, in the middle of `step` (a pooled conversation hibernating
   * in a wait or an approval ships it: kind 'mid-step', ref mid-step-<n>, the new head). Not the
   * step's checkpoint: that one is taken when the step ends, as ever.
   */
  snapshotMidStep(conversationId: string, step: number): Promise<CheckpointInfo> {
    if (!Number.isInteger(step) || step < 0) throw new CheckpointError('invalid', `a checkpoint's step is a whole number ≥ 0, not ${step}`);
    return this.serial(conversationId, async () => {
      const info = await take(this, conversationId, step, 'mid-step', `${this.ns(conversationId)}/mid-step-${step}`);
      await this.afterSnapshot?.(this.workspace, this.gitDir, conversationId, info);
      return info;
    });
  }

  /** The checkpoint a commit is (parsed from its message). */
  async info(commit: string): Promise<CheckpointInfo> {
    const raw = await this.run(['cat-file', 'commit', commit], { okCodes: [128] });
    if (raw.code !== 0) throw new CheckpointError('not_found', `no checkpoint ${commit} in the shadow repository of ${this.workspace}`);
    return parseCommit(commit, raw.stdout.toString('utf8'));
  }

  /**
   * The checkpoints of a conversation, by step (the step refs: after a rewind, the later ones are
   * set aside until taken again), then the "before rewind" ones.
   */
  list(conversationId: string): Promise<CheckpointInfo[]> {
    return this.serial(conversationId, async () => {
      const ns = this.ns(conversationId);
      const fmt = '%(refname)%00%(objectname)%00%(tree)%00%(parent)%00%(committerdate:unix)%00%(contents)%00%00';
      const out = (await this.run(['for-each-ref', `--format=${fmt}`, `${ns}/`])).stdout.toString('utf8');
      const result: CheckpointInfo[] = [];
      for (const rec of out.split('\0\0\n')) {
        const [ref, commit, tree, parent, time, contents] = rec.split('\0');
        if (!ref || !commit || !tree || contents === undefined) continue;
        const rest = ref.slice(ns.length + 1);
        if (!/^step-\d+$/.test(rest) && !rest.startsWith('rewind/')) continue;
        const t = parseTrailers(contents);
        result.push(toInfo(commit, tree, parent || undefined, Number(time) * 1000, t));
      }
      const order = (c: CheckpointInfo) => (c.kind === 'step' ? 0 : 1);
      return result.sort((a, b) => order(a) - order(b) || a.step - b.step || a.time - b.time);
    });
  }

  /**
   * Puts the workspace back as checkpoint `commit`: files added since are removed, changed and
   * deleted ones written back (each via a temporary file renamed into place). Ignored files,
   * skipped big files and any `.git` are never touched. First records the workspace as it is
   * (`before`, kind 'before-rewind', ref rewind/<rewindId>), then a journal; a re-run after a
   * crash (same conversation) finishes the journal's restore, and a retry with the same rewindId
   * reuses `before`. Afterwards the conversation's head is `commit`, and when `commit` is its
   * step-N checkpoint the step refs after N are set aside under rewound/<rewindId>/.
   */
  restore(conversationId: string, commit: string, rewindId: string): Promise<RestoreResult> {
    return restoreCheckpoint(this, conversationId, commit, rewindId);
  }

  /**
   * Writes checkpoint `commit`'s files into `targetDir` (created; must be empty), leaving the
   * workspace alone. Only the tree: no `.git`, no ignored or skipped files. With `carry`, the new
   * directory's shadow repository gets conversation `carry.from`'s checkpoints up to `commit`'s
   * step under conversation `carry.to` (head = `commit`, and an index that already knows the
   * files just written), so the fork can itself be rewound to any of those steps.
   */
  materialize(commit: string, targetDir: string, carry?: { from: string; to: string; store: CheckpointStore }): Promise<ForkResult> {
    return materializeCheckpoint(this, commit, targetDir, carry);
  }

  /** The shadow repository's size on disk in bytes (objects, refs, indexes). */
  async diskBytes(): Promise<number> {
    return du(this.gitDir);
  }
}

function parseTrailers(message: string): Trailers {
  const t: Trailers = {};
  for (const line of message.split('\n')) {
    const m = /^Faheem-([A-Za-z]+): (.*)$/.exec(line);
    if (!m) continue;
    const [, key, value] = m;
    try {
      if (key === 'Conversation') t.conversation = JSON.parse(value!) as string;
      else if (key === 'Step') t.step = Number(value);
      else if (key === 'Kind') t.kind = value as CheckpointKind;
      else if (key === 'Added') t.added = Number(value);
      else if (key === 'Changed') t.changed = Number(value);
      else if (key === 'Deleted') t.deleted = Number(value);
      else if (key === 'Skipped') t.skipped = JSON.parse(value!) as string[];
    } catch {
      // a damaged trailer reads as absent
    }
  }
  return t;
}

function toInfo(commit: string, tree: string, parent: string | undefined, time: number, t: Trailers): CheckpointInfo {
  return {
    commit,
    tree,
    step: t.step ?? 0,
    kind: t.kind ?? 'step',
    time,
    added: t.added ?? 0,
    changed: t.changed ?? 0,
    deleted: t.deleted ?? 0,
    skipped: t.skipped ?? [],
    ...(parent ? { parent } : {}),
  };
}

function parseCommit(commit: string, raw: string): CheckpointInfo {
  const split = raw.indexOf('\n\n');
  const header = raw.slice(0, split < 0 ? raw.length : split);
  const tree = /^tree (\S+)$/m.exec(header)?.[1] ?? '';
  const parent = /^parent (\S+)$/m.exec(header)?.[1];
  const time = Number(/^committer .* (\d+) [+-]\d{4}$/m.exec(header)?.[1] ?? 0) * 1000;
  return toInfo(commit, tree, parent, time, parseTrailers(split < 0 ? '' : raw.slice(split + 2)));
}

/** Finds the git repository a directory is in (by its `.git`), read only; undefined when there is none. */
async function findUserRepo(workspace: string, env: ChildEnv): Promise<UserRepo | undefined> {
  let dir = workspace;
  for (;;) {
    const dotGit = path.join(dir, '.git');
    const st = await lstat(dotGit).catch(() => undefined);
    if (st) {
      let gitDir = dotGit;
      if (st.isFile()) {
        const m = /^gitdir: (.*)$/m.exec(await readFile(dotGit, 'utf8').catch(() => ''));
        if (!m) return undefined;
        gitDir = path.resolve(dir, m[1]!.trim());
      }
      let common = gitDir;
      const commonFile = await readFile(path.join(gitDir, 'commondir'), 'utf8').catch(() => undefined);
      if (commonFile) common = path.resolve(gitDir, commonFile.trim());
      if (!existsSync(path.join(common, 'objects'))) return undefined;
      const rel = path.relative(dir, workspace);
      const exclude = path.join(common, 'info', 'exclude');
      void env;
      return {
        gitDir,
        objects: path.join(common, 'objects'),
        prefix: rel ? `${rel.split(path.sep).join('/')}/` : '',
        ...(existsSync(exclude) && !rel ? { exclude } : {}),
      };
    }
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

async function du(p: string): Promise<number> {
  const st = await lstat(p).catch(() => undefined);
  if (!st) return 0;
  if (!st.isDirectory()) return st.blocks * 512;
  let sum = st.blocks * 512;
  for (const name of await readdir(p)) sum += await du(path.join(p, name));
  return sum;
}
