// The conversation's state as plain data, and every change to it. `RunState` is what a run carries
// to the next (continue-as-new) minus the events, which the log holds; `Session` is what lasts only
// as long as this workflow run. This module and ./commands.ts are the only writers of their fields,
// and both are pure: each change returns a new object (no Temporal, no I/O), so unit tests drive
// them directly. ConversationRun (conversation-run.ts) holds the current values.
import type { Actor } from '../../../client/tenants.js';
import {
  emptyMetrics,
  type ActionEvent,
  type CarriedState,
  type CheckpointEntry,
  type ConfirmationPolicy,
  type ChildReport,
  type ChildSummary,
  type ConversationInput,
  type ConversationSetup,
  type ConversationStatus,
  type ForkOrigin,
  type Metrics,
  type ModelCallResult,
  type MovedStep,
  type TerminalState,
} from '../../../core/types.js';
import type { EventRun } from '../event-log.js';
import { migrateCarried } from '../legacy/carried-state.js';
import { summarizeArgs } from '../details.js';
import { addUsage } from '../reply.js';
import { rewoundCheckpoints, withCheckpoint, type RewindAnswer } from '../../../time-travel/workflow/rewind-rules.js';
import type { PauseRequest } from '../messages.js';

/** What ended a wait early (see ./durable-wait.ts). */
export type WaitEnd = 'message' | 'resume' | 'pause' | 'close';

/** A wait in progress: until when, why, and what ended it early (if anything has). */
export interface ActiveWait {
  until: string;
  reason: string;
  endedBy?: WaitEnd;
}

/** The user's answer to actions waiting for confirmation. */
export interface Decision {
  approved: boolean;
  reason?: string;
  /** Who answered, when it came through the team API: the events the answer leads to name them. */
  by?: Actor;
}

/** The actions of the current reply waiting for approve / reject, and the answer once given (./confirmation-gate.ts reads it). */
export interface Confirmation {
  readonly actions: readonly ActionEvent[];
  readonly decision?: Decision;
}

/** How a rewind asked for ended: its answer, or why it did not happen. */
export interface RewindResult {
  readonly answer?: RewindAnswer;
  readonly error?: string;
}

/**
 * Rewinds asked for through the rewind update (at most one pending) and their answers, kept until
 * the update that asked reads them (time-travel/workflow/rewind-requests.ts reads it).
 */
export interface Rewinds {
  /** The id the last request got (the next one's is one more). */
  readonly lastId: number;
  readonly pending?: { readonly id: number; readonly to: number };
  readonly answers: Readonly<Record<number, RewindResult>>;
}

/** What a run carries to the next: `CarriedState` without its version and events, every field present. */
export interface RunState {
  /** Which run recorded which events: earlier runs answer for the events this one no longer holds. */
  readonly runs: readonly EventRun[];
  readonly status: ConversationStatus;
  /** Model calls in this run (a sub-agent's count too). */
  readonly iterations: number;
  readonly runNumber: number;
  readonly metrics: Metrics;
  readonly lastError: string | null;
  /** Events the model has seen: user messages after this point are "pending". */
  readonly modelSeenEvents: number;
  readonly runCost: number;
  /** Each tool's durable state (the terminal's cwd and variables, the task list), by tool name. */
  readonly toolState: Readonly<Record<string, unknown>>;
  /** What the workspace host offered when the conversation first ran: tools and AGENTS.md. */
  readonly setup?: ConversationSetup;
  /** The prompt tokens of the last model call (0 right after a condensation). */
  readonly lastPromptTokens: number;
  /** After a failed condensation: do not try again before the prompt holds this many events. */
  readonly condenseRetryAt: number;
  readonly children: readonly ChildSummary[];
  /** How many sub-agents were started (the next one's number is one more). */
  readonly childCount: number;
  /** The agent's answer (its reply without tool calls, or finish's message). */
  readonly finalMessage: string | null;
  /** With an output schema: the last answer's checked JSON value (absent until one matched). */
  readonly output?: unknown;
  /** Steps (model replies) over the whole conversation; a rewind goes back to its step. */
  readonly steps: number;
  /** One checkpoint of the workspace per step. */
  readonly checkpoints: readonly CheckpointEntry[];
  readonly forkedFrom?: ForkOrigin;
  readonly forkMade?: boolean;
  /** The run whose SessionStart hooks have run; whether a Stop hook blocked in this run; user messages hooks have checked. */
  readonly hooks: { readonly sessionStartedRun: number; readonly stopHookRun: number; readonly checkedPromptsUpTo: number };
  /** The step under way when the run stopped to move to a new version (carried), or carried in from one. */
  readonly movedStep?: MovedStep;
  /** Whether actions wait for the user's approval (the setConfirmationPolicy update changes it). */
  readonly confirmationPolicy: ConfirmationPolicy;
}

/** What lasts only as long as this workflow run (a close ends it; nothing of it is carried). */
export interface Session {
  readonly closeRequested: boolean;
  /** Bumped by every change a waiting loop should look at. */
  readonly wakeups: number;
  /** The run is ending (completing or continuing as new): waits answer at once. */
  readonly draining: boolean;
  /** Before the start has run, a pause is kept for it (see commands.pause). */
  readonly started: boolean;
  readonly pauseAtStart?: PauseRequest;
  /** The `wait` call in progress, if any. */
  readonly activeWait?: ActiveWait;
  /** `faheem deploy drain` asked this conversation to move to the deployment's current version. */
  readonly moveAsked: boolean;
  /** Events up to here went with this run's last model call (its worker likely caches them). */
  readonly sentEvents?: number;
  /**
   * A `pause --now` asked that everything the conversation started on its host stop, a command left
   * running past its soft timeout included: the loop asks the host (runner/setup.ts stopProcessesAfterPause).
   */
  readonly processesStopDue?: boolean;
  /** Actions waiting for approve / reject and the answer (absent when none wait; never carried: an approval moves as `movedStep`). */
  readonly confirmation?: Confirmation;
  /** Rewinds asked for and their answers (never carried: a drain fails the pending one first). */
  readonly rewinds: Rewinds;
}

/** The state a run starts from: a new conversation's, or the carried one (of any older shape). */
export function initialState(input: ConversationInput, runId: string, eventCount: number): RunState {
  const { options } = input;
  const carried = input.carried ? migrateCarried(input.carried, options.workspace) : undefined;
  // A fork's first run holds the events it was given (0..N) itself.
  const from = input.fork && !carried?.runs?.length ? 0 : eventCount;
  const forkedFrom = carried?.forkedFrom ?? input.fork?.origin;
  return {
    runs: [...(carried?.runs ?? []), { runId, from }],
    status: carried?.status ?? 'idle',
    iterations: carried?.iterations ?? 0,
    runNumber: carried?.runNumber ?? 0,
    metrics: carried?.metrics ?? emptyMetrics(),
    lastError: carried?.lastError ?? null,
    modelSeenEvents: carried?.modelSeenEvents ?? 0,
    runCost: carried?.runCost ?? 0,
    toolState: carried?.toolState ?? freshToolState(options.workspace),
    ...(carried?.setup ? { setup: carried.setup } : {}),
    lastPromptTokens: carried?.lastPromptTokens ?? 0,
    condenseRetryAt: carried?.condenseRetryAt ?? 0,
    children: carried?.children ?? [],
    childCount: carried?.childCount ?? 0,
    finalMessage: carried?.finalMessage ?? null,
    // Written only for a conversation with an output schema (others carry no such field).
    ...(carried?.output !== undefined ? { output: carried.output } : {}),
    steps: carried?.steps ?? 0,
    checkpoints: carried?.checkpoints ?? [],
    // Written only for a fork, as before (a conversation that is not one carries neither field).
    ...(forkedFrom ? { forkedFrom, forkMade: carried?.forkMade ?? false } : {}),
    hooks: {
      sessionStartedRun: carried?.hooks?.sessionStartedRun ?? -1,
      stopHookRun: carried?.hooks?.stopHookRun ?? -1,
      checkedPromptsUpTo: carried?.hooks?.checkedPromptsUpTo ?? 0,
    },
    ...(carried?.movedStep ? { movedStep: carried.movedStep } : {}),
    // Older runs changed the policy in the options they carried on: those answer for it then.
    confirmationPolicy: carried?.confirmationPolicy ?? options.confirmationPolicy,
  };
}

/** A run's session at its start: a carried conversation has started already. */
export function initialSession(input: ConversationInput): Session {
  return {
    closeRequested: false,
    wakeups: 0,
    draining: false,
    started: input.carried !== undefined,
    moveAsked: false,
    rewinds: { lastId: 0, answers: {} },
  };
}

/** The fields a run carries besides its version and events (`terminal` and `tasks`: version 1 only). */
type CarriedFields = Omit<CarriedState, 'version' | 'events' | 'terminal' | 'tasks'>;
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
// RunState is the carried shape: a field added to one and not the other does not compile.
const runStateIsCarried: SameKeys<RunState, CarriedFields> = true;
void runStateIsCarried;

/** The carried state's fields of `state` (the events and the version are added by the caller). */
export function carriedFields(state: RunState): CarriedFields {
  // Field for field the same (checked above); only readonly-ness differs.
  return state as CarriedFields;
}

/** A new conversation's tool state: the terminal in the workspace. */
export function freshToolState(workspace: string): Record<string, unknown> {
  return { terminal: { cwd: workspace, env: {} } };
}

/** The terminal's state, or a fresh one in the workspace. */
export function terminalOf(state: RunState, workspace: string): TerminalState {
  return (state.toolState.terminal as TerminalState | undefined) ?? { cwd: workspace, env: {} };
}

/** `own` plus every sub-agent's tree cost. */
export function treeCost(state: RunState): number {
  return state.children.reduce((sum, c) => sum + c.cost, state.metrics.accumulatedCost);
}

// ---- the model and tools ----

/** One more model call of this run: counters, usage and cost. */
export function withReply(state: RunState, reply: ModelCallResult): RunState {
  const steps = state.steps + 1;
  return {
    ...state,
    lastPromptTokens: reply.usage.promptTokens,
    iterations: state.iterations + 1,
    steps,
    metrics: addUsage(state.metrics, reply, steps, 'step'),
    runCost: state.runCost + reply.cost,
  };
}

/** A condensation's usage (it is not a step). */
export function withCondensation(state: RunState, result: Pick<ModelCallResult, 'cost' | 'usage' | 'latencyMs'>): RunState {
  return { ...state, metrics: addUsage(state.metrics, result, state.steps, 'condense'), lastPromptTokens: 0 };
}

/** A condensation failed: not again before the prompt holds `at` events. */
export function withCondenseRetryAt(state: RunState, at: number): RunState {
  return { ...state, condenseRetryAt: at };
}

/** The model answered a call made with the first `seen` events. */
export function withModelSeen(state: RunState, seen: number): RunState {
  return { ...state, modelSeenEvents: seen };
}

/** The workspace host's setup (a new version each time it is made). */
export function withSetup(state: RunState, next: Omit<ConversationSetup, 'version'>): RunState {
  return { ...state, setup: { version: (state.setup?.version ?? 0) + 1, ...next } };
}

export function withToolState(state: RunState, tool: string, toolState: unknown): RunState {
  return { ...state, toolState: { ...state.toolState, [tool]: toolState } };
}

/** The agent's answer (its reply without tool calls, or finish's message), and its checked JSON value when it has one. */
export function withFinalMessage(state: RunState, text: string, output?: { value: unknown }): RunState {
  // A later answer without a checked value (a conversation without a schema has none) leaves no stale one.
  const { output: _, ...rest } = state;
  return { ...rest, finalMessage: text, ...(output ? { output: output.value } : {}) };
}

export function withLastError(state: RunState, message: string | null): RunState {
  return { ...state, lastError: message };
}

/** The step under way stops here and moves with the conversation (or, undefined, was taken up). */
export function withMovedStep(state: RunState, step: MovedStep | undefined): RunState {
  const { movedStep: _old, ...rest } = state;
  return step ? { ...rest, movedStep: step } : rest;
}

// ---- sub-agents ----

/** A sub-agent started: its summary (running) and the count. */
export function withChildStarted(state: RunState, child: ChildSummary): RunState {
  return { ...state, children: [...state.children, child], childCount: state.childCount + 1 };
}

/** A sub-agent's summary changed (it ended, or failed to start). */
export function withChildUpdated(state: RunState, id: string, change: Partial<Pick<ChildSummary, 'status' | 'cost'>>): RunState {
  return { ...state, children: state.children.map((c) => (c.id === id ? { ...c, ...change } : c)) };
}

/** A child's report; undefined when it is not one of ours. */
export function withChildReport(state: RunState, report: ChildReport): RunState | undefined {
  const child = state.children.find((c) => c.id === report?.id);
  if (!child) return undefined;
  return withChildUpdated(state, child.id, { status: report.status, cost: Math.max(child.cost, Number(report.cost) || 0) });
}

/** A sub-agent's work counts against this run's iterations and budget. */
export function withChildWork(state: RunState, iterations: number, cost: number): RunState {
  return { ...state, iterations: state.iterations + iterations, runCost: state.runCost + cost };
}

// ---- hooks ----

/** SessionStart hooks run once a run. */
export function sessionStartDue(state: RunState): boolean {
  return state.hooks.sessionStartedRun !== state.runNumber;
}

export function withSessionStarted(state: RunState): RunState {
  return { ...state, hooks: { ...state.hooks, sessionStartedRun: state.runNumber } };
}

/** Whether a Stop hook already made the agent go on in this run (Claude Code's stop_hook_active). */
export function stopHookActive(state: RunState): boolean {
  return state.hooks.stopHookRun === state.runNumber;
}

export function withStopHookActive(state: RunState): RunState {
  return { ...state, hooks: { ...state.hooks, stopHookRun: state.runNumber } };
}

/** UserPromptSubmit hooks have checked every user message up to `count`. */
export function withPromptsChecked(state: RunState, count: number): RunState {
  return { ...state, hooks: { ...state.hooks, checkedPromptsUpTo: count } };
}

// ---- time travel ----

/** Step `step`'s checkpoint, recorded as the event at `index` (time `time`): the tools' state goes with it. */
export function withCheckpointEntry(
  state: RunState,
  step: number,
  event: { index: number; time: string },
  c: { commit?: string; added: number; changed: number; deleted: number },
): RunState {
  const entry: CheckpointEntry = {
    step,
    index: event.index,
    time: event.time,
    ...c,
    toolState: JSON.parse(JSON.stringify(state.toolState)) as Record<string, unknown>,
  };
  return { ...state, checkpoints: withCheckpoint(state.checkpoints, entry) };
}

/** The workspace was put back to `entry`'s checkpoint: the step, checkpoints and tools' state as after it. */
export function rewoundTo(state: RunState, entry: CheckpointEntry, workspace: string): RunState {
  // The tools' state as after that step; a command that was running has ended.
  const toolState = JSON.parse(JSON.stringify(entry.toolState ?? freshToolState(workspace))) as Record<string, unknown>;
  const terminal = toolState.terminal as TerminalState | undefined;
  if (terminal?.running) delete terminal.running;
  return { ...state, steps: entry.step, checkpoints: rewoundCheckpoints(state.checkpoints, entry.step), toolState, lastError: null };
}

/** The confirmation policy for the replies to come (actions already waiting stay waiting). */
export function withConfirmationPolicy(state: RunState, policy: ConfirmationPolicy): RunState {
  return { ...state, confirmationPolicy: policy };
}

/** A fork's workspace has been made. */
export function withForkMade(state: RunState): RunState {
  return { ...state, forkMade: true };
}

// ---- the session ----

/** Something a waiting loop should look at happened. */
export function woken(session: Session): Session {
  return { ...session, wakeups: session.wakeups + 1 };
}

/** A `wait` call begins, or (undefined) is over. */
export function withWait(session: Session, wait: ActiveWait | undefined): Session {
  const { activeWait: _old, ...rest } = session;
  return wait ? { ...rest, activeWait: wait } : rest;
}

/** The wait in progress (if any) ends early, `by` this (the first reason counts). */
export function waitInterrupted(session: Session, by: WaitEnd): Session {
  const wait = session.activeWait;
  if (!wait || wait.endedBy !== undefined) return session;
  return { ...session, activeWait: { ...wait, endedBy: by } };
}

/** Events up to `count` went with this run's last model call. */
export function withEventsSent(session: Session, count: number): Session {
  return { ...session, sentEvents: count };
}

/** The host has been asked to stop the conversation's processes (`due`: or must be, after a pause --now). */
export function withProcessesStopDue(session: Session, due: boolean): Session {
  const { processesStopDue: _old, ...rest } = session;
  return due ? { ...rest, processesStopDue: true } : rest;
}

/** The actions waiting for approve / reject (empty when none). */
export function waitingActions(confirmation: Confirmation | undefined): readonly ActionEvent[] {
  return confirmation?.actions ?? [];
}

/** One line for the status event: what needs approval. */
export function confirmationText(confirmation: Confirmation | undefined): string {
  const actions = waitingActions(confirmation);
  return `${actions.length} action(s) need approval: ${actions.map((a) => `${a.tool} ${summarizeArgs(a.arguments)}`).join('; ')}`;
}

/** These actions now wait for approve / reject (no answer yet). */
export function withConfirmationOpen(session: Session, actions: readonly ActionEvent[]): Session {
  return { ...session, confirmation: { actions } };
}

/** The user's answer to the actions waiting (kept even when none wait: opening them again drops it). */
export function withDecision(session: Session, decision: Decision): Session {
  return { ...session, confirmation: { actions: session.confirmation?.actions ?? [], decision } };
}

/** The wait for an answer is over: nothing waits, no answer. */
export function withConfirmationCleared(session: Session): Session {
  const { confirmation: _old, ...rest } = session;
  return rest;
}

/** A rewind to step `to` is asked for: it is pending, with the next id. */
export function withRewindAsked(session: Session, to: number): Session {
  const id = session.rewinds.lastId + 1;
  return { ...session, rewinds: { ...session.rewinds, lastId: id, pending: { id, to } } };
}

/** Rewind `id` ended (done, or why not): its answer is kept for the asker; it is no longer pending. */
export function withRewindAnswered(session: Session, id: number, result: RewindResult): Session {
  const { pending, ...rest } = session.rewinds;
  const answers = { ...rest.answers, [id]: result };
  return { ...session, rewinds: { ...rest, answers, ...(pending && pending.id !== id ? { pending } : {}) } };
}

/** The asker of rewind `id` has read its answer. */
export function withRewindTaken(session: Session, id: number): Session {
  const { [id]: _taken, ...answers } = session.rewinds.answers;
  return { ...session, rewinds: { ...session.rewinds, answers } };
}
