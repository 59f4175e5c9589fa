// Names shared by the live stream's three sides (the stream workflow, the worker that publishes,
// the clients that follow). Workflow-safe: no Node imports.

/** The id of the workflow that hosts a conversation's live stream (its own history, not the conversation's). */
export function liveStreamId(conversationId: string): string {
  return `${conversationId}::live`;
}

/** The stream workflow's type name. */
export const LIVE_STREAM_WORKFLOW = 'liveStream';

/** The one topic live lines go to. */
export const LIVE_TOPIC = 'live';

/** What the worker publishes for one live line (the client adds `live` and `offset`). */
export interface LiveItem {
  kind: 'model_delta' | 'thinking_delta' | 'output_delta' | 'retry';
  text: string;
  step?: number;
  toolCallId?: string;
  toolName?: string;
  attempt?: number;
}

/** The stream workflow's input. */
export interface LiveStreamInput {
  conversationId: string;
  /** The stream as the previous run left it (continue-as-new), from `WorkflowStream.getState()`. */
  streamState?: unknown;
}
