// Names a pool's queues: pure, shared by the workflow (where it sends a claim) and the worker (what
// it polls).

/** The queue a pool's hosts poll for claims: `<task queue>-pool@<pool>`. */
export function poolQueueName(taskQueue: string, pool: string): string {
  return `${taskQueue}-pool@${pool}`;
}

/** A pool name: letters, digits, `.`, `_` and `-`, 1 to 64, starting with a letter or digit. */
export const POOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The terminal's directory on the new host: the same place inside the workspace (else its root). */
export function movedCwd(cwd: string, fromWorkspace: string, toWorkspace: string): string {
  if (cwd === fromWorkspace) return toWorkspace;
  return cwd.startsWith(`${fromWorkspace}/`) ? `${toWorkspace}${cwd.slice(fromWorkspace.length)}` : toWorkspace;
}

/**
 * When a pooled conversation that waits in the middle of a step (a `wait` call, an approval) for
 * `waitMs` (undefined: without a limit) hibernates: after its idle bound `boundMs`, when the wait
 * may last longer than that; otherwise not at all (undefined: the wait ends first).
 */
export function hibernateAfter(boundMs: number, waitMs: number | undefined): number | undefined {
  if (!Number.isFinite(boundMs) || boundMs < 0) return undefined;
  return waitMs === undefined || boundMs < waitMs ? boundMs : undefined;
}
