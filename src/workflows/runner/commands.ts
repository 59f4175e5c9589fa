// What users, parents and the loop may do to a conversation, as pure functions: each takes the
// state (plain data, ./run-state.ts) and the facts it reads from the run's held parts, and returns
// the new state, the events to record and the effects wanted, in order (search attributes, details,
// a report to the parent, cancellations, signals to sub-agents). No Temporal here: ConversationRun
// records the events and hands the effects to the effects port (./effects.ts) in the order given,
// which is the order of the commands old histories recorded.
import type { ConversationStatus } from '../../types.js';
import type { NewEvent } from '../conversation-log.js';
import type { PauseRequest } from '../messages.js';
import type { PatchId } from '../legacy/patches.js';
import { pauseOutcome, runOutcome, statusAfterMessage } from '../status.js';
import { treeCost, waitInterrupted, withLastError, woken, type RunState, type Session } from './run-state.js';
import type { Decision } from './confirmation-gate.js';

/** The state a command reads and writes. */
export interface Model {
  readonly state: RunState;
  readonly session: Session;
}

/** What a command reads from the run's held parts (the log, the confirmation gate, what is in flight). */
export interface Facts {
  /** User messages the model has not seen yet. */
  readonly pendingMessages: number;
  /** Actions waiting for approve / reject. */
  readonly pendingActions: number;
  /** One line saying what needs approval (the status event's reason). */
  readonly confirmationText: string;
  /** No worker on the workspace host's queue has picked up the call in flight for a while. */
  readonly waitingForHost: boolean;
  /** A sub-agent keeps its parent's view of it current. */
  readonly hasParent: boolean;
  /** Whether a patch is in force (a marker command: asked only where the old code asked it). */
  readonly patched: (id: PatchId) => boolean;
}

/** A side effect a command wants: the effects port carries it out (see ./effects.ts). */
export type Effect =
  /** upsertSearchAttributes: the status (a command in the history). */
  | { readonly kind: 'status-attribute'; readonly status: ConversationStatus }
  /** The Web UI's current details (not a command; published once per flush). */
  | { readonly kind: 'details' }
  /** signalExternalWorkflow to the parent: this sub-agent's status and tree cost. */
  | { readonly kind: 'report-to-parent'; readonly status: ConversationStatus; readonly cost: number }
  /** Cancel the model call (or condensation, or setup) in flight. */
  | { readonly kind: 'cancel-model' }
  /** Cancel the host tool call in flight; `interrupt`: a `pause --now` (the command is interrupted). */
  | { readonly kind: 'cancel-tool'; readonly interrupt: boolean }
  /** Signal every open sub-agent. */
  | { readonly kind: 'tell-children'; readonly signal: 'pause'; readonly request: PauseRequest }
  | { readonly kind: 'tell-children'; readonly signal: 'resume' | 'close' }
  /** The user's answer to the actions waiting for confirmation. */
  | { readonly kind: 'answer-confirmation'; readonly decision: Decision }
  /** The pending rewind will not happen: its asker is told why. */
  | { readonly kind: 'fail-rewind'; readonly error: string };

/** What a command returns: the new state, what to record, what to do, and its answer. */
export interface Step<T = undefined> extends Model {
  readonly events: readonly NewEvent[];
  readonly effects: readonly Effect[];
  readonly value: T;
}

/** A command under way: local and mutable, so that the commands below read in order. */
class Draft {
  state: RunState;
  session: Session;
  readonly events: NewEvent[] = [];
  readonly effects: Effect[] = [];

  constructor(
    m: Model,
    readonly facts: Facts,
  ) {
    this.state = m.state;
    this.session = m.session;
  }

  record(event: NewEvent): void {
    this.events.push(event);
  }

  want(effect: Effect): void {
    this.effects.push(effect);
  }

  done<T>(value: T): Step<T> {
    return { state: this.state, session: this.session, events: this.events, effects: this.effects, value };
  }
}

function draft(m: Model, facts: Facts): Draft {
  return new Draft(m, facts);
}

/** Nothing new may start: the conversation is no longer running, or is closing. */
export function halted(m: Model): boolean {
  return m.state.status !== 'running' || m.session.closeRequested;
}

// ---- the status ----

function setStatusIn(d: Draft, next: ConversationStatus, reason?: string): void {
  if (next === d.state.status) return;
  d.state = { ...d.state, status: next };
  d.record({ kind: 'status', source: 'environment', status: next, ...(reason ? { reason } : {}) });
  d.want({ kind: 'status-attribute', status: next });
  d.want({ kind: 'details' });
  reportIn(d);
}

function reportIn(d: Draft): void {
  if (d.facts.hasParent) d.want({ kind: 'report-to-parent', status: d.state.status, cost: treeCost(d.state) });
}

/** A new status: its event, the search attribute, the details, the parent told (nothing when it is the same). */
export function setStatus(m: Model, facts: Facts, next: ConversationStatus, reason?: string): Step {
  const d = draft(m, facts);
  setStatusIn(d, next, reason);
  return d.done(undefined);
}

/** A sub-agent keeps its parent's view of it current (status and the cost of its tree). */
export function reportToParent(m: Model, facts: Facts): Step {
  const d = draft(m, facts);
  reportIn(d);
  return d.done(undefined);
}

/** The conversation stops with an error: `lastError`, optionally an error event, status `error`. */
export function fail(m: Model, facts: Facts, message: string, options: { event: boolean }): Step {
  const d = draft(m, facts);
  d.state = withLastError(d.state, message);
  if (options.event) d.record({ kind: 'error', source: 'environment', message });
  setStatusIn(d, 'error', message);
  return d.done(undefined);
}

/** The conversation looks stuck: `lastError` says why. */
export function markStuck(m: Model, facts: Facts, reason: string): Step {
  const d = draft(m, facts);
  d.state = withLastError(d.state, reason);
  setStatusIn(d, 'stuck', reason);
  return d.done(undefined);
}

// ---- what users (and parents) can do ----

/** Adds a user message (kept while paused, folded in before the next model call). Checked by the caller. */
export function message(m: Model, facts: Facts, text: string): Step {
  const d = draft(m, facts);
  d.record({ kind: 'message', source: 'user', text });
  d.session = waitInterrupted(d.session, 'message');
  setStatusIn(d, statusAfterMessage(d.state.status));
  d.want({ kind: 'details' });
  return d.done(undefined);
}

/** A message that was not added (a signal has no answer): an error event says why. */
export function messageRefused(m: Model, facts: Facts, reason: string): Step {
  const d = draft(m, facts);
  d.record({ kind: 'error', source: 'environment', message: `message not added: ${reason}` });
  return d.done(undefined);
}

function pauseIn(d: Draft, request: PauseRequest): void {
  const outcome = pauseOutcome(d.state.status, d.session.started);
  if (outcome === 'at-start') d.session = { ...d.session, pauseAtStart: request };
  if (outcome !== 'pause') return;
  setStatusIn(d, 'paused', request.reason);
  d.session = waitInterrupted(d.session, 'pause');
  d.record({ kind: 'pause', source: 'user', now: request.now === true, ...(request.reason ? { reason: request.reason } : {}) });
  d.want({ kind: 'cancel-model' });
  if (request.now) d.want({ kind: 'cancel-tool', interrupt: true });
  // Not picked up yet: nothing to interrupt, just do not start it.
  else if (d.facts.waitingForHost) d.want({ kind: 'cancel-tool', interrupt: false });
  d.want({ kind: 'tell-children', signal: 'pause', request });
}

/** Pause: nothing new starts; the model call in flight is cancelled; `now` also interrupts the command. */
export function pause(m: Model, facts: Facts, request: PauseRequest = {}): Step {
  const d = draft(m, facts);
  pauseIn(d, request);
  return d.done(undefined);
}

function decideIn(d: Draft, decision: Decision): number {
  d.want({ kind: 'answer-confirmation', decision });
  if (decision.approved) setStatusIn(d, 'running');
  return d.facts.pendingActions;
}

/** Approve or reject the actions waiting for confirmation; how many there were. */
export function decide(m: Model, facts: Facts, decision: Decision): Step<number> {
  const d = draft(m, facts);
  const n = decideIn(d, decision);
  return d.done(n);
}

/**
 * The seed's `run()`: start a run, resume, or (waiting for confirmation) approve. Throws when the
 * conversation is closed (the run update's validator says so first).
 */
export function run(m: Model, facts: Facts): Step {
  if (m.session.closeRequested) throw new Error('the conversation is closed');
  const d = draft(m, facts);
  if (d.state.status === 'running') d.session = waitInterrupted(d.session, 'resume');
  const outcome = runOutcome({
    status: d.state.status,
    pendingActions: facts.pendingActions,
    pendingMessages: facts.pendingMessages,
    childPaused: d.state.children.some((c) => c.status === 'paused'),
  });
  switch (outcome.kind) {
    case 'approve':
      decideIn(d, { approved: true });
      break;
    case 'back-to-confirmation':
      d.record({ kind: 'resume', source: 'user' });
      setStatusIn(d, 'waiting_for_confirmation', facts.confirmationText);
      break;
    case 'resume-children':
      d.want({ kind: 'tell-children', signal: 'resume' });
      break;
    case 'nothing':
      break;
    case 'start': {
      const { wasPaused } = outcome;
      d.state = { ...d.state, iterations: 0, runCost: 0, runNumber: d.state.runNumber + 1, lastError: null };
      if (wasPaused) d.record({ kind: 'resume', source: 'user' });
      setStatusIn(d, 'running');
      if (wasPaused) d.want({ kind: 'tell-children', signal: 'resume' });
      break;
    }
  }
  return d.done(undefined);
}

/** The resume signal: like run(), except that it never approves actions waiting for confirmation. */
export function resume(m: Model, facts: Facts): Step {
  if (m.session.closeRequested) return draft(m, facts).done(undefined);
  if (m.state.status === 'waiting_for_confirmation' && facts.patched('resume-signal-never-approves'))
    return draft(m, facts).done(undefined);
  return run(m, facts);
}

/** End the conversation: what is in flight is cancelled, sub-agents close too. */
export function close(m: Model, facts: Facts, rewindPending: boolean): Step {
  const d = draft(m, facts);
  d.session = waitInterrupted({ ...d.session, closeRequested: true }, 'close');
  // A rewind asked for and not yet done will not be: say so to whoever waits for it.
  if (rewindPending) d.want({ kind: 'fail-rewind', error: 'the conversation was closed before the rewind' });
  d.want({ kind: 'cancel-model' });
  if (facts.waitingForHost) d.want({ kind: 'cancel-tool', interrupt: false });
  d.want({ kind: 'tell-children', signal: 'close' });
  d.session = woken(d.session);
  return d.done(undefined);
}

/**
 * A rewind to `step` was asked for: what is running stops (as a pause --now), actions waiting for
 * confirmation are rejected, sub-agents close; the loop then carries it out.
 */
export function rewind(m: Model, facts: Facts, step: number): Step {
  const d = draft(m, facts);
  if (d.state.status === 'waiting_for_confirmation')
    decideIn(d, { approved: false, reason: `the conversation is being rewound to step ${step}` });
  pauseIn(d, { now: true, reason: `rewind to step ${step}` });
  d.want({ kind: 'tell-children', signal: 'close' });
  d.session = woken(d.session);
  return d.done(undefined);
}

/** `faheem deploy drain` asked this conversation to move to the deployment's current version. */
export function askMove(m: Model, facts: Facts): Step {
  const d = draft(m, facts);
  d.session = woken({ ...d.session, moveAsked: true });
  return d.done(undefined);
}

/**
 * A new conversation's first message and `run` (a close or pause may have come with the start:
 * signals are handled first). The caller applies each step in turn (each reads the log as the one
 * before left it) and then the pause kept for the start (see `pauseAtStart`).
 */
export function startSteps(
  input: { firstMessage?: string; run?: boolean },
  check: (text: unknown) => string,
): ((m: Model, facts: Facts) => Step)[] {
  const steps: ((m: Model, facts: Facts) => Step)[] = [];
  if (input.firstMessage) {
    const text = check(input.firstMessage);
    steps.push((m, facts) => message(m, facts, text));
  }
  if (input.run) steps.push((m, facts) => (m.session.closeRequested ? draft(m, facts).done(undefined) : run(m, facts)));
  return steps;
}

/** The pause that came with the start, now that it has run (when the conversation is running). */
export function pauseAtStart(m: Model, facts: Facts): Step {
  const request = m.session.pauseAtStart;
  if (request && m.state.status === 'running' && facts.patched('pause-at-start')) return pause(m, facts, request);
  return draft(m, facts).done(undefined);
}
