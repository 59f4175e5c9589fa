// Live lines: what a follower sees while a step is under way (the reply as it streams, a command's
// output as it comes). They are not events: they carry no `index`, the conversation's history holds
// none of them, and the durable event that lands afterwards is the record.

/** The kinds of live line, as `faheem events --follow --json` prints them. */
export const LIVE_KINDS = ['model_delta', 'thinking_delta', 'output_delta', 'retry'] as const;
/** One kind of live line: the reply's text, its thinking, a command's output, or a retry marker. */
export type LiveKind = (typeof LIVE_KINDS)[number];

/**
 * One live line.
 * - `model_delta`: more of the reply's text; with `toolCallId` and `toolName`, more of that tool
 *   call's arguments (raw JSON text as the model writes it).
 * - `thinking_delta`: more of the model's thinking.
 * - `output_delta`: more of a running command's output (`toolCallId` names the call).
 * - `retry`: the model call of `step` (or, with `toolCallId`, that tool call) started again after a
 *   lost attempt: drop the partial text the earlier attempt streamed.
 */
export interface LiveDelta {
  live: true;
  kind: LiveKind;
  text: string;
  /** The step (model call number of the run; it starts again at 1 each run) the line belongs to. */
  step?: number;
  /**
   * On the lines of a model call: how many events the conversation had when the call began. Every
   * line of one call has the same, and a later call a larger one (across runs, unlike `step`).
   */
  eventCount?: number;
  toolCallId?: string;
  toolName?: string;
  /** The attempt that streams from here on (on `retry`: the new attempt, 2 or more). */
  attempt?: number;
  /** The line's position in the conversation's live stream; resume after it with `liveFrom: offset + 1`. */
  offset: number;
}
