// How a pause reaches a model call or a command in flight (an activity the workflow cancels).
// Temporal delivers an activity's cancellation in the answer to one of its heartbeats, so calls used
// to heartbeat ten times a second: every second of a model call cost the server ten heartbeat RPCs
// (each a billable action on Temporal Cloud, whose namespaces start at 500 actions a second).
// A server with worker commands (namespace capability `workerCommands`; `faheem server` turns it on)
// sends the cancellation to the worker's own control queue at once instead, so heartbeats only have
// to say that the worker lives: one a second is enough. Without it the fast heartbeats stay.

/**
 * The server settings (dynamic config) that turn worker commands on: the first makes the namespace
 * say it has them, the second makes the server send activity cancellations that way.
 */
export const WORKER_COMMANDS_CONFIG = ['frontend.workerCommandsEnabled=true', 'system.enableCancelActivityWorkerCommand=true'] as const;

/** How cancellations reach this worker's activities. */
export type PauseChannel = 'worker-commands' | 'heartbeats';

/** How often a worker's activities heartbeat, per channel. */
export interface HeartbeatCadence {
  /**
   * How often a model call or a tool call beats (in the worker; the first beat after this long, so a
   * shorter call sends none).
   */
  beatEveryMs: number;
  /** At most one heartbeat RPC this often for the workflow worker's activities (model calls, condensation). */
  modelThrottleMs: number;
  /** The same for the tool worker's activities (commands, edits, hooks, checkpoints). */
  toolsThrottleMs: number;
}

/**
 * When a cancellation does not need them: two heartbeat RPCs a second for a model call (its 2 s
 * heartbeat timeout notices a dead worker soon, with room for four), one for a tool call, none for
 * a call under half a second; ten a second (five for tools) when it does.
 */
export function heartbeatCadence(channel: PauseChannel): HeartbeatCadence {
  return channel === 'worker-commands'
    ? { beatEveryMs: 500, modelThrottleMs: 500, toolsThrottleMs: 1_000 }
    : { beatEveryMs: 50, modelThrottleMs: 100, toolsThrottleMs: 200 };
}

/** The part of a namespace's description this reads. */
export interface NamespaceCapabilities {
  namespaceInfo?: { capabilities?: { workerCommands?: boolean | null } | null } | null;
}

/**
 * The channel a namespace offers: worker commands when its server says it has them. The capability
 * follows `frontend.workerCommandsEnabled`; the server sends cancellations that way only with
 * `system.enableCancelActivityWorkerCommand` as well (without it a pause still arrives, with the next
 * heartbeat, within a second).
 */
export function pauseChannelOf(description: NamespaceCapabilities): PauseChannel {
  return description.namespaceInfo?.capabilities?.workerCommands === true ? 'worker-commands' : 'heartbeats';
}

/** A line for people: how a pause reaches the calls in flight on this server. */
export function describePauseChannel(channel: PauseChannel): string {
  return channel === 'worker-commands'
    ? 'pauses reach calls in flight through worker commands (heartbeats twice a second per model call)'
    : 'this server has no worker commands: pauses reach calls in flight through heartbeats (ten a second per model call; `faheem doctor` says how to turn them on)';
}
