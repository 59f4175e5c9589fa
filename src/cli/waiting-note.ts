// Why a running conversation makes no progress, as `faheem status` says it: a call it scheduled
// that no worker has picked up, because nobody polls that call's task queue. Pure: the status
// command gathers the facts (the workflow's pending activities, the queue's pollers).
import type { ConversationState } from '../types.js';

/** A call the conversation scheduled that no worker has started yet (a pending activity). */
export interface UnstartedCall {
  /** Its activity type (e.g. `runTool`). */
  activityType: string;
  /** The task queue it waits on. */
  taskQueue: string;
  /** When it was scheduled (ms since the epoch). */
  scheduledAt: number;
}

/** What a conversation waits for, since when, and what happens next (`status --json`'s `waiting`). */
export interface Waiting {
  for: string;
  /** ISO 8601. */
  since: string;
  next: string;
}

/**
 * What the conversation waits for, or null when it is not waiting on a worker: it runs, and its
 * oldest unstarted call waits on a queue nobody polls. `toolTaskQueue`: the conversation's own
 * workspace host queue, where the worker to start is the one beside the workspace.
 */
export function waitingFor(facts: {
  state: Pick<ConversationState, 'status' | 'closed' | 'pool'>;
  call: UnstartedCall | undefined;
  polled: boolean;
  toolTaskQueue: string | undefined;
}): Waiting | null {
  const { state, call, polled } = facts;
  if (state.status !== 'running' || state.closed || !call || polled) return null;
  const onHost = call.taskQueue === facts.toolTaskQueue;
  return {
    for: `a worker on the task queue ${call.taskQueue} (no worker polls it; ${call.activityType} waits)`,
    since: new Date(call.scheduledAt).toISOString(),
    next:
      state.pool !== undefined && onHost
        ? `it goes on once a host of pool ${state.pool} runs \`faheem worker --pool ${state.pool}\``
        : onHost
          ? 'it goes on once `faheem worker` runs on the machine with the workspace'
          : 'it goes on once `faheem worker` runs against this server',
  };
}

/** The oldest of the pending activities no worker has started (state SCHEDULED), with its queue. */
export function oldestUnstarted(
  pending: readonly {
    state?: number | null;
    activityType?: { name?: string | null } | null;
    scheduledTime?: { seconds?: number | Long | string | null; nanos?: number | null } | null;
    activityOptions?: { taskQueue?: { name?: string | null } | null } | null;
  }[],
  fallbackQueue: string | undefined,
): UnstartedCall | undefined {
  let oldest: UnstartedCall | undefined;
  for (const p of pending) {
    if (p.state !== 1 /* PENDING_ACTIVITY_STATE_SCHEDULED */) continue;
    const taskQueue = p.activityOptions?.taskQueue?.name || fallbackQueue;
    if (!taskQueue || !p.scheduledTime) continue;
    const seconds = p.scheduledTime.seconds ?? 0;
    const scheduledAt =
      (typeof seconds === 'object' ? seconds.toNumber() : Number(seconds)) * 1000 + Math.floor((p.scheduledTime.nanos ?? 0) / 1e6);
    if (!oldest || scheduledAt < oldest.scheduledAt) oldest = { activityType: p.activityType?.name || 'a call', taskQueue, scheduledAt };
  }
  return oldest;
}

/** The line `faheem status` prints: `waiting for … (for 12 s, since …); it goes on once …`. */
export function waitingLine(w: Waiting, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(w.since)) / 1000));
  return `waiting for ${w.for}, for ${seconds} s (since ${w.since.slice(0, 19)}Z); ${w.next}`;
}

/** protobufjs's 64-bit numbers, as the SDK's raw responses carry them. */
interface Long {
  toNumber(): number;
}
