// The conversation loop's decisions in one place: what the run does next, as data. The workflow
// (conversation.ts) carries each move out and asks again. Pure: it reads a view of the run and
// writes nothing; the view's methods are asked lazily and in a fixed order, because two of them
// write a patch marker the first time they answer and histories recorded the markers in this order.
import type { ConversationStatus } from '../../../core/types.js';
import { childHasEnded } from '../../../sub-agents/workflow/delegation.js';

/** Why the loop of one workflow run ended. */
export type RunEnd = 'continue-as-new' | 'closed' | 'idle-timeout' | 'sub-agent-done';

/** What the run does next. */
export type Move =
  /** A `pause --now` asked the host to stop what the conversation left running there. */
  | { kind: 'stop-processes' }
  /** A rewind was asked for (the conversation is paused): carry it out. */
  | { kind: 'rewind' }
  /** The run ends; `moving`: it continues as new onto the deployment's new current version. */
  | { kind: 'end'; end: RunEnd; moving: boolean }
  /** A pooled conversation not running: wait up to `bound` ms, then give the host folder back. */
  | { kind: 'hibernate'; bound: number }
  /** Not running: wait for something to happen, at most the idle timeout (none: the run ends). */
  | { kind: 'wait-idle' }
  /** Running: one turn (a model call and its tools). */
  | { kind: 'take-turn' }
  /** Nothing more at this point: ask again from the top. */
  | { kind: 'again' };

/** Where the loop asks from: its top, or right after a move whose outcome the next decision follows. */
export type MoveFrom = 'top' | 'stopped-processes' | 'woke' | 'idle-timed-out' | 'turn';

/**
 * What the decision reads of the run. The methods are asked only where the loop needs them and in
 * this order: `versionMoveDue` and `hibernationBound` may write a patch marker.
 */
export interface LoopView {
  readonly processesStopDue: boolean;
  readonly rewindPending: boolean;
  readonly status: ConversationStatus;
  readonly closeRequested: boolean;
  /** A sub-agent: its run ends with its work. */
  readonly isSubAgent: boolean;
  /** This run took its share of turns (or the server suggests a new run): continue as new. */
  runLimitReached(): boolean;
  /** The deployment's current version changed: move onto it. */
  versionMoveDue(): boolean;
  /** A pooled conversation's idle bound before hibernation (0 when paused); undefined when not pooled. */
  hibernationBound(): number | undefined;
}

/** The loop's next move, from `from` (see docs/architecture.md's move table). */
export function nextMove(view: LoopView, from: MoveFrom): Move {
  // The workflow completes; its history stays readable.
  if (from === 'idle-timed-out') return { kind: 'end', end: 'idle-timeout', moving: false };
  if (from === 'top' && view.processesStopDue) return { kind: 'stop-processes' };
  if (from === 'top' || from === 'stopped-processes') {
    if (view.rewindPending) return { kind: 'rewind' };
    if (view.runLimitReached()) return { kind: 'end', end: 'continue-as-new', moving: view.versionMoveDue() };
    if (view.versionMoveDue()) return { kind: 'end', end: 'continue-as-new', moving: true };
    if (view.status !== 'running' && !view.closeRequested) {
      const bound = view.hibernationBound();
      return bound !== undefined ? { kind: 'hibernate', bound } : { kind: 'wait-idle' };
    }
  }
  if (from === 'woke' && view.rewindPending) return { kind: 'again' };
  if (from !== 'turn') {
    if (view.closeRequested) return { kind: 'end', end: 'closed', moving: false };
    if (view.status === 'running') return { kind: 'take-turn' };
  }
  if (view.isSubAgent && childHasEnded(view.status)) return { kind: 'end', end: 'sub-agent-done', moving: false };
  return { kind: 'again' };
}
