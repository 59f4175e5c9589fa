// The conversation's status transitions, as pure decisions: what a pause, a run (or resume) and a
// new message do in each status. The workflow applies them (events, search attributes, children).
import type { ConversationStatus } from '../../core/types.js';

/** A pause takes effect in these; in others (idle, finished, …) there is nothing to pause. */
export const PAUSABLE: readonly ConversationStatus[] = ['running', 'waiting_for_confirmation'];

/** What a pause request does now: pause, wait for the start-up to apply it, or nothing. */
export function pauseOutcome(status: ConversationStatus, started: boolean): 'pause' | 'at-start' | 'ignore' {
  if (PAUSABLE.includes(status)) return 'pause';
  // Arrived with the start (a sub-agent whose parent paused meanwhile): applied once it runs.
  return started ? 'ignore' : 'at-start';
}

export type RunOutcome =
  /** Waiting for confirmation: as in the seed SDK, run() approves. */
  | { kind: 'approve' }
  /** Paused with actions waiting: back to waiting; resuming never approves what the user has not. */
  | { kind: 'back-to-confirmation' }
  /** Already running, on a sub-agent that was paused: resuming the parent resumes it. */
  | { kind: 'resume-children' }
  | { kind: 'nothing' }
  /** A new run: counters reset, status running; `wasPaused` records a resume and wakes children. */
  | { kind: 'start'; wasPaused: boolean };

export interface RunView {
  status: ConversationStatus;
  pendingActions: number;
  pendingMessages: number;
  childPaused: boolean;
}

/** What run() (the `run` update, or a resume) does in the conversation's current state. */
export function runOutcome(s: RunView): RunOutcome {
  if (s.status === 'waiting_for_confirmation') return { kind: 'approve' };
  if (s.status === 'paused' && s.pendingActions > 0) return { kind: 'back-to-confirmation' };
  if (s.status === 'running') return s.childPaused ? { kind: 'resume-children' } : { kind: 'nothing' };
  if (s.status === 'finished' && s.pendingMessages === 0) return { kind: 'nothing' }; // nothing new to work on
  return { kind: 'start', wasPaused: s.status === 'paused' };
}

/** As in the seed: a message makes a finished or stuck conversation idle; paused stays paused. */
export function statusAfterMessage(status: ConversationStatus): ConversationStatus {
  return status === 'finished' || status === 'stuck' ? 'idle' : status;
}

/** The statuses a run stops in: each is delivered to the conversation's webhook, if it has one. */
export const STOPS: readonly ConversationStatus[] = ['finished', 'paused', 'waiting_for_confirmation', 'error', 'stuck'];

/**
 * Every change of status a conversation makes, from → to (a status set again unchanged is no change):
 * users run, resume, approve, pause and send messages (the decisions above); a turn ends finished
 * (only from running), stuck or error (from whatever the turn left: running, or paused or waiting by
 * then); the loop waits for confirmation; a rewind pauses from any status. Checked against these
 * decisions and against every recorded history's status search attribute
 * (test/unit/conversation/workflow/status.test.ts); docs/architecture.md shows it as a table.
 */
export const TRANSITIONS: Readonly<Record<ConversationStatus, readonly ConversationStatus[]>> = {
  idle: ['running', 'paused'],
  running: ['paused', 'waiting_for_confirmation', 'finished', 'error', 'stuck'],
  paused: ['running', 'waiting_for_confirmation', 'error', 'stuck'],
  waiting_for_confirmation: ['running', 'paused', 'error', 'stuck'],
  finished: ['idle', 'running', 'paused'],
  error: ['running', 'paused'],
  stuck: ['idle', 'running', 'paused'],
};

/** Whether `from` → `to` is a change of status the conversation makes (TRANSITIONS; the same status is none). */
export function isTransition(from: ConversationStatus, to: ConversationStatus): boolean {
  return from === to || TRANSITIONS[from].includes(to);
}
