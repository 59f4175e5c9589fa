// What a reply cut by the output-token cap leads to. A text reply cut short ends the run (marked
// truncated: ACP's `max_tokens`); a reply whose tool calls were cut runs once more with a note; a
// second cut in a row is `stuck`. Meanwhile a degenerate model that never stops talking was asked
// to "continue" until the iteration limit, a full capped reply each time. Pure and deterministic.
import type { ConversationEvent } from '../../core/types.js';

/** What to do with a truncated reply. */
export type TruncationVerdict =
  /** A text reply: the run ends with it (finished, the message marked truncated). */
  | { kind: 'finish' }
  /** Tool calls cut: they run (their results say what broke) and the next prompt says why. */
  | { kind: 'retry' }
  /** Cut again right after a cut: the model cannot fit its reply under the cap. */
  | { kind: 'stuck'; reason: string };

/**
 * Whether the reply before the one now landing was cut by the output cap too: the newest agent
 * message, or the newest reply's actions, since the user last wrote. `events` are the ones on the
 * conversation's line (rewound ones left out), oldest first.
 */
export function previousReplyTruncated(events: readonly ConversationEvent[]): boolean {
  let replyId: string | undefined;
  let truncated = false;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as ConversationEvent;
    if (e.kind === 'observation' && replyId === undefined) continue;
    if (e.kind === 'action') {
      if (replyId === undefined) replyId = e.replyId;
      if (e.replyId !== replyId) return truncated;
      truncated ||= e.truncated === true;
      continue;
    }
    if (e.kind === 'observation') continue;
    if (replyId !== undefined) return truncated;
    if (e.kind === 'message') return e.source === 'agent' ? e.truncated === true : false;
    if (e.kind === 'condensation') return false;
  }
  return truncated;
}

/** The verdict on a truncated reply, given whether it had tool calls and whether the previous reply was cut too. */
export function truncationVerdict(hasToolCalls: boolean, previousTruncated: boolean): TruncationVerdict {
  if (previousTruncated) {
    return {
      kind: 'stuck',
      reason:
        'the model was cut by the output-token cap twice in a row (it does not fit its reply under the cap): raise LLM_MAX_OUTPUT_TOKENS on the worker, or ask for smaller steps',
    };
  }
  return hasToolCalls ? { kind: 'retry' } : { kind: 'finish' };
}
