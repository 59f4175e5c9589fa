// Why a running conversation makes no progress, as `faheem status` says it: a call it scheduled
// that no worker has picked up, because nobody polls that call's task queue. Pure: the status
// command gathers the facts (the workflow's pending activities, the queue's pollers).
import type { ConversationState } from '../core/types.js';

/** A call the conversation scheduled that no worker has started yet (a pending activity). */
export interface UnstartedCall {
  /** Its activity type (e.g. `runTool`). */
  activityType: string;
  /** The task queue it waits on. */
  taskQueue: string;
  /** When it was scheduled (ms since the epoch). */
  scheduledAt: number;
  /** How long it may wait for a worker before the workflow gives up on it (its schedule-to-start timeout), if it has one. */
  startWithinMs?: number;
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
 * oldest unstarted call waits on a queue nobody polls, or (pooled) on a host that has not picked it
 * up, or for a host of its pool to take it. `toolTaskQueue`: the conversation's own
 * workspace host queue, where the worker to start is the one beside the workspace.
 */
export function waitingFor(facts: {
  state: Pick<ConversationState, 'status' | 'closed' | 'pool' | 'host'>;
  call: UnstartedCall | undefined;
  polled: boolean;
  toolTaskQueue: string | undefined;
  /** Now (ms since the epoch): a pooled host call younger than PICKUP_GRACE_MS is being picked up. */
  now: number;
}): Waiting | null {
  const { state, call, polled } = facts;
  if (state.status !== 'running' || state.closed || !call) return null;
  if (state.pool !== undefined) {
    const onPool = pooledWait(state.pool, state.host ?? null, call, polled, facts.now);
    if (onPool !== undefined) return onPool;
  }
  if (polled) return null;
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

/**
 * The host calls that move to another host of the pool when their host does not pick them up in
 * time (pool-host.ts onPoolHost: the tool calls, hooks and setup); others time out where they are.
 */
const MOVING_CALLS = new Set(['runTool', 'runHooks', 'prepareTools']);

/** A call this young is being picked up, not waited for. */
export const PICKUP_GRACE_MS = 2_000;

/**
 * A pooled conversation's wait, or undefined when the general rule says it: a claim no host of the
 * pool polls for, or a call its host has not picked up (a host that died is still listed as polling
 * for a minute, so only its silence counts), which moves to another host when its time runs out.
 */
function pooledWait(pool: string, host: string | null, call: UnstartedCall, polled: boolean, now: number): Waiting | null | undefined {
  const since = new Date(call.scheduledAt).toISOString();
  if (call.activityType === 'claimPoolHost') {
    if (polled) return null;
    return {
      for: `a host of pool ${pool} to take the conversation (no host of the pool polls ${call.taskQueue})`,
      since,
      next: `it goes on once a host runs \`faheem worker --pool ${pool}\``,
    };
  }
  if (host === null || call.startWithinMs === undefined || !MOVING_CALLS.has(call.activityType)) return undefined;
  if (now - call.scheduledAt < PICKUP_GRACE_MS) return null;
  const moveAt = new Date(call.scheduledAt + call.startWithinMs).toISOString();
  return {
    for: `host ${host} of pool ${pool} (${call.activityType} not picked up there)`,
    since,
    next: `unless host ${host} picks it up, the conversation moves to another host of pool ${pool} at ${moveAt.slice(0, 19)}Z (${Math.round(call.startWithinMs / 1000)} s after it was scheduled)`,
  };
}

/** The oldest of the pending activities no worker has started (state SCHEDULED; releases aside), with its queue. */
export function oldestUnstarted(
  pending: readonly {
    state?: number | null;
    activityType?: { name?: string | null } | null;
    scheduledTime?: Duration | null;
    activityOptions?: { taskQueue?: { name?: string | null } | null; scheduleToStartTimeout?: Duration | null } | null;
  }[],
  fallbackQueue: string | undefined,
): UnstartedCall | undefined {
  let oldest: UnstartedCall | undefined;
  for (const p of pending) {
    if (p.state !== 1 /* PENDING_ACTIVITY_STATE_SCHEDULED */) continue;
    // A lost host's release waits up to an hour for it to come back; nothing waits on it.
    if (p.activityType?.name === 'releasePoolHost') continue;
    const taskQueue = p.activityOptions?.taskQueue?.name || fallbackQueue;
    if (!taskQueue || !p.scheduledTime) continue;
    const scheduledAt = millis(p.scheduledTime);
    const within = p.activityOptions?.scheduleToStartTimeout;
    const startWithinMs = within ? millis(within) : 0;
    if (!oldest || scheduledAt < oldest.scheduledAt)
      oldest = { activityType: p.activityType?.name || 'a call', taskQueue, scheduledAt, ...(startWithinMs > 0 ? { startWithinMs } : {}) };
  }
  return oldest;
}

/** A protobuf Timestamp or Duration in ms. */
function millis(d: Duration): number {
  const seconds = d.seconds ?? 0;
  return (typeof seconds === 'object' ? seconds.toNumber() : Number(seconds)) * 1000 + Math.floor((d.nanos ?? 0) / 1e6);
}

/** The line `faheem status` prints: `waiting for … (for 12 s, since …); it goes on once …`. */
export function waitingLine(w: Waiting, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(w.since)) / 1000));
  return `waiting for ${w.for}, for ${seconds} s (since ${w.since.slice(0, 19)}Z); ${w.next}`;
}

/** A protobuf Timestamp or Duration, as the SDK's raw responses carry them. */
interface Duration {
  seconds?: number | Long | string | null;
  nanos?: number | null;
}

/** protobufjs's 64-bit numbers, as the SDK's raw responses carry them. */
interface Long {
  toNumber(): number;
}
