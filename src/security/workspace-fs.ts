// Paths that cannot leave the workspace: the one resolver file_editor, its undo and rewind's
// restore use. The rule: never outside the workspace, never through a link.
//
// - A user path (absolute inside the workspace, or relative to it) is resolved lexically; NUL
//   bytes and anything that ends up outside are refused before the disk is touched. `a/../b` is
//   `b`: `..` never follows a link because links are never followed at all.
// - The root is realpath'd once (it may be given through a link). From there every component is
//   opened with O_DIRECTORY | O_NOFOLLOW, one at a time, and the next one is named relative to the
//   held descriptor through /proc/self/fd/<fd>/<name> (Node has no openat; on Linux this path is
//   the same lookup openat does). A link anywhere on the way is refused (ELOOP), so a component
//   cannot be swapped for a link between a check and its use.
// - Files are opened the same way with O_NOFOLLOW | O_NONBLOCK (| O_CREAT | O_EXCL for new ones),
//   then fstat'd: only regular files are read or written; a FIFO, socket or device is refused
//   without blocking. The descriptor's real path (readlink /proc/self/fd/<fd>) must still be inside
//   the root. Writes truncate and write through that descriptor, never re-open by name.
//
// What remains: a directory already held can be renamed out of the workspace by another process
// (a command running in the background, outside the sandbox) after the real-path check and before
// the bytes are written; the write then lands in that moved directory, which that process could
// write itself. A hard link to a file outside the workspace (same file system, made by such a
// process; git never checks one out) is a regular file here and is written like one.
// Without /proc (not Linux) components are checked with lstat and used by name, and the real path
// with realpath: a link swapped in between a check and its use is not caught there.
import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, realpath, rename, rmdir, stat, symlink, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { FaheemError } from '../core/errors.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const FILE_FLAGS = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** Why a path was refused. */
export type RefusalReason = 'nul' | 'outside' | 'link' | 'not_regular' | 'not_directory' | 'missing' | 'exists' | 'moved' | 'too_big';

/** A path the rule refuses; `message` is what the model reads. */
export class PathRefused extends FaheemError {
  constructor(
    message: string,
    readonly reason: RefusalReason,
  ) {
    super('invalid_request', message);
  }
}

/** A path inside the workspace, resolved lexically (nothing on disk read yet). */
export interface WorkspacePath {
  /** Components below the root ([] for the root itself). */
  parts: string[];
  /** The absolute path under the real root (what undo keys by). */
  abs: string;
  /** How to name it to the model: relative to the root, '.' for the root. */
  shown: string;
}

/** Whether `child` is `root` or below it. */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Resolves `userPath` lexically against the workspace. `root` is the workspace's real path and
 * `given` the path it was named by (an absolute path under either is accepted). Refuses NUL bytes
 * and paths outside. Pure: reads nothing.
 */
export function resolveLexically(root: string, given: string, userPath: string): WorkspacePath {
  if (userPath.includes('\0')) throw new PathRefused('The path contains a NUL byte; paths are plain text.', 'nul');
  const outside = () => new PathRefused(`${userPath} is outside the workspace (${given}); only paths inside it can be used.`, 'outside');
  let rel: string;
  if (path.isAbsolute(userPath)) {
    const abs = path.resolve(userPath);
    const base = [root, path.resolve(given)].find((r) => isInside(r, abs));
    if (base === undefined) throw outside();
    rel = path.relative(base, abs);
  } else {
    rel = path.relative(root, path.resolve(root, userPath));
    if (!isInside(root, path.join(root, rel))) throw outside();
  }
  const parts = rel === '' ? [] : rel.split(path.sep);
  if (parts.some((p) => p === '..' || p === '')) throw outside();
  return { parts, abs: path.join(root, ...parts), shown: parts.length ? parts.join('/') : '.' };
}

/** "a FIFO (named pipe)", "a directory", … for messages. */
export function kindOf(st: Stats | Dirent): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

let procFd: Promise<boolean> | undefined;
/** Whether descriptors can be named as /proc/self/fd/<fd> (Linux with /proc mounted). */
function hasProcFd(): Promise<boolean> {
  return (procFd ??= stat('/proc/self/fd').then(
    (s) => s.isDirectory(),
    () => false,
  ));
}

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** A directory inside the workspace, held open (on Linux) so that names are looked up in it. */
class HeldDir {
  constructor(
    private readonly handle: FileHandle | undefined,
    /** Its path by name, for messages and the fallback. */
    readonly abs: string,
  ) {}

  /** The path of `name` in this directory: through the descriptor when there is one. */
  at(name: string): string {
    return this.handle ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.abs, name);
  }

  /** The directory itself as a path (for readdir). */
  self(): string {
    return this.handle ? `/proc/self/fd/${this.handle.fd}` : this.abs;
  }

  async close(): Promise<void> {
    await this.handle?.close().catch(() => undefined);
  }
}

/** A regular file inside the workspace, open; read and written through its descriptor only. */
export class WorkspaceFile {
  constructor(
    private readonly handle: FileHandle,
    /** Its size when opened. */
    readonly size: number,
  ) {}

  /** The whole content, or its first `limit` bytes (a file that grows while read stops there). */
  async read(limit = Infinity): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let position = 0;
    while (position < limit) {
      const buf = Buffer.alloc(Math.min(Math.max(64 * 1024, this.size - position + 1), limit - position));
      const { bytesRead } = await this.handle.read(buf, 0, buf.length, position);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      position += bytesRead;
    }
    return Buffer.concat(chunks);
  }

  /** Replaces the content: truncate, then write from offset 0 through the same descriptor. */
  async replace(data: string | Buffer): Promise<void> {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await this.handle.truncate(0);
    let at = 0;
    while (at < buf.length) {
      const { bytesWritten } = await this.handle.write(buf, at, buf.length - at, at);
      at += bytesWritten;
    }
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

/** Options of WorkspaceFs.open. */
export interface WorkspaceFsOptions {
  /** Who is refused, for messages: 'file_editor' (default), 'restore', … */
  who?: string;
}

/**
 * The workspace as seen by a tool or a restore: every path goes through `resolve` and every disk
 * access through these methods, which never follow a link and never leave the root.
 */
export class WorkspaceFs {
  private constructor(
    /** The workspace's real path. */
    readonly root: string,
    /** The path the workspace was given as. */
    readonly given: string,
    private readonly who: string,
    private readonly proc: boolean,
  ) {}

  /** The workspace `workspace` (realpath'd once; it must be a directory). */
  static async open(workspace: string, options: WorkspaceFsOptions = {}): Promise<WorkspaceFs> {
    let root: string;
    try {
      root = await realpath(workspace);
      if (!(await stat(root)).isDirectory()) throw new Error('not a directory');
    } catch {
      throw new PathRefused(`The workspace ${workspace} is not a directory on this host.`, 'missing');
    }
    return new WorkspaceFs(root, workspace, options.who ?? 'file_editor', await hasProcFd());
  }

  /** `userPath` resolved lexically; throws PathRefused (NUL, outside). */
  resolve(userPath: string): WorkspacePath {
    return resolveLexically(this.root, this.given, userPath);
  }

  private linkRefused(shown: string): PathRefused {
    return new PathRefused(
      `${shown} is a symbolic link; ${this.who} does not follow links (one could lead outside the workspace). Use the path of what it points to.`,
      'link',
    );
  }

  private notRegular(shown: string, st: Stats): PathRefused {
    return new PathRefused(`${shown} is ${kindOf(st)}; ${this.who} reads and writes regular files only.`, 'not_regular');
  }

  private async openRoot(): Promise<HeldDir> {
    return new HeldDir(this.proc ? await open(this.root, DIR_FLAGS) : undefined, this.root);
  }

  /**
   * Opens the directories `parts` one at a time from the root, never through a link.
   * `create`: missing ones are made (mkdir, then opened with O_NOFOLLOW). `replaceLinks`: a link
   * where a directory must be is removed and a directory made instead (restore).
   */
  private async walk(parts: readonly string[], opts: { create?: boolean; replaceLinks?: boolean } = {}): Promise<HeldDir> {
    let dir = await this.openRoot();
    try {
      for (let i = 0; i < parts.length; i++) {
        const name = parts[i]!;
        const shown = parts.slice(0, i + 1).join('/');
        const next = await this.enter(dir, name, shown, opts);
        await dir.close();
        dir = next;
      }
      return dir;
    } catch (err) {
      await dir.close();
      throw err;
    }
  }

  private async enter(dir: HeldDir, name: string, shown: string, opts: { create?: boolean; replaceLinks?: boolean }): Promise<HeldDir> {
    const abs = path.join(dir.abs, name);
    for (let attempt = 0; ; attempt++) {
      if (this.proc) {
        try {
          return new HeldDir(await open(dir.at(name), DIR_FLAGS), abs);
        } catch (err) {
          if (!['ELOOP', 'ENOENT', 'ENOTDIR'].includes(code(err) ?? '')) throw err;
        }
      }
      // Not opened (or no /proc): lstat says why, and what to do about it.
      const st = await lstat(dir.at(name)).catch((err: unknown) => {
        if (code(err) === 'ENOENT') return undefined;
        throw err;
      });
      if (st?.isDirectory()) {
        if (!this.proc) return new HeldDir(undefined, abs);
        if (attempt < 3) continue; // it changed between the open and the lstat: look again
      }
      if (attempt >= 3) throw new PathRefused(`${shown} keeps changing; try again.`, 'moved');
      if (st === undefined) {
        if (!opts.create) throw new PathRefused(`${shown} does not exist.`, 'missing');
        await mkdir(dir.at(name)).catch((err: unknown) => {
          if (code(err) !== 'EEXIST') throw err;
        });
        continue;
      }
      if (st.isSymbolicLink()) {
        if (!opts.replaceLinks) throw this.linkRefused(shown);
        // unlink removes the link itself, never what it points to.
        await unlink(dir.at(name)).catch(() => undefined);
        continue;
      }
      throw new PathRefused(`${shown} is ${kindOf(st)}, not a directory.`, 'not_directory');
    }
  }

  /** Fails when the open file's real path is no longer inside the root. */
  private async checkInside(handle: FileHandle, p: WorkspacePath): Promise<void> {
    const real = this.proc ? (await readlink(`/proc/self/fd/${handle.fd}`)).replace(/ \(deleted\)$/, '') : await realpath(p.abs);
    if (!isInside(this.root, real)) {
      throw new PathRefused(`${p.shown} was moved outside the workspace while it was being opened; nothing was read or written.`, 'moved');
    }
  }

  /** Opens the regular file at `p` (flags: O_RDONLY, O_RDWR, …; O_NOFOLLOW and O_NONBLOCK are added). */
  private async openFile(dir: HeldDir, p: WorkspacePath, flags: number, mode?: number): Promise<WorkspaceFile> {
    const name = p.parts[p.parts.length - 1]!;
    // A special file is refused before it is opened at all (opening some devices has effects).
    const before = await lstat(dir.at(name)).catch(() => undefined);
    if (before?.isSymbolicLink()) throw this.linkRefused(p.shown);
    if (before && !before.isFile()) {
      if (before.isDirectory()) throw new PathRefused(`${p.shown} is a directory.`, 'not_regular');
      throw this.notRegular(p.shown, before);
    }
    let handle: FileHandle;
    try {
      handle = await open(dir.at(name), flags | FILE_FLAGS, mode);
    } catch (err) {
      switch (code(err)) {
        case 'ELOOP':
          throw this.linkRefused(p.shown);
        case 'ENOENT':
          throw new PathRefused(`${p.shown} does not exist.`, 'missing');
        case 'EEXIST':
          throw new PathRefused(`${p.shown} already exists.`, 'exists');
        case 'EISDIR':
          throw new PathRefused(`${p.shown} is a directory.`, 'not_regular');
        case 'ENXIO':
          throw new PathRefused(`${p.shown} is not a regular file; ${this.who} reads and writes regular files only.`, 'not_regular');
        default:
          throw err;
      }
    }
    try {
      const st = await handle.stat();
      if (!st.isFile())
        throw st.isDirectory() ? new PathRefused(`${p.shown} is a directory.`, 'not_regular') : this.notRegular(p.shown, st);
      await this.checkInside(handle, p);
      return new WorkspaceFile(handle, st.size);
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  private needsName(p: WorkspacePath): void {
    if (p.parts.length === 0) throw new PathRefused(`${p.shown} is the workspace itself, a directory.`, 'not_regular');
  }

  /** What is at `p`, links not followed (undefined: missing). Throws PathRefused when a parent is a link. */
  async lstat(p: WorkspacePath): Promise<Stats | undefined> {
    if (p.parts.length === 0) return lstat(this.root);
    let dir: HeldDir;
    try {
      dir = await this.walk(p.parts.slice(0, -1));
    } catch (err) {
      if (err instanceof PathRefused && (err.reason === 'missing' || err.reason === 'not_directory')) return undefined;
      throw err;
    }
    try {
      return await lstat(dir.at(p.parts[p.parts.length - 1]!)).catch((err: unknown) => {
        if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return undefined;
        throw err;
      });
    } finally {
      await dir.close();
    }
  }

  /** Opens the existing regular file at `p` for reading (`write`: and writing; `create`: made when missing, parents too). */
  async open(p: WorkspacePath, opts: { write?: boolean; create?: boolean } = {}): Promise<WorkspaceFile> {
    this.needsName(p);
    const dir = await this.walk(p.parts.slice(0, -1), { create: opts.create === true });
    try {
      const flags = (opts.write ? constants.O_RDWR : constants.O_RDONLY) | (opts.create ? constants.O_CREAT : 0);
      return await this.openFile(dir, p, flags, 0o666);
    } finally {
      await dir.close();
    }
  }

  /** Makes a new empty regular file at `p` (parents too), O_EXCL: `exists` when something is there already. */
  async create(p: WorkspacePath): Promise<WorkspaceFile | 'exists'> {
    this.needsName(p);
    const dir = await this.walk(p.parts.slice(0, -1), { create: true });
    try {
      const name = p.parts[p.parts.length - 1]!;
      let handle: FileHandle;
      try {
        handle = await open(dir.at(name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | FILE_FLAGS, 0o666);
      } catch (err) {
        if (code(err) === 'EEXIST') return 'exists';
        if (code(err) === 'EISDIR') throw new PathRefused(`${p.shown} is a directory.`, 'not_regular');
        throw err;
      }
      try {
        await this.checkInside(handle, p);
      } catch (err) {
        await handle.close().catch(() => undefined);
        await unlink(dir.at(name)).catch(() => undefined);
        throw err;
      }
      return new WorkspaceFile(handle, 0);
    } finally {
      await dir.close();
    }
  }

  /** Removes the regular file at `p` (undo of a create). false: nothing there. A link or special file is refused. */
  async remove(p: WorkspacePath): Promise<boolean> {
    this.needsName(p);
    const dir = await this.walk(p.parts.slice(0, -1));
    try {
      const name = p.parts[p.parts.length - 1]!;
      const st = await lstat(dir.at(name)).catch(() => undefined);
      if (!st) return false;
      if (st.isSymbolicLink()) throw this.linkRefused(p.shown);
      if (!st.isFile()) throw this.notRegular(p.shown, st);
      // Swapped for a link after the lstat, unlink removes that link, never its target.
      await unlink(dir.at(name));
      return true;
    } finally {
      await dir.close();
    }
  }

  /**
   * The directory at `p` listed `depth` levels deep, never through a link: entries sorted, hidden
   * ones and node_modules left out; `name/` a directory, `name -> (link)` a link (not followed),
   * `name (a FIFO (named pipe))` and the like for special files.
   */
  async list(p: WorkspacePath, depth: number): Promise<string[]> {
    const dir = await this.walk(p.parts);
    try {
      return await this.listIn(dir, depth, '');
    } finally {
      await dir.close();
    }
  }

  private async listIn(dir: HeldDir, depth: number, prefix: string): Promise<string[]> {
    const out: string[] = [];
    const entries = (await readdir(dir.self(), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      if (e.isSymbolicLink()) out.push(`${prefix}${e.name} -> (link)`);
      else if (e.isDirectory()) {
        out.push(`${prefix}${e.name}/`);
        if (depth > 1) {
          const sub = await this.enter(dir, e.name, `${prefix}${e.name}`, {}).catch(() => undefined);
          if (sub) {
            try {
              out.push(...(await this.listIn(sub, depth - 1, `${prefix}${e.name}/`)));
            } finally {
              await sub.close();
            }
          }
        }
      } else if (e.isFile()) out.push(`${prefix}${e.name}`);
      else out.push(`${prefix}${e.name} (${kindOf(e)})`);
    }
    return out;
  }

  // ---- restore: the checkpoint's entries written into the workspace ----

  /**
   * Puts a checkpoint entry at `rel` (a '/'-separated path): a file (`mode` 0o666 or 0o777,
   * before umask) or a symlink (`linkTarget`), through a temporary file renamed into place in the
   * held parent directory (rename replaces a link at `rel`, never writes through it). A link where
   * a parent directory must be is removed and the directory made. false: something the
   * checkpoint does not own is in the way (a file where a directory must go, a directory where
   * the file must go).
   */
  async putEntry(rel: string, content: Buffer, kind: { mode: number } | { linkTarget: string }): Promise<boolean> {
    const p = this.resolveEntry(rel);
    if (!p) return false;
    let dir: HeldDir;
    try {
      dir = await this.walk(p.parts.slice(0, -1), { create: true, replaceLinks: true });
    } catch (err) {
      if (err instanceof PathRefused) return false;
      throw err;
    }
    const tmp = `.faheem-restore-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      if ('linkTarget' in kind) {
        await symlink(kind.linkTarget, dir.at(tmp));
        if ((await readlink(dir.at(tmp))) !== kind.linkTarget) throw new Error('symlink mismatch');
      } else {
        const h = await open(dir.at(tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | FILE_FLAGS, kind.mode);
        try {
          await this.checkInside(h, { ...p, abs: path.join(dir.abs, tmp) });
          await h.writeFile(content);
        } finally {
          await h.close();
        }
      }
      await rename(dir.at(tmp), dir.at(p.parts[p.parts.length - 1]!));
      return true;
    } catch {
      await unlink(dir.at(tmp)).catch(() => undefined);
      return false;
    } finally {
      await dir.close();
    }
  }

  /** Removes the entry at `rel` (a file or link; never through a linked parent). Missing: nothing to do. */
  async removeEntry(rel: string): Promise<void> {
    const p = this.resolveEntry(rel);
    if (!p) return;
    const dir = await this.walk(p.parts.slice(0, -1)).catch(() => undefined);
    if (!dir) return; // a parent is missing or a link: the entry is not in the workspace
    try {
      await unlink(dir.at(p.parts[p.parts.length - 1]!)).catch(() => undefined);
    } finally {
      await dir.close();
    }
  }

  /** Removes directory `rel` and its parents while they are empty, up to the root, never through a link. */
  async removeEmptyDirs(rel: string): Promise<void> {
    const p = this.resolveEntry(rel);
    if (!p) return;
    for (let n = p.parts.length; n > 0; n--) {
      const dir = await this.walk(p.parts.slice(0, n - 1)).catch(() => undefined);
      if (!dir) return;
      try {
        await rmdir(dir.at(p.parts[n - 1]!));
      } catch {
        return;
      } finally {
        await dir.close();
      }
    }
  }

  /** What is at checkpoint path `rel`, links not followed; undefined when missing or behind a link. */
  async lstatEntry(rel: string): Promise<Stats | undefined> {
    const p = this.resolveEntry(rel);
    if (!p) return undefined;
    return this.lstat(p).catch(() => undefined);
  }

  /** A checkpoint's path (always relative, '/'-separated) resolved; undefined when it is not a path inside. */
  private resolveEntry(rel: string): WorkspacePath | undefined {
    try {
      const p = this.resolve(rel);
      return p.parts.length ? p : undefined;
    } catch {
      return undefined;
    }
  }
}
