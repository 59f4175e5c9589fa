// Which tool attempts actually began on this host, so that a retry can tell "never ran" from
// "ran, then its worker died". Temporal counts an attempt as started when it hands the task to a
// poll; if the server or worker dies before the poll's answer arrives, the command never ran and the
// retry may run it. Only a line written here before the command starts proves that it might have.
import type { Info } from '@temporalio/activity';
import { appendFile, mkdir, readdir, readFile, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';

export type Attempt = Pick<Info, 'workflowExecution' | 'activityId' | 'attempt'>;

export class StartLog {
  constructor(private readonly dir: string) {}

  private file(info: Attempt): string {
    const { workflowId, runId } = info.workflowExecution ?? { workflowId: 'standalone', runId: 'standalone' };
    // Activity ids restart in each run after continue-as-new, so the run is part of the key.
    return path.join(this.dir, encodeURIComponent(workflowId), runId);
  }

  /** Records that this activity's side effects may begin now. Call before the first effect. */
  async begin(info: Attempt): Promise<void> {
    const file = this.file(info);
    await mkdir(path.dirname(file), { recursive: true });
    await appendFile(file, `${info.activityId}\n`);
  }

  /** Whether an earlier attempt of this activity got as far as begin(). */
  async begunBefore(info: Attempt): Promise<boolean> {
    if (info.attempt <= 1) return false;
    const lines = await readFile(this.file(info), 'utf8').catch(() => '');
    return lines.split('\n').includes(info.activityId);
  }

  /**
   * Drops logs not written for `maxAgeMs`. A retry comes within minutes (tool calls time out after
   * 15), so a day-old log can no longer be asked about.
   */
  async prune(maxAgeMs: number, now = Date.now()): Promise<void> {
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const dir = path.join(this.dir, name);
      for (const run of await readdir(dir).catch(() => [] as string[])) {
        const info = await stat(path.join(dir, run)).catch(() => undefined);
        if (info && now - info.mtimeMs > maxAgeMs) await rm(path.join(dir, run), { force: true });
      }
      await rmdir(dir).catch(() => undefined); // only succeeds once empty
    }
  }
}
