// Every change to a conversation's run state, as pure functions: what users, parents and the loop's
// phases do. Each takes the snapshot (plain data, ./run-state.ts) and the facts it reads from the
// run's held parts, and returns the new state, the events to record and the effects wanted, in
// order (search attributes, details, a report to the parent, cancellations, signals to
// sub-agents). No Temporal here: ConversationRun.apply records the events and hands the effects to
// the effects port (./effects.ts) in the order given, which is the order of the commands old
// histories recorded.
import type { Actor } from '../../../client/tenants.js';
import type {
  ActionEvent,
  CheckpointEntry,
  ChildReport,
  ConfirmationPolicy,
  ConversationStatus,
  ImageRef,
  ModelCallResult,
  MovedStep,
} from '../../../core/types.js';
import { checkImageRefs } from '../../../images/workflow/image-refs.js';
import type { NewEvent } from '../conversation-log.js';
import { checkMessageText, type PauseRequest } from '../messages.js';
import { fallbackEvent } from '../reply.js';
import type { PatchId } from '../legacy/patches.js';
import type { RewindAnswer } from '../../../time-travel/workflow/rewind-rules.js';
import { pauseOutcome, runOutcome, statusAfterMessage, STOPS } from '../status.js';
import {
  confirmationText,
  rewoundTo,
  treeCost,
  waitingActions,
  waitInterrupted,
  withChildReport,
  withChildStarted,
  withChildUpdated,
  withChildWork,
  withConfirmationCleared,
  withConfirmationOpen,
  withConfirmationPolicy,
  withCheckpointEntry,
  withRewindAnswered,
  withRewindAsked,
  withRewindTaken,
  withCondensation,
  withCondenseRetryAt,
  withDecision,
  withEventsSent,
  withFinalMessage,
  withForkMade,
  withLastError,
  withModelSeen,
  withMovedStep,
  withProcessesStopDue,
  withPromptsChecked,
  withReply,
  withSessionStarted,
  withSetup,
  withStopHookActive,
  withToolState,
  withWait,
  woken,
  type Decision,
  type RewindResult,
  type RunState,
  type Session,
} from './run-state.js';

/** The state a command reads and writes. */
export interface RunSnapshot {
  readonly state: RunState;
  readonly session: Session;
}

/** What a command reads from the run's held parts (the log, what is in flight, the workflow's patches and clock). */
export interface Facts {
  /** User messages the model has not seen yet. */
  readonly pendingMessages: number;
  /** No worker on the workspace host's queue has picked up the call in flight for a while. */
  readonly waitingForHost: boolean;
  /** A sub-agent keeps its parent's view of it current. */
  readonly hasParent: boolean;
  /** Whether a patch is in force (a marker command: asked only where the old code asked it). */
  readonly patched: (id: PatchId) => boolean;
  /** The index the next recorded event gets (the log's count). */
  readonly nextIndex: number;
  /** The workflow clock's time, which the events recorded now carry. */
  readonly now: string;
  /** The conversation has a webhook: each stop is delivered to it. */
  readonly webhook?: boolean;
  /** Who the call being handled acts for (the team API's callers); the run stamps it on the events. */
  readonly actor?: Actor | undefined;
}

/** A side effect a command wants: the effects port carries it out (see ./effects.ts). */
export type Effect =
  /** upsertSearchAttributes: the status (and, at a conversation's start, its model; a command in the history). */
  | { readonly kind: 'status-attribute'; readonly status: ConversationStatus; readonly model?: string }
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
  /** Deliver the stop recorded as event `eventIndex` to the conversation's webhook (not waited for). */
  | { readonly kind: 'webhook'; readonly eventIndex: number; readonly status: ConversationStatus };

/** What a command returns: the new state, what to record, what to do, and its answer. */
export interface CommandResult<T = undefined> extends RunSnapshot {
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
    m: RunSnapshot,
    readonly facts: Facts,
  ) {
    this.state = m.state;
    this.session = m.session;
  }

  /** Records `event`; the index it gets. */
  record(event: NewEvent): number {
    this.events.push(event);
    return this.facts.nextIndex + this.events.length - 1;
  }

  want(effect: Effect): void {
    this.effects.push(effect);
  }

  done<T>(value: T): CommandResult<T> {
    return { state: this.state, session: this.session, events: this.events, effects: this.effects, value };
  }
}

function draft(m: RunSnapshot, facts: Facts): Draft {
  return new Draft(m, facts);
}

/** A command of its own kind: the snapshot and facts, then its arguments. */
export type Command<A extends unknown[] = never[], T = unknown> = (m: RunSnapshot, facts: Facts, ...args: A) => CommandResult<T>;

/** A bookkeeping change of ./run-state.ts as a command: no event, no effect. */
function onState<A extends unknown[]>(change: (state: RunState, ...args: A) => RunState): Command<A, undefined> {
  return (m, _facts, ...args) => ({ state: change(m.state, ...args), session: m.session, events: [], effects: [], value: undefined });
}

/** A change of the session (./run-state.ts) as a command: no event, no effect. */
function onSession<A extends unknown[]>(change: (session: Session, ...args: A) => Session): Command<A, undefined> {
  return (m, _facts, ...args) => ({ state: m.state, session: change(m.session, ...args), events: [], effects: [], value: undefined });
}

/** Nothing new may start: the conversation is no longer running, or is closing. */
export function halted(m: RunSnapshot): boolean {
  return m.state.status !== 'running' || m.session.closeRequested;
}

// ---- the status ----

function setStatusIn(d: Draft, next: ConversationStatus, reason?: string): void {
  if (next === d.state.status) return;
  d.state = { ...d.state, status: next };
  const eventIndex = d.record({ kind: 'status', source: 'environment', status: next, ...(reason ? { reason } : {}) });
  d.want({ kind: 'status-attribute', status: next });
  d.want({ kind: 'details' });
  reportIn(d);
  // Last: the commands before it are those old histories recorded (the delivery is a new one).
  if (d.facts.webhook && STOPS.includes(next)) d.want({ kind: 'webhook', eventIndex, status: next });
}

function reportIn(d: Draft): void {
  if (d.facts.hasParent) d.want({ kind: 'report-to-parent', status: d.state.status, cost: treeCost(d.state) });
}

/** A new status: its event, the search attribute, the details, the parent told (nothing when it is the same). */
export function setStatus(m: RunSnapshot, facts: Facts, next: ConversationStatus, reason?: string): CommandResult {
  const d = draft(m, facts);
  setStatusIn(d, next, reason);
  return d.done(undefined);
}

/** A sub-agent keeps its parent's view of it current (status and the cost of its tree). */
export function reportToParent(m: RunSnapshot, facts: Facts): CommandResult {
  const d = draft(m, facts);
  reportIn(d);
  return d.done(undefined);
}

/** The conversation stops with an error: `lastError`, optionally an error event, status `error`. */
export function fail(m: RunSnapshot, facts: Facts, message: string, options: { event: boolean }): CommandResult {
  const d = draft(m, facts);
  d.state = withLastError(d.state, message);
  if (options.event) d.record({ kind: 'error', source: 'environment', message });
  setStatusIn(d, 'error', message);
  return d.done(undefined);
}

/** The conversation looks stuck: `lastError` says why. */
export function markStuck(m: RunSnapshot, facts: Facts, reason: string): CommandResult {
  const d = draft(m, facts);
  d.state = withLastError(d.state, reason);
  setStatusIn(d, 'stuck', reason);
  return d.done(undefined);
}

// ---- what users (and parents) can do ----

/** A message that was not added (a signal has no answer): an error event says why. */
export function messageRefused(m: RunSnapshot, facts: Facts, reason: string): CommandResult {
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
  if (request.now) {
    d.want({ kind: 'cancel-tool', interrupt: true });
    // And what no call holds: a command left running past its soft timeout, MCP servers, the kept network.
    d.session = withProcessesStopDue(d.session, true);
  }
  // Not picked up yet: nothing to interrupt, just do not start it.
  else if (d.facts.waitingForHost) d.want({ kind: 'cancel-tool', interrupt: false });
  d.want({ kind: 'tell-children', signal: 'pause', request });
}

/** Pause: nothing new starts; the model call in flight is cancelled; `now` also interrupts the command. */
export function pause(m: RunSnapshot, facts: Facts, request: PauseRequest = {}): CommandResult {
  const d = draft(m, facts);
  pauseIn(d, request);
  return d.done(undefined);
}

function decideIn(d: Draft, decision: Decision): number {
  // Whoever answered is named on the events the answer leads to (the rejections the loop records).
  const by = d.facts.actor;
  const waiting = waitingActions(d.session.confirmation).length;
  d.session = withDecision(d.session, by ? { ...decision, by } : decision);
  if (decision.approved) setStatusIn(d, 'running');
  return waiting;
}

/** Approve or reject the actions waiting for confirmation (the answer the loop's wait reads); how many there were. */
export function decide(m: RunSnapshot, facts: Facts, decision: Decision): CommandResult<number> {
  const d = draft(m, facts);
  const n = decideIn(d, decision);
  return d.done(n);
}

/**
 * The seed's `run()`: start a run, resume, or (waiting for confirmation) approve. Throws when the
 * conversation is closed (the run update's validator says so first).
 */
export function requestRun(m: RunSnapshot, facts: Facts): CommandResult {
  if (m.session.closeRequested) throw new Error('the conversation is closed');
  const d = draft(m, facts);
  if (d.state.status === 'running') d.session = waitInterrupted(d.session, 'resume');
  const outcome = runOutcome({
    status: d.state.status,
    pendingActions: waitingActions(d.session.confirmation).length,
    pendingMessages: facts.pendingMessages,
    childPaused: d.state.children.some((c) => c.status === 'paused'),
  });
  switch (outcome.kind) {
    case 'approve':
      decideIn(d, { approved: true });
      break;
    case 'back-to-confirmation':
      d.record({ kind: 'resume', source: 'user' });
      setStatusIn(d, 'waiting_for_confirmation', confirmationText(d.session.confirmation));
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
export function resume(m: RunSnapshot, facts: Facts): CommandResult {
  if (m.session.closeRequested) return draft(m, facts).done(undefined);
  if (m.state.status === 'waiting_for_confirmation' && facts.patched('resume-signal-never-approves'))
    return draft(m, facts).done(undefined);
  return requestRun(m, facts);
}

/**
 * End the conversation: what is in flight is cancelled, sub-agents close too. A close made through
 * the team API (an actor) is recorded as a `close` event that names it; others record none, as
 * always (so histories from before replay to the same events).
 */
export function close(m: RunSnapshot, facts: Facts): CommandResult {
  const d = draft(m, facts);
  if (facts.actor && !m.session.closeRequested) d.record({ kind: 'close', source: 'user' });
  d.session = waitInterrupted({ ...d.session, closeRequested: true }, 'close');
  // A rewind asked for and not yet done will not be: say so to whoever waits for it.
  failRewindIn(d, 'the conversation was closed before the rewind');
  d.want({ kind: 'cancel-model' });
  if (facts.waitingForHost) d.want({ kind: 'cancel-tool', interrupt: false });
  d.want({ kind: 'tell-children', signal: 'close' });
  d.session = woken(d.session);
  return d.done(undefined);
}

/** The pending rewind (if any) will not happen: its asker is told why. */
function failRewindIn(d: Draft, error: string): void {
  const pending = d.session.rewinds.pending;
  if (pending) d.session = withRewindAnswered(d.session, pending.id, { error });
}

/**
 * A rewind to `step` was asked for: it is pending (its id is the answer), what is running stops (as
 * a pause --now), actions waiting for confirmation are rejected, sub-agents close; the loop then
 * carries it out (answerRewind) and the asker reads the answer (takeRewind).
 */
export function rewind(m: RunSnapshot, facts: Facts, step: number): CommandResult<number> {
  const d = draft(m, facts);
  d.session = withRewindAsked(d.session, step);
  const id = d.session.rewinds.lastId;
  if (d.state.status === 'waiting_for_confirmation')
    decideIn(d, { approved: false, reason: `the conversation is being rewound to step ${step}` });
  pauseIn(d, { now: true, reason: `rewind to step ${step}` });
  d.want({ kind: 'tell-children', signal: 'close' });
  d.session = woken(d.session);
  return d.done(id);
}

/** Rewind `id` ended (done, or why not): the asker reads the answer; it is no longer pending. */
export const answerRewind = onSession(withRewindAnswered);

/** The asker of rewind `id` reads its answer (undefined when there is none: the run drained first), which is then dropped. */
export function takeRewind(m: RunSnapshot, facts: Facts, id: number): CommandResult<RewindResult | undefined> {
  const d = draft(m, facts);
  const result = m.session.rewinds.answers[id];
  d.session = withRewindTaken(d.session, id);
  return d.done(result);
}

/** These actions now wait for approve / reject: the status says what needs approval (the loop then waits for the answer). */
export function askConfirmation(m: RunSnapshot, facts: Facts, actions: readonly ActionEvent[]): CommandResult {
  const d = draft(m, facts);
  d.session = withConfirmationOpen(d.session, actions);
  setStatusIn(d, 'waiting_for_confirmation', confirmationText(d.session.confirmation));
  return d.done(undefined);
}

/** The wait for the answer is over (answered, closed, timed out or moved): nothing waits for confirmation. */
export const clearConfirmation = onSession(withConfirmationCleared);

/** Sets the confirmation policy for the replies to come (actions already waiting stay waiting); the policy now in force. */
export function setConfirmationPolicy(m: RunSnapshot, facts: Facts, policy: ConfirmationPolicy): CommandResult<ConfirmationPolicy> {
  const d = draft(m, facts);
  d.state = withConfirmationPolicy(d.state, policy);
  return d.done(policy);
}

/** `faheem deploy drain` asked this conversation to move to the deployment's current version. */
export function askMove(m: RunSnapshot, facts: Facts): CommandResult {
  const d = draft(m, facts);
  d.session = woken({ ...d.session, moveAsked: true });
  return d.done(undefined);
}

/** The pause that came with the start, now that it has run (when the conversation is running). */
export function pauseAtStart(m: RunSnapshot, facts: Facts): CommandResult {
  const request = m.session.pauseAtStart;
  if (request && m.state.status === 'running' && facts.patched('pause-at-start')) return pause(m, facts, request);
  return draft(m, facts).done(undefined);
}

/** What a run's start reads of the workflow input. */
export interface StartInput {
  readonly firstMessage?: string;
  readonly firstImages?: unknown;
  readonly run?: boolean;
  readonly carried?: unknown;
  readonly options: { readonly agent: { readonly llm: { readonly model?: string } } };
}

/**
 * A run's start. A new conversation: its search attributes (status and model), its first message
 * and `run` (a close or pause may have come with the start: signals are handled first), then the
 * pause kept for the start (see `pauseAtStart`); the details once. Each part reads the facts as the
 * one before left them. A carried conversation has started already. Throws when the first message
 * is not valid.
 */
export function start(m: RunSnapshot, facts: Facts, input: StartInput, check: (text: unknown) => string): CommandResult {
  const events: NewEvent[] = [];
  const effects: Effect[] = [];
  let current: RunSnapshot = m;
  let f = facts;
  const then = (result: CommandResult<unknown>, messages = 0): void => {
    current = { state: result.state, session: result.session };
    events.push(...result.events);
    effects.push(...result.effects);
    f = { ...f, nextIndex: f.nextIndex + result.events.length, pendingMessages: f.pendingMessages + messages };
  };
  if (!input.carried) {
    effects.push({ kind: 'status-attribute', status: m.state.status, model: input.options.agent.llm.model || 'default' });
    if (input.firstMessage) then(message(current, f, check(input.firstMessage), checkImageRefs(input.firstImages)), 1);
    if (input.run && !current.session.closeRequested) then(requestRun(current, f));
    then(pauseAtStart(current, f));
    effects.push({ kind: 'details' });
  }
  return { state: current.state, session: { ...current.session, started: true }, events, effects, value: undefined };
}

/** The run is ending: waiting clients are answered now (they ask the next run), a pending rewind is not carried out. */
export function drain(m: RunSnapshot, facts: Facts): CommandResult {
  const d = draft(m, facts);
  d.session = { ...d.session, draining: true };
  failRewindIn(d, 'the conversation stopped (idle timeout, sub-agent done or closing) before the rewind');
  return d.done(undefined);
}

// ---- messages ----

/** Adds a user message (kept while paused, folded in before the next model call); its index. Checked by the caller. */
export function message(m: RunSnapshot, facts: Facts, text: string, images: readonly ImageRef[] = []): CommandResult<number> {
  const d = draft(m, facts);
  // Images only as references (the bytes are in the object store): history stays small.
  const index = d.record({ kind: 'message', source: 'user', text, ...(images.length ? { images: [...images] } : {}) });
  d.session = waitInterrupted(d.session, 'message');
  setStatusIn(d, statusAfterMessage(d.state.status));
  d.want({ kind: 'details' });
  return d.done(index);
}

/** A user message as the workflow accepts it; throws with the reason otherwise. */
export function checkedMessage(m: RunSnapshot, text: unknown): string {
  const checked = checkMessageText(text);
  if (m.session.closeRequested) throw new Error('the conversation is closed');
  return checked;
}

/** A message signal: added, or an error event saying why not (a signal has no answer). */
export function receiveMessage(m: RunSnapshot, facts: Facts, text: unknown, images?: unknown): CommandResult {
  let checked: string;
  let refs: ImageRef[];
  try {
    checked = checkedMessage(m, text);
    refs = checkImageRefs(images);
  } catch (err) {
    return messageRefused(m, facts, (err as Error).message);
  }
  const added = message(m, facts, checked, refs);
  return { ...added, value: undefined };
}

// ---- what the loop records ----

/** Records events (the log gives each its time); their indices. */
export function record(m: RunSnapshot, facts: Facts, ...events: NewEvent[]): CommandResult<number[]> {
  const d = draft(m, facts);
  return d.done(events.map((e) => d.record(e)));
}

/** How a webhook delivery of the stop recorded as event `eventIndex` ended. */
export interface WebhookOutcome {
  readonly eventIndex: number;
  readonly status: ConversationStatus;
  readonly delivered: boolean;
  readonly attempts: number;
  readonly statusCode?: number;
  readonly reason?: string;
}

/** A webhook delivery is over: its event (delivered, or failed and why). */
export function recordWebhook(m: RunSnapshot, facts: Facts, outcome: WebhookOutcome): CommandResult {
  const d = draft(m, facts);
  d.record({
    kind: 'webhook',
    source: 'environment',
    eventIndex: outcome.eventIndex,
    status: outcome.status,
    delivered: outcome.delivered,
    attempts: outcome.attempts,
    ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
    ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
  });
  return d.done(undefined);
}

/** Records events and shows the details (the Web UI's view changed with them). */
export function recordAndShow(m: RunSnapshot, facts: Facts, ...events: NewEvent[]): CommandResult<number[]> {
  const d = draft(m, facts);
  const indices = events.map((e) => d.record(e));
  d.want({ kind: 'details' });
  return d.done(indices);
}

/** The details, as the Web UI shows them, are current again (something they read changed). */
export function showDetails(m: RunSnapshot, facts: Facts): CommandResult {
  const d = draft(m, facts);
  d.want({ kind: 'details' });
  return d.done(undefined);
}

/** Something a waiting loop should look at happened (no event of its own). */
export const wake = onSession(woken);

/** Events up to `count` went with this run's last model call. */
export const eventsSent = onSession(withEventsSent);

/** The host has been asked to stop what the conversation runs there (after a pause --now). */
export const processesStopAsked = onSession((session: Session) => withProcessesStopDue(session, false));

/** One more model call of this run: counters, usage and cost. */
export const recordReply = onState(withReply);

/** The model answered a call made with the first `seen` events. */
export const modelSaw = onState(withModelSeen);

/** The workspace host's setup (a new version each time it is made). */
export const setSetup = onState(withSetup);

/** A tool's durable state in this conversation. */
export const setToolState = onState(withToolState);

/** The agent's answer (its reply without tool calls, or finish's message). */
export const setFinalMessage = onState(withFinalMessage);

/** The step under way stops here and moves with the conversation (or, undefined, was taken up). */
export const carryStep = onState((state: RunState, step: MovedStep | undefined) => withMovedStep(state, step));

/** SessionStart hooks have run in this run. */
export const markSessionStarted = onState(withSessionStarted);

/** A Stop hook made the agent go on in this run. */
export const markStopHookActive = onState(withStopHookActive);

/** UserPromptSubmit hooks have checked every user message up to `count`. */
export const promptsChecked = onState(withPromptsChecked);

/** A condensation's summary: its usage (it is not a step) and its event. */
export function recordCondensation(
  m: RunSnapshot,
  facts: Facts,
  result: Pick<ModelCallResult, 'cost' | 'usage' | 'latencyMs' | 'answeredBy' | 'fallbacks'> & { summary: string },
  range: { from: number; to: number },
): CommandResult {
  const d = draft(m, facts);
  d.state = withCondensation(d.state, result);
  const moved = fallbackEvent(result, 'condense');
  if (moved) d.record(moved);
  d.record({ kind: 'condensation', source: 'environment', summary: result.summary, forgottenFrom: range.from, forgottenTo: range.to });
  return d.done(undefined);
}

/** A condensation failed: an error event, and no new try before the prompt holds `retryAt` events. */
export function condensationFailed(m: RunSnapshot, facts: Facts, retryAt: number, reason: string): CommandResult {
  const d = draft(m, facts);
  d.state = withCondenseRetryAt(d.state, retryAt);
  d.record({ kind: 'error', source: 'environment', message: `condensation failed (${reason}); going on with the full context` });
  return d.done(undefined);
}

/** A `wait` call begins; the handlers end it early (see waitInterrupted). */
export function beginWait(m: RunSnapshot, facts: Facts, until: string, reason: string): CommandResult {
  const d = draft(m, facts);
  d.session = withWait(d.session, { until, reason });
  d.want({ kind: 'details' });
  return d.done(undefined);
}

/** The `wait` call is over. */
export function endWait(m: RunSnapshot, facts: Facts): CommandResult {
  const d = draft(m, facts);
  d.session = withWait(d.session, undefined);
  d.want({ kind: 'details' });
  return d.done(undefined);
}

// ---- sub-agents ----

/** A sub-agent started (its summary says running). */
export const childStarted = onState(withChildStarted);

/** A sub-agent's summary changed (it ended, or failed to start). */
export const childUpdated = onState(withChildUpdated);

/** A sub-agent's work counts against this run's iterations and budget. */
export const addChildWork = onState(withChildWork);

/** A sub-agent reported its status and cost (a report from a conversation not ours changes nothing). */
export function childReported(m: RunSnapshot, facts: Facts, report: ChildReport): CommandResult {
  const d = draft(m, facts);
  const next = withChildReport(d.state, report);
  if (!next) return d.done(undefined);
  d.state = next;
  d.want({ kind: 'details' });
  d.session = woken(d.session);
  return d.done(undefined);
}

// ---- time travel ----

/** Step `step`'s checkpoint: its event, and the list rewinds and forks read. */
export function recordCheckpoint(
  m: RunSnapshot,
  facts: Facts,
  step: number,
  c: { commit?: string; added: number; changed: number; deleted: number },
): CommandResult {
  const d = draft(m, facts);
  const index = d.record({ kind: 'checkpoint', source: 'environment', step, ...c });
  d.state = withCheckpointEntry(d.state, step, { index, time: facts.now }, c);
  return d.done(undefined);
}

/** The workspace was put back to `entry`'s checkpoint: the later steps leave the prompt, the conversation is paused. */
export function recordRewind(
  m: RunSnapshot,
  facts: Facts,
  entry: CheckpointEntry,
  rewind: { before: string; notUndone: string; workspace: string },
): CommandResult<RewindAnswer> {
  const d = draft(m, facts);
  const commit = entry.commit as string;
  const dropFrom = entry.index + 1;
  const dropTo = facts.nextIndex;
  const { before, notUndone } = rewind;
  d.record({ kind: 'rewind', source: 'user', toStep: entry.step, commit, before, dropFrom, dropTo, notUndone });
  d.state = rewoundTo(d.state, entry, rewind.workspace);
  setStatusIn(d, 'paused', `rewound to step ${entry.step}`);
  d.want({ kind: 'details' });
  return d.done({ toStep: entry.step, commit, before, dropped: dropTo - dropFrom });
}

/** A fork's workspace has been made: an event says so (and wakes whoever waits for it). */
export function forkMade(m: RunSnapshot, facts: Facts, workspace: string): CommandResult {
  const d = draft(m, facts);
  d.state = withForkMade(d.state);
  const origin = d.state.forkedFrom;
  const reason = `forked from ${origin?.id ?? '?'} at step ${origin?.step ?? '?'}: workspace ${workspace} ready`;
  d.record({ kind: 'status', source: 'environment', status: d.state.status, reason });
  d.want({ kind: 'details' });
  return d.done(undefined);
}
