// Names shared by the live stream's three sides (the stream workflow, the worker that publishes,
// the clients that follow). Workflow-safe: no Node imports.

/** The id of the workflow that hosts a conversation's live stream (its own history, not the conversation's). */
export function liveStreamId(conversationId: string): string {
  return `${conversationId}::live`;
}

/** The stream workflow's type name. */
export const LIVE_STREAM_WORKFLOW = 'liveStream';

/**
 * The `TemporalNamespaceDivision` of stream workflows. Temporal leaves a workflow with a division
 * out of every list whose query does not name one (the Web UI's default list, `temporal workflow
 * list`, `faheem list`), as it does for its own schedule workflows: the list shows conversations only.
 */
export const LIVE_DIVISION = 'faheem-live';

/**
 * The visibility query of running stream workflows: it must name the division to see them (and
 * also sees streams that older clients started without one).
 */
export const RUNNING_STREAMS_QUERY = `(TemporalNamespaceDivision = '${LIVE_DIVISION}' OR TemporalNamespaceDivision IS NULL) AND WorkflowType = '${LIVE_STREAM_WORKFLOW}' AND ExecutionStatus = 'Running'`;

/** The topic live lines go to (what followers read). */
export const LIVE_TOPIC = 'live';

/**
 * The topic of step markers: a model call publishes one as it begins, and the stream workflow drops
 * the lines before it (the events of those steps have landed). So the log holds the step under way,
 * which is what a follower that comes late is shown. Followers never read this topic.
 */
export const STEP_TOPIC = 'step';

/**
 * The topic of change notices: after each workflow task of a conversation that adds events or
 * changes its status, the worker publishes what it now has (a ChangeNotice), so that followers
 * wait on the stream for news instead of asking the conversation (which would write its history).
 */
export const CHANGE_TOPIC = 'change';

/** What a change notice says: enough to decide whether to read the events again. */
export interface ChangeNotice {
  /** Events the conversation has recorded. */
  events: number;
  status: string;
  runNumber: number;
  /** The workflow is closing or continuing as new: ask it directly. */
  closing?: boolean;
  /**
   * The event count when this status began (a worker tells a status seen before from the same
   * status come again, whoever published between); absent from older workers.
   */
  since?: number;
}

/**
 * What the worker publishes for one live line (the client adds `live` and `offset`); `step_start`
 * is the marker of STEP_TOPIC.
 */
export interface LiveItem {
  kind: 'model_delta' | 'thinking_delta' | 'output_delta' | 'retry' | 'step_start';
  text: string;
  step?: number;
  eventCount?: number;
  toolCallId?: string;
  toolName?: string;
  attempt?: number;
}

/**
 * What a stream's followers want beyond the news that a run stopped: `lines`, the live lines;
 * `events`, a change notice after every workflow task that added events (a follower of the events),
 * not only when the status changes (a script in `waitUntilStopped`). Workers publish only what is
 * wanted; a stream that does not say (started by an older client) wants both.
 */
export interface FollowerWants {
  lines: boolean;
  events: boolean;
}

/**
 * The signal a follower that wants more than news of stops sends its stream (with its start:
 * signal-with-start), with its FollowerWants: the stream then wants what any follower wanted.
 */
export const WANT_SIGNAL = 'faheemWant';

/** The stream workflow's memo keys of FollowerWants (what the workers read in their list of streams). */
export const WANTS_MEMO = { lines: 'lines', events: 'events' } as const;

/** What a stream wants, from its memo: a key it does not hold is wanted. */
export function wantsOf(memo: Record<string, unknown> | undefined): FollowerWants {
  return { lines: memo?.[WANTS_MEMO.lines] !== false, events: memo?.[WANTS_MEMO.events] !== false };
}

/** The stream workflow's input. */
export interface LiveStreamInput {
  conversationId: string;
  /** What its followers want (absent: an older client's stream, which wants everything). */
  wants?: FollowerWants;
  /** The stream as the previous run left it (continue-as-new), from `WorkflowStream.getState()`. */
  streamState?: unknown;
  /** Bounds other than the defaults (tests). */
  limits?: { maxItems?: number; maxHistory?: number; maxBytes?: number };
}
