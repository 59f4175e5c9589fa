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
//   refs/faheem/<c>/rewind/<id>     the workspace just before rewind <id> (undo)
//   refs/faheem/<c>/rewound/<id>/step-<n>, refs/faheem/<c>/replaced/step-<n>-<commit>
//                                   checkpoints set aside by a rewind or a new take of a step: kept, not listed
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, open, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { faheemHome } from '../home.js';
import { WorkspaceFs } from '../security/workspace-fs.js';
import { baseGitEnv, CheckpointError, git, splitZ } from './git.js';
import { WorkspaceWatcher } from './watch.js';
import { commitBody, usesSha1, writeObject } from './objects.js';
import type { CheckpointInfo, CheckpointKind, ForkResult, RestoreResult } from './types.js';
import type { ChildEnv, Settings } from '../environment.js';

/** Files larger than this are left out of checkpoints unless configured otherwise (10 MB). */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** The empty tree's id: the "previous" tree of a conversation's first checkpoint. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const ZERO = '0000000000000000000000000000000000000000';
/** A lock file older than this was left by a process that died holding it (see clearStaleLocks). */
const STALE_LOCK_MS = 5_000;
/** At most this many skipped paths are recorded in a checkpoint. */
const SKIPPED_LISTED = 100;

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
   * Runs after each step's snapshot, before it is answered (a pool's host ships it to the object
   * store there: workspaces/pool.ts); its failure is the snapshot's.
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
   * The store a worker uses: under `faheemHome(env)`, the cap from
   * FAHEEM_CHECKPOINT_MAX_FILE_BYTES (bytes), borrowing unless FAHEEM_CHECKPOINT_BORROW=0.
   */
  static fromEnv(env: Settings, childEnv: ChildEnv, extra: Pick<CheckpointStoreOptions, 'afterSnapshot'> = {}): CheckpointStore {
    const cap = Number(env.FAHEEM_CHECKPOINT_MAX_FILE_BYTES);
    const killAfterWrites = Number(env.FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES);
    return new CheckpointStore({
      ...extra,
      home: faheemHome(env),
      ...(Number.isFinite(cap) && cap > 0 ? { maxFileBytes: cap } : {}),
      borrow: env.FAHEEM_CHECKPOINT_BORROW !== '0',
      watch: env.FAHEEM_CHECKPOINT_WATCH !== '0',
      env: childEnv,
      ...(killAfterWrites > 0 ? { killAfterWrites } : {}),
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

/** Encodes a conversation id (or rewind id) for a ref component or file name: [A-Za-z0-9_-] stay, every other byte is %XX. */
export function encodeRefPart(id: string): string {
  let out = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out || '%';
}

/** Where a fork of `workspace` goes by default: a sibling directory named after the new conversation. */
export function defaultForkDir(workspace: string, newConversationId: string): string {
  const abs = path.resolve(workspace);
  return path.join(path.dirname(abs), `${path.basename(abs)}-${encodeRefPart(newConversationId).replace(/%/g, '_')}`);
}

/** The user's repository around a workspace, when there is one (read only). */
interface UserRepo {
  /** Its git directory (for a linked worktree, the worktree's own). */
  gitDir: string;
  /** Where its objects are (the common directory's). */
  objects: string;
  /** The workspace's path inside it, '' at its root, with a trailing '/' otherwise. */
  prefix: string;
  /** Its info/exclude, when the workspace is its root or inside it. */
  exclude?: string;
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

/** One line of `diff-tree -r -z` raw output. */
interface DiffEntry {
  srcMode: string;
  dstMode: string;
  dst: string;
  status: string;
  path: string;
}

/** What a restore in progress writes down first, so that a re-run after a crash finishes the same work. */
interface Journal {
  rewindId: string;
  before: CheckpointInfo;
  target: string;
  kept: string[];
}

/** A workspace's shadow repository. Get one with CheckpointStore.open. */
export class ShadowRepo {
  /** The shadow repository's directory (bare). */
  readonly gitDir: string;
  private readonly env: ChildEnv;
  private readonly maxFileBytes: number;
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Test hook: SIGKILL this process after this many files written by a restore. */
  private readonly killAfterWrites: number;
  private watcher: WorkspaceWatcher | undefined;
  /** Whether the shadow repository names objects by SHA-1 (read once; see objects.ts). */
  private sha1: Promise<boolean> | undefined;
  /** Per conversation: the watcher's generation its head checkpoint was taken at. */
  private readonly clean = new Map<string, { gen: number; head: string; info: CheckpointInfo }>();
  /** How many snapshots were answered without running git (tests and benches read it). */
  unchangedSnapshots = 0;
  private readonly afterSnapshot: CheckpointStoreOptions['afterSnapshot'];

  private constructor(
    /** The workspace's real path. */
    readonly workspace: string,
    options: CheckpointStoreOptions,
    private readonly user: UserRepo | undefined,
    private readonly borrow: boolean,
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
  private async readRefs(names: readonly string[]): Promise<(string | undefined)[]> {
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
  private async writeRefs(updates: readonly { name: string; to: string; from: string | undefined }[]): Promise<void> {
    const viaGit = async () => {
      const tx = ['start', ...updates.map((u) => `update ${u.name} ${u.to} ${u.from ?? ZERO}`), 'commit', ''];
      await this.run(['update-ref', '--stdin'], { input: tx.join('\n') });
    };
    if (existsSync(path.join(this.gitDir, 'packed-refs'))) return viaGit();
    for (const [i, u] of updates.entries()) {
      const file = path.join(this.gitDir, ...u.name.split('/'));
      const lock = `${file}.lock`;
      await mkdir(path.dirname(file), { recursive: true });
      let h;
      try {
        h = await open(lock, 'wx');
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
  private async clearStaleLocks(index: string, refs: readonly string[]): Promise<void> {
    const locks = [`${index}.lock`, ...refs.map((r) => `${path.join(this.gitDir, ...r.split('/'))}.lock`)];
    for (const lock of locks) {
      const st = await lstat(lock).catch(() => undefined);
      if (st && Date.now() - st.mtimeMs > STALE_LOCK_MS) await rm(lock, { force: true });
    }
  }

  /** The commit a conversation's head ref names, read from its file (undefined: not a loose ref). */
  private async headRef(conversationId: string): Promise<string | undefined> {
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

  private run(
    args: readonly string[],
    opts: { index?: string; input?: string | Buffer; okCodes?: number[]; alternates?: string; cwd?: string; env?: ChildEnv } = {},
  ) {
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

  private async text(args: readonly string[], opts: Parameters<ShadowRepo['run']>[1] = {}): Promise<string> {
    return (await this.run(args, opts)).stdout.toString('utf8').trim();
  }

  /** Runs `work` after every earlier operation of the same conversation (in this process) has ended. */
  private serial<T>(conversationId: string, work: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(conversationId) ?? Promise.resolve();
    const next = prev.then(work, work);
    const tail = next.catch(() => undefined);
    this.locks.set(conversationId, tail);
    void tail.then(() => {
      if (this.locks.get(conversationId) === tail) this.locks.delete(conversationId);
    });
    return next;
  }

  private ns(conversationId: string): string {
    return `refs/faheem/${encodeRefPart(conversationId)}`;
  }

  private indexFile(conversationId: string): string {
    return path.join(this.gitDir, `index-${encodeRefPart(conversationId)}`);
  }

  private journalFile(conversationId: string): string {
    return path.join(this.gitDir, `restore-${encodeRefPart(conversationId)}.json`);
  }

  /** Reads refs (name → commit) that exist among `names`. */
  private async refs(patterns: readonly string[]): Promise<Map<string, string>> {
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
      const info = await this.take(conversationId, step, 'step', `${this.ns(conversationId)}/step-${step}`);
      await this.afterSnapshot?.(this.workspace, this.gitDir, conversationId, info);
      return info;
    });
  }

  private async take(conversationId: string, step: number, kind: CheckpointKind, refName: string): Promise<CheckpointInfo> {
    // Nothing changed since the head was taken (the watcher vouches, and no other process moved
    // the head meanwhile): the head is this step's checkpoint too, and no git runs.
    const gen = this.watcher ? await this.watcher.settle() : undefined;
    const seen = this.clean.get(conversationId);
    if (kind === 'step' && gen !== undefined && seen && seen.gen === gen && (await this.headRef(conversationId)) === seen.head) {
      this.unchangedSnapshots++;
      return { ...seen.info, added: 0, changed: 0, deleted: 0 };
    }
    this.clean.delete(conversationId);
    const info = await this.takeWithGit(conversationId, step, kind, refName);
    if (kind === 'step' && gen !== undefined) this.clean.set(conversationId, { gen, head: info.commit, info });
    return info;
  }

  private async takeWithGit(conversationId: string, step: number, kind: CheckpointKind, refName: string): Promise<CheckpointInfo> {
    const ns = this.ns(conversationId);
    const index = this.indexFile(conversationId);
    const [head, existing] = await this.readRefs([`${ns}/head`, refName]);
    if (existing && existing === head) return this.info(existing);
    await this.clearStaleLocks(index, [`${ns}/head`, refName]);
    // The index the last checkpoint (or restore) of this conversation left describes its head.
    const indexWasHead = existsSync(index);
    const alternates = indexWasHead ? undefined : await this.prime(conversationId, index);
    // Nothing to start from (a new workspace's first checkpoint): the index is empty.
    const indexEmpty = !indexWasHead && !existsSync(index);
    try {
      return await this.write(conversationId, step, kind, refName, { index, head, existing, alternates, indexWasHead, indexEmpty });
    } catch (err) {
      if (!alternates) throw err;
      // The borrowed objects went away meanwhile (the user's gc): take it again on our own.
      await rm(index, { force: true });
      return this.write(conversationId, step, kind, refName, {
        index,
        head,
        existing,
        alternates: undefined,
        indexWasHead: false,
        indexEmpty: true,
      });
    }
  }

  private async write(
    conversationId: string,
    step: number,
    kind: CheckpointKind,
    refName: string,
    at: {
      index: string;
      head: string | undefined;
      existing: string | undefined;
      alternates: string | undefined;
      indexWasHead: boolean;
      indexEmpty: boolean;
    },
  ): Promise<CheckpointInfo> {
    const { index, head, alternates } = at;
    const o = { index, ...(alternates ? { alternates } : {}) };
    // New and changed files are the only ones that can newly exceed the cap: stat just those.
    // Tagged (`?` new, `C` changed, `R` removed, …): also what the counts come from, when the index
    // is the head's tree (the usual case: the index the last checkpoint wrote).
    const tagged = splitZ((await this.run(['ls-files', '-z', '-t', '-o', '-m', '-d', '--exclude-standard'], o)).stdout).map((t) => ({
      tag: t[0],
      path: t.slice(2),
    }));
    const candidates = tagged.filter((t) => t.tag !== 'R').map((t) => t.path);
    const skipped: string[] = [];
    for (const rel of new Set(candidates)) {
      const st = await lstat(path.join(this.workspace, rel)).catch(() => undefined);
      if (st?.isFile() && st.size > this.maxFileBytes) skipped.push(rel);
    }
    skipped.sort();
    if (skipped.length) {
      const list = skipped.map((p) => `:(literal)${p}`).join('\0');
      await this.run(['rm', '--cached', '-f', '-q', '-r', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        ...o,
        input: list,
      });
    }
    const specs = ['.', ...skipped.map((p) => `:(exclude,literal)${p}`)].join('\0');
    await this.run(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], { ...o, input: specs });
    const tree = await this.text(['write-tree'], o);
    if (at.existing) {
      const prior = await this.info(at.existing);
      if (prior.parent === head && prior.tree === tree) return prior;
      await this.run(['update-ref', `${this.ns(conversationId)}/replaced/step-${step}-${at.existing}`, at.existing]);
    }
    const counts = { added: 0, changed: 0, deleted: 0 };
    // The tags count the changes when the index is what the checkpoint starts from: the head's tree,
    // or nothing for a first checkpoint from an empty index (every file new, no C or R tags).
    if (head ? at.indexWasHead : at.indexEmpty) {
      const big = new Set(skipped);
      const removed = new Set(tagged.filter((t) => t.tag === 'R').map((t) => t.path));
      const changed = new Set(tagged.filter((t) => t.tag === 'C' && !removed.has(t.path)).map((t) => t.path));
      for (const t of new Set(tagged.filter((x) => x.tag === '?').map((x) => x.path))) if (!big.has(t)) counts.added++;
      for (const p of changed) {
        if (big.has(p))
          counts.deleted++; // tracked, now over the cap: out of the checkpoint
        else counts.changed++;
      }
      counts.deleted += removed.size;
    } else {
      const diff = splitZ((await this.run(['diff-tree', '-r', '-z', '--no-renames', '--name-status', head ?? EMPTY_TREE, tree], o)).stdout);
      for (let i = 0; i + 1 < diff.length; i += 2) {
        const s = diff[i]![0];
        if (s === 'A') counts.added++;
        else if (s === 'D') counts.deleted++;
        else counts.changed++;
      }
    }
    const listed = skipped.slice(0, SKIPPED_LISTED);
    const message =
      `faheem checkpoint: step ${step}${kind === 'step' ? '' : ` (${kind})`}\n\n` +
      `Faheem-Conversation: ${JSON.stringify(conversationId)}\nFaheem-Step: ${step}\nFaheem-Kind: ${kind}\n` +
      `Faheem-Added: ${counts.added}\nFaheem-Changed: ${counts.changed}\nFaheem-Deleted: ${counts.deleted}\n` +
      `Faheem-Skipped: ${JSON.stringify(listed)}\n`;
    // The commit object written here (no process); git writes it in a repository not named by SHA-1.
    const commit = (await (this.sha1 ??= usesSha1(this.gitDir)))
      ? await writeObject(this.gitDir, 'commit', Buffer.from(commitBody(tree, head ? [head] : [], message, Math.floor(Date.now() / 1000))))
      : await this.text(['commit-tree', tree, ...(head ? ['-p', head] : []), '-F', '-'], { ...o, input: message });
    // Borrowed objects become ours before any ref points at them: the user's gc cannot take them after.
    if (alternates) await this.adopt(commit, alternates);
    const updates = [{ name: refName, to: commit, from: at.existing }];
    if (kind === 'step') updates.push({ name: `${this.ns(conversationId)}/head`, to: commit, from: head });
    await this.writeRefs(updates);
    return { commit, tree, step, kind, time: Date.now(), ...counts, skipped: listed, ...(head ? { parent: head } : {}) };
  }

  /**
   * Fills a new conversation index so that `add -A` hashes little: another conversation's index of
   * this workspace (its stat cache is good), else the user's HEAD read into it with the user's
   * objects borrowed (the returned alternates directory), else nothing.
   */
  private async prime(conversationId: string, index: string): Promise<string | undefined> {
    const mine = path.basename(index);
    let newest: { file: string; mtime: number } | undefined;
    for (const name of await readdir(this.gitDir)) {
      if (!name.startsWith('index-') || name === mine || name.includes('.')) continue;
      const st = await stat(path.join(this.gitDir, name)).catch(() => undefined);
      if (st && (!newest || st.mtimeMs > newest.mtime)) newest = { file: name, mtime: st.mtimeMs };
    }
    if (newest) {
      const tmp = `${index}.tmp-${process.pid}`;
      await copyFile(path.join(this.gitDir, newest.file), tmp);
      await rename(tmp, index);
      return undefined;
    }
    if (!this.borrow || !this.user) return undefined;
    const user = this.user;
    const userEnv = { ...baseGitEnv(this.env), GIT_DIR: user.gitDir };
    const headTree = await git(['rev-parse', '-q', '--verify', `HEAD:${user.prefix}`], {
      env: userEnv,
      cwd: this.workspace,
      okCodes: [1, 128],
    });
    const tree = headTree.stdout.toString('utf8').trim();
    if (headTree.code !== 0 || !/^[0-9a-f]{40,64}$/.test(tree)) return undefined;
    try {
      await this.run(['read-tree', tree], { index, alternates: user.objects });
    } catch {
      await rm(index, { force: true });
      return undefined;
    }
    void conversationId;
    return user.objects;
  }

  /** Copies into the shadow store every object `commit` needs (borrowed ones included): one pack. */
  private async adopt(commit: string, alternates: string): Promise<void> {
    await this.run(['pack-objects', '--revs', '-q', path.join(this.gitDir, 'objects', 'pack', 'pack')], {
      alternates,
      input: `${commit}\n`,
    });
    // The loose copies of what is now packed are redundant.
    await this.run(['prune-packed', '-q']);
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
    return this.serial(conversationId, async () => {
      this.clean.delete(conversationId);
      const journalPath = this.journalFile(conversationId);
      let journal = await readJournal(journalPath);
      if (!journal || journal.rewindId !== rewindId || !sameCommit(journal.target, commit)) {
        if (journal) await this.applyJournal(conversationId, journal); // an older restore left half done: finish it first
        const target = await this.info(commit);
        const beforeRef = `${this.ns(conversationId)}/rewind/${encodeRefPart(rewindId)}`;
        const had = (await this.refs([beforeRef])).get(beforeRef);
        const headRef = `${this.ns(conversationId)}/head`;
        const head = (await this.refs([headRef])).get(headRef);
        const atStep = head ? (await this.info(head)).step : 0;
        const before = had ? await this.info(had) : await this.take(conversationId, atStep, 'before-rewind', beforeRef);
        const kept = await this.keptPaths(before.commit, target.commit);
        journal = { rewindId, before, target: target.commit, kept };
        await writeJournal(journalPath, journal);
      }
      return this.applyJournal(conversationId, journal);
    });
  }

  /** Paths the restore would write that the workspace has outside the "before" checkpoint (ignored or skipped). */
  private async keptPaths(before: string, target: string): Promise<string[]> {
    const kept: string[] = [];
    const ws = await this.workspaceFs();
    for (const e of await this.diff(before, target)) {
      if (e.status !== 'A') continue;
      // Links not followed: behind a linked directory is not in the workspace.
      const st = await ws.lstatEntry(e.path);
      if (st) kept.push(e.path);
    }
    return kept;
  }

  /** The workspace as the path resolver sees it (security/workspace-fs.ts). */
  private workspaceFs(): Promise<WorkspaceFs> {
    return WorkspaceFs.open(this.workspace, { who: 'restore' });
  }

  private async diff(a: string, b: string): Promise<DiffEntry[]> {
    const parts = splitZ((await this.run(['diff-tree', '-r', '-z', '--no-renames', a, b])).stdout);
    const entries: DiffEntry[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const [srcMode, dstMode, , dst, status] = parts[i]!.slice(1).split(' ');
      entries.push({ srcMode: srcMode!, dstMode: dstMode!, dst: dst!, status: status![0]!, path: parts[i + 1]! });
    }
    return entries;
  }

  private async applyJournal(conversationId: string, journal: Journal): Promise<RestoreResult> {
    const kept = new Set(journal.kept);
    const entries = (await this.diff(journal.before.commit, journal.target)).filter((e) => !kept.has(e.path));
    let written = 0;
    let removed = 0;
    const blocked: string[] = [];
    // Every write and removal goes through the workspace resolver: never through a link, never
    // outside (a link where a directory must be is replaced by the directory).
    const ws = await this.workspaceFs();
    // Removals first, so that a file can become a directory and back.
    const dirs = new Set<string>();
    for (const e of entries) {
      const gone = e.status === 'D' || (e.status === 'T' && e.dstMode === '160000');
      if (gone || e.status === 'T') {
        if (e.srcMode !== '160000') await ws.removeEntry(e.path);
        if (gone) removed++;
        dirs.add(path.posix.dirname(e.path));
      }
    }
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) if (d !== '.') await ws.removeEmptyDirs(d);
    const writes = entries.filter((e) => e.status !== 'D' && e.dstMode !== '160000');
    for (let i = 0; i < writes.length; i += 256) {
      const batch = writes.slice(i, i + 256);
      const blobs = await this.blobs(batch.map((e) => e.dst));
      for (const e of batch) {
        const ok = await writeEntry(ws, e, blobs.get(e.dst)!);
        if (ok) written++;
        else blocked.push(e.path);
        if (this.killAfterWrites && written >= this.killAfterWrites) process.kill(process.pid, 'SIGKILL');
      }
    }
    // The index now describes the target; stat data of entries that did not change is kept.
    const index = this.indexFile(conversationId);
    await this.run(['read-tree', '--reset', journal.target], { index });
    const ns = this.ns(conversationId);
    const target = await this.info(journal.target);
    const tx = ['start', `update ${ns}/head ${journal.target}`];
    if (target.kind === 'step') {
      const later = [...(await this.refs([`${ns}/`]))].filter(([name]) => {
        const m = /\/step-(\d+)$/.exec(name);
        return m && name === `${ns}/step-${m[1]}` && Number(m[1]) > target.step;
      });
      for (const [name, sha] of later) {
        tx.push(`update ${ns}/rewound/${encodeRefPart(journal.rewindId)}/${name.slice(ns.length + 1)} ${sha}`, `delete ${name} ${sha}`);
      }
    }
    tx.push('commit', '');
    await this.run(['update-ref', '--stdin'], { input: tx.join('\n') });
    await rm(this.journalFile(conversationId), { force: true });
    return {
      before: journal.before,
      restored: journal.target,
      ...(target.kind === 'step' ? { step: target.step } : {}),
      written,
      removed,
      kept: [...journal.kept, ...blocked],
    };
  }

  /** Blob contents by id, read with one `cat-file --batch`. */
  private async blobs(ids: readonly string[]): Promise<Map<string, Buffer>> {
    const unique = [...new Set(ids)];
    const out = (await this.run(['cat-file', '--batch'], { input: unique.map((s) => `${s}\n`).join('') })).stdout;
    const map = new Map<string, Buffer>();
    let at = 0;
    while (at < out.length) {
      const nl = out.indexOf(10, at);
      const [sha, type, size] = out.subarray(at, nl).toString('utf8').split(' ');
      if (type === 'missing' || !sha || !size)
        throw new CheckpointError('not_found', `object ${sha} is missing from the shadow repository of ${this.workspace}`);
      const n = Number(size);
      map.set(sha, out.subarray(nl + 1, nl + 1 + n));
      at = nl + 1 + n + 1;
    }
    return map;
  }

  /**
   * Writes checkpoint `commit`'s files into `targetDir` (created; must be empty), leaving the
   * workspace alone. Only the tree: no `.git`, no ignored or skipped files. With `carry`, the new
   * directory's shadow repository gets conversation `carry.from`'s checkpoints up to `commit`'s
   * step under conversation `carry.to` (head = `commit`, and an index that already knows the
   * files just written), so the fork can itself be rewound to any of those steps.
   */
  async materialize(commit: string, targetDir: string, carry?: { from: string; to: string; store: CheckpointStore }): Promise<ForkResult> {
    const source = await this.info(commit);
    const target = path.resolve(targetDir);
    await mkdir(target, { recursive: true });
    const into = carry ? await carry.store.open(target) : undefined;
    // A retried fork (same commit, same new conversation) may find the files of its first attempt.
    const marker = into && carry ? path.join(into.gitDir, `fork-${encodeRefPart(carry.to)}`) : undefined;
    const ours = marker ? (await readFile(marker, 'utf8').catch(() => '')) === commit : false;
    if (!ours && (await readdir(target)).length) throw new CheckpointError('invalid', `the fork's directory ${target} is not empty`);
    if (marker && !ours) await writeFile(marker, commit);
    const index =
      into && carry ? into.indexFile(carry.to) : path.join(this.gitDir, `fork-index.${process.pid}.${randomBytes(4).toString('hex')}`);
    const o = { index, cwd: target, env: { GIT_WORK_TREE: target } };
    let files: number;
    try {
      await this.run(['read-tree', commit], o);
      await this.run(['checkout-index', '-a', '-f', '-q'], o);
      files = splitZ((await this.run(['ls-files', '-z'], o)).stdout).length;
    } finally {
      if (!into) await rm(index, { force: true });
    }
    let steps = 0;
    if (into && carry) {
      const from = this.ns(carry.from);
      const to = into.ns(carry.to);
      const specs = [`${commit}:${to}/head`];
      for (const [name, sha] of await this.refs([`${from}/`])) {
        const m = /^step-(\d+)$/.exec(name.slice(from.length + 1));
        if (m && Number(m[1]) <= source.step) {
          specs.push(`${sha}:${to}/${m[0]}`);
          steps++;
        }
      }
      await this.run(['push', '-q', '--no-verify', into.gitDir, ...specs]);
    }
    return { target, files, steps };
  }

  /** The shadow repository's size on disk in bytes (objects, refs, indexes). */
  async diskBytes(): Promise<number> {
    return du(this.gitDir);
  }
}

function sameCommit(a: string, b: string): boolean {
  return a === b || (b.length >= 7 && a.startsWith(b));
}

async function readJournal(file: string): Promise<Journal | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Journal;
  } catch {
    return undefined;
  }
}

async function writeJournal(file: string, journal: Journal): Promise<void> {
  const tmp = `${file}.tmp`;
  const h = await open(tmp, 'w');
  try {
    await h.writeFile(JSON.stringify(journal));
    await h.sync();
  } finally {
    await h.close();
  }
  await rename(tmp, file);
}

/** Writes one entry via a temporary file renamed into place; false when something the checkpoint does not own is in the way. */
function writeEntry(ws: WorkspaceFs, e: DiffEntry, content: Buffer): Promise<boolean> {
  return ws.putEntry(
    e.path,
    content,
    e.dstMode === '120000' ? { linkTarget: content.toString('utf8') } : { mode: e.dstMode === '100755' ? 0o777 : 0o666 },
  );
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
