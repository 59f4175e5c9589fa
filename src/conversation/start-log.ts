// Which tool attempts actually began on this host, so that a retry can tell "never ran" from
// "ran, then its worker died". Temporal counts an attempt as started when it hands the task to a
// poll; if the server or worker dies before the poll's answer arrives, the command never ran and the
// retry may run it. Only a line written here before the command starts proves that it might have.
//
// A missing line proves nothing when the log could not have held it: written before the log existed
// (a new or wiped $FAHEEM_HOME) or pruned since. `.since` holds the time from which the log vouches;
// a retry of a call scheduled before it is reported, not run.
import type { Info } from '@temporalio/activity';
import { mkdir, open, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type Attempt = Pick<Info, 'workflowExecution' | 'activityId' | 'attempt' | 'scheduledTimestampMs'>;

/** Logs untouched this long are dropped when a worker starts. */
const KEEP_MS = 30 * 24 * 60 * 60 * 1000;

export class StartLog {
  // Pruning finishes before any attempt reads or writes, so it never races with one.
  private readonly ready: Promise<number>;

  constructor(
    private readonly dir: string,
    keepMs = KEEP_MS,
    now = Date.now(),
  ) {
    this.ready = this.prepare(keepMs, now);
    this.ready.catch(() => undefined); // reported by each claim() instead of crashing the worker
  }

  private file(info: Attempt): string {
    const { workflowId, runId } = info.workflowExecution ?? { workflowId: 'standalone', runId: 'standalone' };
    // Activity ids restart in each run after continue-as-new, so the run is part of the key.
    return path.join(this.dir, encodeURIComponent(workflowId), runId);
  }

  /**
   * Whether an earlier attempt of this call may have begun; if not, records that this one begins
   * now (call it before the first side effect). The line is synced to disk before the effect.
   */
  async claim(info: Attempt, call?: { key: string; rescheduled: boolean }): Promise<boolean> {
    const since = await this.ready;
    const file = this.file(info);
    // A call scheduled again (its first activity was never picked up in time, as far as the
    // workflow knows) may still have begun under that first activity: its call key tells.
    if (info.attempt > 1 || call?.rescheduled) {
      const lines = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return '';
        throw err; // an unreadable log vouches for nothing; the attempt fails and is retried
      });
      const logged = lines.split('\n');
      if (logged.includes(info.activityId)) return true;
      if (call?.rescheduled && logged.includes(`call:${call.key}`)) return true;
      if (info.scheduledTimestampMs < since) return true;
    }
    const mine = `${info.activityId}@${info.attempt}`;
    // The run's folder is made by its first call (a step's tool call: no mkdir each time).
    const handle = await open(file, 'a+').catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      await mkdir(path.dirname(file), { recursive: true });
      return open(file, 'a+');
    });
    let after: string[];
    try {
      await handle.appendFile(`${info.activityId}\n${mine}\n${call ? `call:${call.key}\n` : ''}`);
      await handle.sync();
      // Another attempt of this activity may have claimed meanwhile: a retry the server started
      // while this attempt was slow to begin (no heartbeat yet, on a busy worker), whose check above
      // ran before this line was written. Each looks again after writing; one that sees another
      // attempt does not run, so at most one ever does (both stepping back reports, never a second run).
      const { size } = await handle.stat();
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(size), 0, size, 0);
      after = buffer.subarray(0, bytesRead).toString('utf8').split('\n');
    } finally {
      await handle.close();
    }
    return after.some((line) => line.startsWith(`${info.activityId}@`) && line !== mine);
  }

  /** Drops run logs not written for `keepMs`; the log then vouches only from that cutoff on. */
  private async prepare(keepMs: number, now: number): Promise<number> {
    await mkdir(this.dir, { recursive: true });
    const sinceFile = path.join(this.dir, '.since');
    let since = Number(await readFile(sinceFile, 'utf8').catch(() => NaN));
    if (!Number.isFinite(since)) since = now;
    const cutoff = now - keepMs;
    for (const name of await readdir(this.dir)) {
      if (name.startsWith('.')) continue;
      const dir = path.join(this.dir, name);
      for (const run of await readdir(dir).catch(() => [] as string[])) {
        const info = await stat(path.join(dir, run)).catch(() => undefined);
        if (info && info.mtimeMs < cutoff) {
          await rm(path.join(dir, run), { force: true });
          since = Math.max(since, cutoff);
        }
      }
      await rmdir(dir).catch(() => undefined); // only succeeds once empty
    }
    await writeFile(sinceFile, String(since));
    return since;
  }
}
