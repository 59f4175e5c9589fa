// How the worker logs a failed activity: one line (which activity, which attempt, which
// conversation, why), not the SDK's default of the error's whole stack with every attribute.
// A model endpoint that is down fails every attempt: a stack each made a log of hundreds of lines.

/** The attributes Temporal's worker logs with an activity's failure (the ones this line reads). */
export interface ActivityFailureMeta {
  error?: unknown;
  activityType?: string;
  attempt?: number;
  workflowId?: string;
  durationMs?: number;
}

/** The one line for Temporal's "Activity failed" log entry. */
export function activityFailureLine(meta: ActivityFailureMeta): string {
  const err = meta.error as { name?: string; type?: string; message?: string } | undefined;
  const kind = err?.type ?? err?.name ?? 'Error';
  const why = (err?.message ?? String(meta.error)).split('\n')[0];
  const where = [
    meta.attempt !== undefined ? `attempt ${meta.attempt}` : undefined,
    meta.workflowId ? `conversation ${meta.workflowId}` : undefined,
    meta.durationMs !== undefined ? `after ${Math.round(meta.durationMs)} ms` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  return `activity ${meta.activityType ?? '?'} failed${where ? ` (${where})` : ''}: ${kind}: ${why}`;
}
