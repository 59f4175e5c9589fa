// One conversation's workflow run: its state (plain data, ./run-state.ts), the parts it holds (the
// log, what is in flight, the confirmation gate, open sub-agents, rewind requests, checkpoints being
// taken), and the one place where a command's result is applied: its events recorded, its effects
// carried out through the effects port (./effects.ts) once, in order. The commands themselves are
// pure (./commands.ts). Built once from the workflow input (`fromInput`), written back for the next
// run (`toCarried`), read by queries (`snapshot`).
import type {
  CarriedState,
  CheckpointEntry,
  ChildReport,
  ChildSummary,
  ConfirmationPolicy,
  ConversationEvent,
  ConversationInput,
  ConversationOptions,
  ConversationSetup,
  ConversationState,
  ConversationStatus,
  Metrics,
  ModelCallResult,
  MovedStep,
  TerminalState,
} from '../../types.js';
import { CARRIED_STATE_VERSION } from '../legacy/carried-state.js';
import type { PatchId } from '../legacy/patches.js';
import { ConversationLog, type NewEvent } from '../conversation-log.js';
import { detailsText } from '../details.js';
import type { EventRun } from '../event-log.js';
import { checkMessageText, closeSignal, pauseSignal, resumeSignal, type PauseRequest } from '../messages.js';
import { DEFAULT_SYSTEM_PROMPT, SECURITY_RISK_NOTE } from '../prompt.js';
import { CheckpointList, rewindRefusal as rewindRefusalFor, type RewindAnswer } from '../rewind-rules.js';
import type { CheckpointInfo } from '../../checkpoints/types.js';
import * as commands from './commands.js';
import type { Effect, Facts, Model, Step } from './commands.js';
import { ConfirmationGate } from './confirmation-gate.js';
import { InFlight } from './in-flight.js';
import type { EffectsPort } from './effects.js';
import * as S from './run-state.js';
import type { ActiveWait, RunState, Session, WaitEnd } from './run-state.js';
import { OpenChildren } from './open-children.js';
import { RewindRequests } from './rewind-requests.js';

/** What the run needs from its workflow (Temporal inside it; stand-ins in unit tests). */
export interface RunEnvironment {
  workflowId: string;
  runId: string;
  effects: EffectsPort;
  /** `isPatched` (a marker command): asked only where the loop always asked it. */
  patched: (id: PatchId) => boolean;
  /** Whether the deployment's target version changed (no command). */
  targetVersionChanged: () => boolean;
}

/** A conversation's workflow run: its state and what may be done to it. */
export class ConversationRun {
  readonly id: string;
  readonly input: ConversationInput;
  readonly options: ConversationOptions;
  /** The model the conversation names ('' for the worker's LLM_MODEL). */
  readonly model: string;
  readonly systemPrompt: string;
  /** How deep this conversation is among sub-agents (the root is 0). */
  readonly depth: number;
  /** The events this run holds, with the counts the loop needs kept as events are added. */
  readonly log: ConversationLog;
  readonly inFlight = new InFlight();
  readonly confirmation = new ConfirmationGate();
  /** Handles to the open sub-agents (what the parent knows of each is in the state). */
  readonly children = new OpenChildren();
  readonly rewinds = new RewindRequests();

  private current: Model;
  private readonly env: RunEnvironment;
  /** The step checkpoints being taken (one after the other), while the loop goes on. */
  private checkpointing: Promise<void> | undefined;
  private foldedCheckpoint: { step: number; info: CheckpointInfo } | undefined;

  private constructor(input: ConversationInput, env: RunEnvironment) {
    const { options } = input;
    this.env = env;
    this.input = input;
    this.options = options;
    this.id = env.workflowId;
    this.model = options.agent.llm.model ?? '';
    this.systemPrompt =
      (options.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT) + (options.confirmationPolicy === 'never' ? '' : `\n${SECURITY_RISK_NOTE}`);
    this.depth = options.parent?.depth ?? 0;
    this.log = new ConversationLog(input.carried?.events ?? []);
    this.current = { state: S.initialState(input, env.runId, this.log.count), session: S.initialSession(input) };
  }

  /** The run for this workflow input (a new conversation, or one continued as new). */
  static fromInput(input: ConversationInput, env: RunEnvironment): ConversationRun {
    return new ConversationRun(input, env);
  }

  // ---- applying a command ----

  /** What the commands read from the held parts. */
  private facts(): Facts {
    return {
      pendingMessages: this.pendingMessages(),
      pendingActions: this.confirmation.pending.length,
      confirmationText: this.confirmation.describe(),
      waitingForHost: this.inFlight.waitingForHost,
      hasParent: this.options.parent !== undefined,
      patched: this.env.patched,
    };
  }

  /** Runs a pure command on the current state and applies what it returned. */
  private exec<T>(command: (m: Model, facts: Facts) => Step<T>): T {
    const step = command(this.current, this.facts());
    this.current = { state: step.state, session: step.session };
    for (const event of step.events) this.append(event);
    this.flush(step.effects);
    this.announce();
    return step.value;
  }

  private announced = '';

  /** Tells followers (through the worker, not the history) what the conversation now has, if it changed. */
  announce(): void {
    const notice = {
      events: this.log.count,
      status: this.status,
      runNumber: this.runNumber,
      ...(this.closeRequested || this.draining ? { closing: true } : {}),
    };
    const key = `${notice.events}/${notice.status}/${notice.runNumber}/${notice.closing === true}`;
    if (key === this.announced) return;
    this.announced = key;
    this.env.effects.changed?.(notice);
  }

  /** Carries out effects in their order (each upsert and signal is a command replay checks); the details once, last. */
  private flush(effects: readonly Effect[]): void {
    let details = false;
    for (const effect of effects) {
      switch (effect.kind) {
        case 'status-attribute':
          this.env.effects.searchAttributes({ status: effect.status });
          break;
        case 'details':
          details = true;
          break;
        case 'report-to-parent':
          if (this.options.parent)
            this.env.effects.signalParent(this.options.parent.id, { id: this.id, status: effect.status, cost: effect.cost });
          break;
        case 'cancel-model':
          this.inFlight.cancelModel();
          break;
        case 'cancel-tool':
          this.inFlight.cancelTool(effect.interrupt);
          break;
        case 'tell-children': {
          if (effect.signal === 'pause') {
            const request = effect.request;
            this.children.tell((child) => child.signal(pauseSignal, request));
          } else this.children.tell((child) => child.signal(effect.signal === 'close' ? closeSignal : resumeSignal));
          break;
        }
        case 'answer-confirmation':
          this.confirmation.answer(effect.decision);
          break;
        case 'fail-rewind': {
          const pending = this.rewinds.pending;
          if (pending) this.rewinds.answer(pending.id, { error: effect.error });
          break;
        }
      }
    }
    if (details) this.publishDetails();
  }

  /** Replaces the state with a bookkeeping change of run-state.ts (no event, no effect). */
  private update(change: (state: RunState) => RunState): void {
    this.current = { ...this.current, state: change(this.current.state) };
  }

  private updateSession(change: (session: Session) => Session): void {
    this.current = { ...this.current, session: change(this.current.session) };
  }

  // ---- reading ----

  /** The state as plain data (what `toCarried` writes, without the events). */
  get state(): RunState {
    return this.current.state;
  }
  get status(): ConversationStatus {
    return this.current.state.status;
  }
  get iterations(): number {
    return this.current.state.iterations;
  }
  get runNumber(): number {
    return this.current.state.runNumber;
  }
  get metrics(): Metrics {
    return this.current.state.metrics;
  }
  get runCost(): number {
    return this.current.state.runCost;
  }
  get setup(): ConversationSetup | undefined {
    return this.current.state.setup;
  }
  /** Which run recorded which events: earlier runs answer for the events this one no longer holds. */
  get runs(): readonly EventRun[] {
    return this.current.state.runs;
  }
  get closeRequested(): boolean {
    return this.current.session.closeRequested;
  }
  get wakeups(): number {
    return this.current.session.wakeups;
  }
  get draining(): boolean {
    return this.current.session.draining;
  }
  get steps(): number {
    return this.current.state.steps;
  }
  get forkMade(): boolean {
    return this.current.state.forkMade === true;
  }
  /** Every sub-agent so far, as the parent sees it. */
  get childList(): readonly ChildSummary[] {
    return this.current.state.children;
  }
  /** One checkpoint of the workspace per step. */
  get checkpoints(): CheckpointList {
    return new CheckpointList(this.current.state.checkpoints);
  }
  /** The prompt tokens of the last model call (0 right after a condensation). */
  get lastPromptTokens(): number {
    return this.current.state.lastPromptTokens;
  }
  /** After a failed condensation: no new try before the prompt holds this many events. */
  get condenseRetryAt(): number {
    return this.current.state.condenseRetryAt;
  }
  /** Nothing new may start: the conversation is no longer running, or is closing. */
  get halted(): boolean {
    return commands.halted(this.current);
  }

  /** User messages the model has not seen yet. */
  pendingMessages(): number {
    return this.log.pendingMessages(this.current.state.modelSeenEvents);
  }

  /** The tools the model may call: the setup's, or (older conversations) the agent's names. */
  offeredTools(): string[] {
    const setup = this.current.state.setup;
    return setup ? setup.tools.map((t) => t.name) : this.options.agent.tools;
  }

  /** A tool's durable state in this conversation. */
  toolStateOf(tool: string): unknown {
    return this.current.state.toolState[tool];
  }

  terminalState(): TerminalState {
    return S.terminalOf(this.current.state, this.options.workspace);
  }

  /**
   * Sets the confirmation policy for the replies to come (actions already waiting stay waiting);
   * the options carry it on continue-as-new. Answers with the policy now in force.
   */
  setConfirmationPolicy(policy: ConfirmationPolicy): ConfirmationPolicy {
    this.options.confirmationPolicy = policy;
    return policy;
  }

  /** What the `state` query answers (and `faheem status --json` prints). */
  snapshot(): ConversationState {
    const { state, session } = this.current;
    const children = [...state.children];
    return {
      id: this.id,
      status: state.status,
      iterations: state.iterations,
      runNumber: state.runNumber,
      events: this.log.count,
      pendingMessages: this.pendingMessages(),
      metrics: children.length > 0 ? { ...state.metrics, accumulatedCost: this.treeCost() } : state.metrics,
      lastError: state.lastError,
      workspace: this.options.workspace,
      confirmationPolicy: this.options.confirmationPolicy,
      // Set on the worker only (LLM_MODEL): the model the last call says answered.
      model: this.model || state.metrics.calls?.at(-1)?.model || '',
      terminal: this.terminalState(),
      closed: session.closeRequested,
      pendingActions: this.confirmation.pendingView(),
      runCost: state.runCost,
      children,
      finalMessage: state.finalMessage,
      waitingForHost: this.inFlight.waitingForHost ? this.options.toolTaskQueue : null,
      waitingUntil: session.activeWait ? { until: session.activeWait.until, reason: session.activeWait.reason } : null,
      steps: state.steps,
      forkedFrom: state.forkedFrom ?? null,
      forkPending: this.input.fork !== undefined && !this.forkMade,
      ...(this.options.parent ? { parentId: this.options.parent.id } : {}),
      ...(this.options.pool !== undefined ? { pool: this.options.pool, host: this.options.poolHost?.host ?? null } : {}),
    };
  }

  /** This conversation's cost plus its sub-agents'. */
  treeCost(): number {
    return S.treeCost(this.current.state);
  }

  /** What the next run starts from when this one continues as new: only what the model still needs (earlier runs answer for the rest). */
  toCarried(): CarriedState {
    return { version: CARRIED_STATE_VERSION, ...S.carriedFields(this.current.state), events: this.log.compact() };
  }

  // ---- recording ----

  /** Records an event (the log gives it its index and the workflow clock's time). */
  append(event: NewEvent): ConversationEvent {
    const recorded = this.log.append(event, new Date().toISOString());
    this.updateSession(S.woken);
    this.announce();
    return recorded;
  }

  /** Something a waiting loop should look at happened (no event of its own). */
  wake(): void {
    this.updateSession(S.woken);
  }

  setStatus(next: ConversationStatus, reason?: string): void {
    this.exec((m, f) => commands.setStatus(m, f, next, reason));
  }

  /** The conversation stops with an error: `lastError`, optionally an error event, status `error`. */
  fail(message: string, options: { event: boolean }): void {
    this.exec((m, f) => commands.fail(m, f, message, options));
  }

  /** The conversation looks stuck: `lastError` says why. */
  markStuck(reason: string): void {
    this.exec((m, f) => commands.markStuck(m, f, reason));
  }

  /** The agent's answer (its reply without tool calls, or finish's message). */
  setFinalMessage(text: string): void {
    this.update((s) => S.withFinalMessage(s, text));
  }

  /** A sub-agent keeps its parent's view of it current (status and the cost of its tree). */
  reportToParent(): void {
    this.exec(commands.reportToParent);
  }

  /** The Web UI's current details for this conversation. */
  publishDetails(): void {
    const { state, session } = this.current;
    this.env.effects.details(
      detailsText({
        status: state.status,
        lastError: state.lastError,
        iterations: state.iterations,
        maxIterations: this.options.maxIterations,
        runNumber: state.runNumber,
        lastAction: this.log.lastAction,
        waitingForHost: this.inFlight.waitingForHost ? this.options.toolTaskQueue : null,
        waitingUntil: session.activeWait,
        pendingMessages: this.pendingMessages(),
        children: state.children,
        parentId: this.options.parent?.id,
        metrics: state.metrics,
      }),
    );
  }

  // ---- the model and tools ----

  /**
   * The events since the last model call, if small (they travel with the call), and marks
   * everything up to now as sent.
   */
  takeRecentEvents(): { seen: number; recent: ReturnType<ConversationLog['recent']> } {
    const seen = this.log.count;
    const recent = this.log.recent(this.current.session.sentEvents ?? this.current.state.modelSeenEvents, seen);
    this.updateSession((s) => S.eventsSent(s, seen));
    return { seen, recent };
  }

  /** The model answered a call made with the first `seen` events. */
  modelSaw(seen: number): void {
    this.update((s) => S.modelSaw(s, seen));
  }

  /** One more model call of this run: counters, usage and cost. */
  recordReply(reply: ModelCallResult): void {
    this.update((s) => S.recordReply(s, reply));
  }

  /** A condensation's usage (it is not a step). */
  recordCondensation(result: Pick<ModelCallResult, 'cost' | 'usage' | 'latencyMs'>): void {
    this.update((s) => S.recordCondensation(s, result));
  }

  /** A condensation failed: no new try before the prompt holds `at` events. */
  condenseLater(at: number): void {
    this.update((s) => S.condenseLater(s, at));
  }

  /** A sub-agent started (its summary says running). */
  childStarted(child: ChildSummary): void {
    this.update((s) => S.childStarted(s, child));
  }

  /** A sub-agent's summary changed (it ended, or failed to start). */
  childUpdated(id: string, change: Partial<Pick<ChildSummary, 'status' | 'cost'>>): void {
    this.update((s) => S.childUpdated(s, id, change));
  }

  /** A sub-agent's work counts against this run's iterations and budget. */
  addChildWork(iterations: number, cost: number): void {
    this.update((s) => S.addChildWork(s, iterations, cost));
  }

  /** The workspace host's setup (a new version each time it is made). */
  setSetup(next: Omit<ConversationSetup, 'version'>): void {
    this.update((s) => S.withSetup(s, next));
  }

  setToolState(tool: string, state: unknown): void {
    this.update((s) => S.withToolState(s, tool, state));
  }

  /** A `wait` call begins; the handlers end it early (see waitEndedBy). */
  beginWait(until: string, reason: string): void {
    this.updateSession((s) => S.withWait(s, { until, reason }));
    this.publishDetails();
  }

  /** What ended the `wait` in progress early, if anything has. */
  get waitEndedBy(): WaitEnd | undefined {
    return this.current.session.activeWait?.endedBy;
  }

  /** The `wait` in progress, if any. */
  get activeWait(): ActiveWait | undefined {
    return this.current.session.activeWait;
  }

  /** The `wait` call is over. */
  endWait(): void {
    this.updateSession((s) => S.withWait(s, undefined));
    this.publishDetails();
  }

  // ---- hooks ----

  /** SessionStart hooks run once a run. */
  sessionStartDue(): boolean {
    return S.sessionStartDue(this.current.state);
  }
  markSessionStarted(): void {
    this.update(S.markSessionStarted);
  }
  /** Whether a Stop hook already made the agent go on in this run (Claude Code's stop_hook_active). */
  get stopHookActive(): boolean {
    return S.stopHookActive(this.current.state);
  }
  markStopHookActive(): void {
    this.update(S.markStopHookActive);
  }

  /** User messages the model has not seen and UserPromptSubmit hooks have not checked (each is checked once). */
  uncheckedPrompts(): { index: number; text: string }[] {
    const { state } = this.current;
    const from = Math.max(state.modelSeenEvents, state.hooks.checkedPromptsUpTo);
    const out: { index: number; text: string }[] = [];
    for (const e of this.log.from(from)) if (e.kind === 'message' && e.source === 'user') out.push({ index: e.index, text: e.text });
    const count = this.log.count;
    this.update((s) => S.promptsCheckedUpTo(s, count));
    return out;
  }

  // ---- time travel ----

  /** Records step `step`'s checkpoint (an event, and the list rewinds and forks read). */
  recordCheckpoint(step: number, c: { commit?: string; added: number; changed: number; deleted: number }): void {
    const event = this.append({ kind: 'checkpoint', source: 'environment', step, ...c });
    this.update((s) => S.recordCheckpoint(s, step, { index: event.index, time: event.timestamp }, c));
  }

  /** Why a rewind to `step` cannot be asked for now, or undefined. */
  rewindRefusal(step: unknown): string | undefined {
    if (this.rewinds.pending) return 'a rewind is already in progress';
    if (this.current.session.draining) return 'the conversation is ending; fork it instead (`faheem fork ID --at N`)';
    return rewindRefusalFor(step, this.checkpoints, this.current.session.closeRequested);
  }

  /**
   * Asks for a rewind to `step`: what is running stops (as a pause --now), actions waiting for
   * confirmation are rejected, sub-agents close; the loop then carries it out (performRewind).
   */
  requestRewind(step: number): number {
    const id = this.rewinds.request(step);
    this.exec((m, f) => commands.rewind(m, f, step));
    return id;
  }

  /** The workspace was put back to `entry`'s checkpoint: the later steps leave the prompt, the conversation is paused. */
  applyRewind(entry: CheckpointEntry, before: string, notUndone: string): RewindAnswer {
    const commit = entry.commit as string;
    const dropFrom = entry.index + 1;
    const dropTo = this.log.count;
    this.append({ kind: 'rewind', source: 'user', toStep: entry.step, commit, before, dropFrom, dropTo, notUndone });
    this.update((s) => S.rewoundTo(s, entry, this.options.workspace));
    if (this.status !== 'paused') this.setStatus('paused', `rewound to step ${entry.step}`);
    this.publishDetails();
    return { toStep: entry.step, commit, before, dropped: dropTo - dropFrom };
  }

  /**
   * Queues a step's checkpoint behind the one in flight, if any (a step that reuses the previous
   * commit must see it). It runs while the next model call does; `checkpointsSettled` is awaited
   * before anything that needs it (the next reply's events, a rewind, the end of the run).
   */
  queueCheckpoint(work: () => Promise<void>): void {
    const started = this.checkpointing ? this.checkpointing.then(work) : work();
    const tracked: Promise<void> = started.then(() => {
      if (this.checkpointing === tracked) this.checkpointing = undefined;
    });
    this.checkpointing = tracked;
  }

  /**
   * A step's checkpoint that came back with its last host call (see workspace-checkpoints.ts): kept until
   * the turn records it.
   */
  noteFoldedCheckpoint(step: number, info: CheckpointInfo): void {
    this.foldedCheckpoint = { step, info };
  }

  /** The checkpoint that came with step `step`'s last host call, if any (taken: asked once). */
  takeFoldedCheckpoint(step: number): CheckpointInfo | undefined {
    const folded = this.foldedCheckpoint;
    this.foldedCheckpoint = undefined;
    return folded?.step === step ? folded.info : undefined;
  }

  /** A checkpoint is still being taken. */
  get checkpointPending(): boolean {
    return this.checkpointing !== undefined;
  }

  /** Resolves once every queued checkpoint is recorded. */
  async checkpointsSettled(): Promise<void> {
    while (this.checkpointing) await this.checkpointing;
  }

  /** A fork's workspace has been made: an event says so (and wakes whoever waits for it). */
  markForkMade(workspace: string): void {
    this.update(S.forkMade);
    const origin = this.current.state.forkedFrom;
    const reason = `forked from ${origin?.id ?? '?'} at step ${origin?.step ?? '?'}: workspace ${workspace} ready`;
    this.append({ kind: 'status', source: 'environment', status: this.status, reason });
    this.publishDetails();
  }

  // ---- what users (and parents) can do ----

  /** A user message as the workflow accepts it; throws with the reason otherwise. */
  validateMessage(text: unknown): string {
    const checked = checkMessageText(text);
    if (this.closeRequested) throw new Error('the conversation is closed');
    return checked;
  }

  /** Adds a user message (kept while paused, folded in before the next model call); its index. */
  addMessage(text: string): number {
    // The message is the command's first event (a status change may follow it: finished -> idle).
    const index = this.log.count;
    this.exec((m, f) => commands.message(m, f, text));
    return index;
  }

  /** A message signal: added, or an error event saying why not (a signal has no answer). */
  receiveMessage(text: unknown): void {
    let checked: string;
    try {
      checked = this.validateMessage(text);
    } catch (err) {
      this.exec((m, f) => commands.messageRefused(m, f, (err as Error).message));
      return;
    }
    this.addMessage(checked);
  }

  /** Pause: nothing new starts; the model call in flight is cancelled; `now` also interrupts the command. */
  pause(request: PauseRequest = {}): void {
    this.exec((m, f) => commands.pause(m, f, request));
  }

  /** The seed's `run()`: start a run, resume, or (waiting for confirmation) approve. */
  run(): void {
    this.exec(commands.run);
  }

  /** The resume signal: like run(), except that it never approves actions waiting for confirmation. */
  resume(): void {
    this.exec(commands.resume);
  }

  /** Approve or reject the actions waiting for confirmation; how many there were. */
  decide(answer: { approved: boolean; reason?: string }): number {
    return this.exec((m, f) => commands.decide(m, f, answer));
  }

  /** `faheem deploy drain` asked this conversation to move to the deployment's current version. */
  askMove(): void {
    this.exec(commands.askMove);
  }

  /** Whether a drain asked this conversation to move (the loop then checks the target version). */
  get moveAsked(): boolean {
    return this.current.session.moveAsked;
  }

  /** A drain asked and the target version changed: a wait or an approval should stop and move (no command). */
  moveWanted(): boolean {
    return this.current.session.moveAsked && this.env.targetVersionChanged();
  }

  /** The step under way stops here and moves with the conversation (carried to the next run). */
  carryStep(step: MovedStep): void {
    this.update((s) => S.withMovedStep(s, step));
  }

  /** The step this run must stop for (set by carryStep) — the turn ends without finishing it. */
  get movingStep(): MovedStep | undefined {
    return this.current.state.movedStep;
  }

  /** The step carried in from the previous version, once (the new run finishes it first). */
  takeMovedStep(): MovedStep | undefined {
    const step = this.current.state.movedStep;
    this.update((s) => S.withMovedStep(s, undefined));
    return step;
  }

  /** End the conversation: what is in flight is cancelled, sub-agents close too. */
  close(): void {
    const pending = this.rewinds.pending !== undefined;
    this.exec((m, f) => commands.close(m, f, pending));
  }

  /** A sub-agent reported its status and cost. */
  childReported(report: ChildReport): void {
    const next = S.childReport(this.current.state, report);
    if (!next) return;
    this.update(() => next);
    this.publishDetails();
    this.wake();
  }

  // ---- the run's start and end ----

  /** A new conversation's start: search attributes, the first message, run, a pause that came with the start. */
  begin(): void {
    if (!this.input.carried) {
      this.env.effects.searchAttributes({ status: this.status, model: this.model || 'default' });
      for (const step of commands.startSteps(this.input, checkMessageText)) this.exec(step);
      this.exec(commands.pauseAtStart);
      this.publishDetails();
    }
    this.updateSession((s) => ({ ...s, started: true }));
  }

  /** The run is ending: waiting clients are answered now (they ask the next run). */
  drain(): void {
    this.updateSession((s) => ({ ...s, draining: true }));
    this.announce();
    // A rewind asked for as the run ends is not carried out: say so to whoever waits for it.
    const pending = this.rewinds.pending;
    if (pending)
      this.rewinds.answer(pending.id, { error: 'the conversation stopped (idle timeout, sub-agent done or closing) before the rewind' });
  }
}
