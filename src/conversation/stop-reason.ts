// Why a run stopped, in a few words: the last error of an error or stuck run, who paused it, what
// waits for approval. Shared by the SDK (`run()`'s result) and the CLI (the outcome line). Pure.
import type { ConversationEvent, ConversationStatus } from '../core/types.js';

/** How a run ended: its status, and why (null for a plain finish). */
export interface RunResult {
  status: ConversationStatus;
  reason: string | null;
  /** With an output schema: the final answer's JSON value, checked against it (absent when none matched). */
  output?: unknown;
}

/** The reason of the last pause event among `events` (undefined when there is none). */
export function lastPauseReason(events: readonly ConversationEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind === 'pause') return e.reason ?? (e.now ? 'a pause request (now)' : 'a pause request');
  }
  return undefined;
}

/** The reason a run that stopped in `status` gives; `pauseReason` from the last pause event. */
export function stopReason(
  s: { status: ConversationStatus; lastError: string | null; pendingActions?: readonly unknown[] },
  pauseReason?: string,
): string | null {
  switch (s.status) {
    case 'error':
    case 'stuck':
      return s.lastError;
    case 'paused':
      return pauseReason ?? 'a pause request';
    case 'waiting_for_confirmation': {
      const n = s.pendingActions?.length ?? 0;
      return `${n === 1 ? '1 action waits' : `${n} actions wait`} for approve() or reject()`;
    }
    default:
      return null;
  }
}
