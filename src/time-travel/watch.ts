// Knowing, without a process or a walk, that nothing in a workspace has changed since the last
// checkpoint: one inotify watch per directory (fs.watch, not recursive: Node 20's recursive mode
// on Linux walks and stats in JavaScript), and a generation counter that every event moves. A
// checkpoint remembers the generation it saw; the same generation later means the same files.
//
// Sound because:
// - every directory of the workspace is watched before the generation is read (a directory that
//   appears is watched from inside its parent's event, synchronously, and its appearance is itself
//   an event, so whatever was written into it before the watch is covered by the next full take);
// - `settle()` writes a file into a directory of our own (in the shadow repository) and waits for
//   its event: libuv reads all watches of a process from one inotify descriptor, whose queue is in
//   order, so every event of a change made before the call has been counted when it resolves;
// - a watch that cannot be set (too many directories, the kernel's limit, an error) makes the
//   watcher unreliable for good, and an unreliable watcher never vouches for anything.
// Changes made on another machine to a shared (network) file system are not seen: turn the watcher
// off there (FAHEEM_CHECKPOINT_WATCH=0).
import { lstatSync, mkdirSync, readdirSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import path from 'node:path';

/** Past this many directories the watcher gives up (and checkpoints take the full path). */
export const MAX_WATCHED_DIRS = 20_000;
/** How long `settle()` waits for its own event before answering "unknown". */
const SETTLE_TIMEOUT_MS = 2_000;

/** Directories inside a `.git` whose changes cannot change a checkpoint (objects, logs): not watched. */
function skipped(rel: string): boolean {
  return /(^|\/)\.git\/(objects|logs|lfs)(\/|$)/.test(rel);
}

/** Watches one workspace; see the module comment. */
export class WorkspaceWatcher {
  private readonly watchers = new Map<string, { w: FSWatcher; ino: number }>();
  private gen = 0;
  private broken = false;
  private barrier: FSWatcher | undefined;
  private barrierSeq = 0;
  private readonly waiting = new Map<string, () => void>();

  /**
   * @param root - The workspace (a real path).
   * @param ownDir - A directory outside the workspace where `settle()` writes its marker.
   */
  constructor(
    readonly root: string,
    private readonly ownDir: string,
    private readonly maxDirs = MAX_WATCHED_DIRS,
  ) {
    try {
      mkdirSync(ownDir, { recursive: true });
      this.barrier = watch(ownDir, { persistent: false }, (_type, name) => {
        const done = name ? this.waiting.get(String(name)) : undefined;
        if (done) done();
      });
      this.barrier.on('error', () => this.fail());
      this.add('');
    } catch {
      this.fail();
    }
  }

  /** Whether the watcher can vouch for anything (false once a watch could not be set). */
  get reliable(): boolean {
    return !this.broken;
  }

  /** The generation now, after every event of changes made before the call (undefined: cannot tell). */
  async settle(): Promise<number | undefined> {
    if (this.broken || !this.barrier) return undefined;
    // Names cycle (no file piles up); the content changes each time, so each write is an event.
    const seq = this.barrierSeq++;
    const name = `settle-${process.pid}-${seq % 256}`;
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), SETTLE_TIMEOUT_MS);
      this.waiting.set(name, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    try {
      writeFileSync(path.join(this.ownDir, name), String(seq));
    } catch {
      this.waiting.delete(name);
      return undefined;
    }
    const ok = await arrived;
    this.waiting.delete(name);
    return ok && !this.broken ? this.gen : undefined;
  }

  /** Stops watching. */
  close(): void {
    this.broken = true;
    this.barrier?.close();
    this.barrier = undefined;
    for (const { w } of this.watchers.values()) w.close();
    this.watchers.clear();
    for (const done of this.waiting.values()) done();
  }

  private fail(): void {
    if (this.broken) return;
    this.broken = true;
    for (const { w } of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  /** Watches `rel` (a directory, '' for the root) and every directory below it. */
  private add(rel: string): void {
    const todo = [rel];
    while (todo.length && !this.broken) {
      const dir = todo.pop() as string;
      const full = path.join(this.root, dir);
      let ino: number;
      try {
        const st = lstatSync(full);
        if (!st.isDirectory()) continue;
        ino = st.ino;
      } catch {
        continue; // gone meanwhile: its removal was an event
      }
      const known = this.watchers.get(dir);
      if (known && known.ino === ino) continue;
      known?.w.close();
      if (this.watchers.size >= this.maxDirs) return this.fail();
      try {
        const w = watch(full, { persistent: false }, (type, name) => this.onEvent(dir, type, name));
        w.on('error', () => this.onGone(dir, w));
        this.watchers.set(dir, { w, ino });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        return this.fail(); // ENOSPC (the kernel's watch limit), EACCES, …: cannot vouch
      }
      let entries;
      try {
        entries = readdirSync(full, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const child = dir ? `${dir}/${e.name}` : e.name;
        if (!skipped(child)) todo.push(child);
      }
    }
  }

  private onEvent(dir: string, type: string, name: string | Buffer | null): void {
    this.gen++;
    if (this.broken) return;
    if (name === null) {
      // No name: something happened that fs.watch cannot say (an overflow, say): rescan from here.
      this.add(dir);
      return;
    }
    if (type === 'rename') {
      const child = dir ? `${dir}/${String(name)}` : String(name);
      if (skipped(child)) return;
      // Made, removed or moved: a directory there before may be gone (its inode even reused by a
      // new one), so its watches go and whatever is there now is watched afresh.
      if (this.watchers.has(child)) this.drop(child);
      this.add(child);
    }
  }

  /** Closes the watches of `rel` and every directory below it. */
  private drop(rel: string): void {
    const prefix = `${rel}/`;
    for (const [dir, { w }] of this.watchers) {
      if (dir === rel || dir.startsWith(prefix)) {
        w.close();
        this.watchers.delete(dir);
      }
    }
  }

  private onGone(dir: string, w: FSWatcher): void {
    this.gen++;
    w.close();
    if (this.watchers.get(dir)?.w === w) this.watchers.delete(dir);
    // Still there (an error other than removal): it cannot be watched any more.
    try {
      if (lstatSync(path.join(this.root, dir)).isDirectory()) this.fail();
    } catch {
      // removed: its parent's event counted it
    }
  }
}
