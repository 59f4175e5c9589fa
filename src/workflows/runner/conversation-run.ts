// The state of one conversation's workflow run, and the only way to change it. Built once from the
// workflow input (`fromInput`), written back for the next run (`toCarried`), read by queries
// (`snapshot`). Handlers and the loop call its methods; the parts with a state of their own
// (confirmation, sub-agents, condensation, interruptions) are objects it holds.
import {
  getExternalWorkflowHandle,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
  type CancellationScope,
} from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE } from '../../failure-types.js';
import {
  emptyMetrics,
  type CarriedState,
  type CheckpointEntry,
  type ConfirmationPolicy,
  type ForkOrigin,
  type ChildReport,
  type ConversationEvent,
  type ConversationInput,
  type ConversationOptions,
  type ConversationSetup,
  type ConversationState,
  type ConversationStatus,
  type Metrics,
  type ModelCallResult,
  type MovedStep,
  type TerminalState,
} from '../../types.js';
import { CARRIED_STATE_VERSION, migrateCarried } from '../legacy/carried-state.js';
import { isPatched } from '../legacy/patches.js';
import { targetVersionChanged } from './versioning.js';
import { ConversationLog, type NewEvent } from '../conversation-log.js';
import { detailsText } from '../details.js';
import type { EventRun } from '../event-log.js';
import {
  ConversationModelKey,
  ConversationStatusKey,
  checkMessageText,
  childStatusSignal,
  closeSignal,
  pauseSignal,
  resumeSignal,
  type PauseRequest,
} from '../messages.js';
import { DEFAULT_SYSTEM_PROMPT, SECURITY_RISK_NOTE } from '../prompt.js';
import { addUsage } from '../reply.js';
import { pauseOutcome, runOutcome, statusAfterMessage } from '../status.js';
import { CheckpointList, rewindRefusal as rewindRefusalFor, type RewindAnswer } from '../time-travel.js';
import type { CheckpointInfo } from '../../checkpoints/types.js';
import { ConfirmationGate } from './confirmation-gate.js';
import { Condenser } from './condenser.js';
import type { ActiveWait, WaitEnd } from './durable-wait.js';
import { SubAgents } from './sub-agents.js';

/** The cancellation scopes of what is in flight, so a pause or close can reach it. */
export class InFlight {
  /** The model call, condensation or setup in flight. */
  model: CancellationScope | undefined;
  /** The host tool call in flight. */
  tool: CancellationScope | undefined;
  /** A `pause --now` asked to interrupt the tool call in flight. */
  interruptRequested = false;
  /** No worker on the workspace host's queue has picked up the call in flight for a while. */
  waitingForHost = false;
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
  /** Which run recorded which events: earlier runs answer for the events this one no longer holds. */
  readonly runs: EventRun[];
  readonly inFlight = new InFlight();
  readonly confirmation = new ConfirmationGate();
  readonly children: SubAgents;
  readonly condenser: Condenser;
  /** One checkpoint of the workspace per step. */
  readonly checkpoints: CheckpointList;
  readonly rewinds = new RewindRequests();

  private statusValue: ConversationStatus;
  private iterationsValue: number;
  private runNumberValue: number;
  private metricsValue: Metrics;
  private lastErrorValue: string | null;
  /** Each tool's durable state (the terminal's cwd and variables, the task list), by tool name. */
  private readonly toolState: Record<string, unknown>;
  /** Events the model has seen: user messages after this point are "pending". */
  private modelSeenEvents: number;
  /** Events up to here went with this run's last model call (its worker likely caches them). */
  private sentEvents: number | undefined;
  private runCostValue: number;
  /** What the workspace host offered when the conversation first ran: tools and AGENTS.md. */
  private setupValue: ConversationSetup | undefined;
  private finalMessage: string | null;
  private closeRequestedValue = false;
  /** Bumped by every change a waiting loop should look at. */
  private wakeupsValue = 0;
  /** The run is ending (completing or continuing as new): waits answer at once. */
  private drainingValue = false;
  /** Before `begin()` has run, a pause is kept for it (see pause()). */
  private started: boolean;
  private pauseAtStart: PauseRequest | undefined;
  /** The `wait` call in progress, if any. */
  private activeWait: ActiveWait | undefined;
  private moveAskedValue = false;
  /** The step under way when the run stopped to move to a new version (carried), or carried in from one. */
  private movedStepValue: MovedStep | undefined;
  /** The run whose SessionStart hooks have run; whether a Stop hook blocked in this run; user messages hooks have checked. */
  private sessionStartedRun: number;
  private stopHookRun: number;
  private checkedPromptsUpTo: number;
  /** Steps (model replies) over the whole conversation; a rewind goes back to its step. */
  private stepsValue: number;
  private readonly forkedFrom: ForkOrigin | undefined;
  private forkMadeValue: boolean;
  /** The step checkpoints being taken (one after the other), while the loop goes on. */
  private checkpointing: Promise<void> | undefined;
  private foldedCheckpoint: { step: number; info: CheckpointInfo } | undefined;

  private constructor(input: ConversationInput) {
    const { options } = input;
    const carried = input.carried ? migrateCarried(input.carried, options.workspace) : undefined;
    this.input = input;
    this.options = options;
    this.id = workflowInfo().workflowId;
    this.model = options.agent.llm.model ?? '';
    this.systemPrompt =
      (options.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT) + (options.confirmationPolicy === 'never' ? '' : `\n${SECURITY_RISK_NOTE}`);
    this.depth = options.parent?.depth ?? 0;
    this.log = new ConversationLog(carried?.events ?? []);
    // A fork's first run holds the events it was given (0..N) itself.
    const from = input.fork && !carried?.runs?.length ? 0 : this.log.count;
    this.runs = [...(carried?.runs ?? []), { runId: workflowInfo().runId, from }];
    this.statusValue = carried?.status ?? 'idle';
    this.movedStepValue = carried?.movedStep;
    this.iterationsValue = carried?.iterations ?? 0;
    this.runNumberValue = carried?.runNumber ?? 0;
    this.metricsValue = carried?.metrics ?? emptyMetrics();
    this.lastErrorValue = carried?.lastError ?? null;
    this.toolState = carried?.toolState ?? { terminal: { cwd: options.workspace, env: {} } };
    this.modelSeenEvents = carried?.modelSeenEvents ?? 0;
    this.runCostValue = carried?.runCost ?? 0;
    this.setupValue = carried?.setup;
    this.finalMessage = carried?.finalMessage ?? null;
    this.started = carried !== undefined;
    this.children = new SubAgents(carried?.children ?? [], carried?.childCount ?? 0);
    this.condenser = new Condenser(carried?.lastPromptTokens ?? 0, carried?.condenseRetryAt ?? 0);
    this.stepsValue = carried?.steps ?? 0;
    this.checkpoints = new CheckpointList(carried?.checkpoints ?? []);
    this.forkedFrom = carried?.forkedFrom ?? input.fork?.origin;
    this.forkMadeValue = carried?.forkMade ?? false;
    this.sessionStartedRun = carried?.hooks?.sessionStartedRun ?? -1;
    this.stopHookRun = carried?.hooks?.stopHookRun ?? -1;
    this.checkedPromptsUpTo = carried?.hooks?.checkedPromptsUpTo ?? 0;
  }

  /** The run for this workflow input (a new conversation, or one continued as new). */
  static fromInput(input: ConversationInput): ConversationRun {
    return new ConversationRun(input);
  }

  // ---- reading ----

  get status(): ConversationStatus {
    return this.statusValue;
  }
  get iterations(): number {
    return this.iterationsValue;
  }
  get runNumber(): number {
    return this.runNumberValue;
  }
  get metrics(): Metrics {
    return this.metricsValue;
  }
  get runCost(): number {
    return this.runCostValue;
  }
  get setup(): ConversationSetup | undefined {
    return this.setupValue;
  }
  get closeRequested(): boolean {
    return this.closeRequestedValue;
  }
  get wakeups(): number {
    return this.wakeupsValue;
  }
  get draining(): boolean {
    return this.drainingValue;
  }
  get steps(): number {
    return this.stepsValue;
  }
  get forkMade(): boolean {
    return this.forkMadeValue;
  }
  /** Nothing new may start: the conversation is no longer running, or is closing. */
  get halted(): boolean {
    return this.statusValue !== 'running' || this.closeRequestedValue;
  }

  /** User messages the model has not seen yet. */
  pendingMessages(): number {
    return this.log.pendingMessages(this.modelSeenEvents);
  }

  /** The tools the model may call: the setup's, or (older conversations) the agent's names. */
  offeredTools(): string[] {
    return this.setupValue ? this.setupValue.tools.map((t) => t.name) : this.options.agent.tools;
  }

  /** A tool's durable state in this conversation. */
  toolStateOf(tool: string): unknown {
    return this.toolState[tool];
  }

  terminalState(): TerminalState {
    return (this.toolState.terminal as TerminalState | undefined) ?? { cwd: this.options.workspace, env: {} };
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
    const children = this.children.list;
    return {
      id: this.id,
      status: this.statusValue,
      iterations: this.iterationsValue,
      runNumber: this.runNumberValue,
      events: this.log.count,
      pendingMessages: this.pendingMessages(),
      metrics: children.length > 0 ? { ...this.metricsValue, accumulatedCost: this.treeCost() } : this.metricsValue,
      lastError: this.lastErrorValue,
      workspace: this.options.workspace,
      confirmationPolicy: this.options.confirmationPolicy,
      // Set on the worker only (LLM_MODEL): the model the last call says answered.
      model: this.model || this.metricsValue.calls?.at(-1)?.model || '',
      terminal: this.terminalState(),
      closed: this.closeRequestedValue,
      pendingActions: this.confirmation.pendingView(),
      runCost: this.runCostValue,
      children,
      finalMessage: this.finalMessage,
      waitingForHost: this.inFlight.waitingForHost ? this.options.toolTaskQueue : null,
      waitingUntil: this.activeWait ? { until: this.activeWait.until, reason: this.activeWait.reason } : null,
      steps: this.stepsValue,
      forkedFrom: this.forkedFrom ?? null,
      forkPending: this.input.fork !== undefined && !this.forkMadeValue,
      ...(this.options.parent ? { parentId: this.options.parent.id } : {}),
    };
  }

  /** This conversation's cost plus its sub-agents'. */
  treeCost(): number {
    return this.children.cost(this.metricsValue.accumulatedCost);
  }

  /** What the next run starts from when this one continues as new: only what the model still needs. */
  toCarried(): CarriedState {
    return {
      version: CARRIED_STATE_VERSION,
      // Earlier runs answer for the rest (see EventLog).
      events: this.log.compact(),
      runs: this.runs,
      status: this.statusValue,
      iterations: this.iterationsValue,
      runNumber: this.runNumberValue,
      metrics: this.metricsValue,
      lastError: this.lastErrorValue,
      modelSeenEvents: this.modelSeenEvents,
      runCost: this.runCostValue,
      toolState: this.toolState,
      ...(this.setupValue ? { setup: this.setupValue } : {}),
      lastPromptTokens: this.condenser.lastPromptTokens,
      condenseRetryAt: this.condenser.retryAt,
      children: this.children.list,
      childCount: this.children.count,
      finalMessage: this.finalMessage,
      steps: this.stepsValue,
      checkpoints: this.checkpoints.toJSON(),
      ...(this.forkedFrom ? { forkedFrom: this.forkedFrom, forkMade: this.forkMadeValue } : {}),
      hooks: { sessionStartedRun: this.sessionStartedRun, stopHookRun: this.stopHookRun, checkedPromptsUpTo: this.checkedPromptsUpTo },
      ...(this.movedStepValue ? { movedStep: this.movedStepValue } : {}),
    };
  }

  // ---- recording ----

  /** Records an event (the log gives it its index and the workflow clock's time). */
  append(event: NewEvent): ConversationEvent {
    const recorded = this.log.append(event, new Date().toISOString());
    this.wakeupsValue++;
    return recorded;
  }

  /** Something a waiting loop should look at happened (no event of its own). */
  wake(): void {
    this.wakeupsValue++;
  }

  setStatus(next: ConversationStatus, reason?: string): void {
    if (next === this.statusValue) return;
    this.statusValue = next;
    this.append({ kind: 'status', source: 'environment', status: next, ...(reason ? { reason } : {}) });
    upsertSearchAttributes([{ key: ConversationStatusKey, value: next }]);
    this.publishDetails();
    this.reportToParent();
  }

  /** The conversation stops with an error: `lastError`, optionally an error event, status `error`. */
  fail(message: string, options: { event: boolean }): void {
    this.lastErrorValue = message;
    if (options.event) this.append({ kind: 'error', source: 'environment', message });
    this.setStatus('error', message);
  }

  /** The conversation looks stuck: `lastError` says why. */
  markStuck(reason: string): void {
    this.lastErrorValue = reason;
    this.setStatus('stuck', reason);
  }

  /** The agent's answer (its reply without tool calls, or finish's message). */
  setFinalMessage(text: string): void {
    this.finalMessage = text;
  }

  /** A sub-agent keeps its parent's view of it current (status and the cost of its tree). */
  reportToParent(): void {
    const parent = this.options.parent;
    if (!parent) return;
    const report: ChildReport = { id: this.id, status: this.statusValue, cost: this.treeCost() };
    // The parent may have closed meanwhile: nothing to tell then.
    getExternalWorkflowHandle(parent.id)
      .signal(childStatusSignal, report)
      .catch(() => undefined);
  }

  /** The Web UI's current details for this conversation. */
  publishDetails(): void {
    setCurrentDetails(
      detailsText({
        status: this.statusValue,
        lastError: this.lastErrorValue,
        iterations: this.iterationsValue,
        maxIterations: this.options.maxIterations,
        runNumber: this.runNumberValue,
        lastAction: this.log.lastAction,
        waitingForHost: this.inFlight.waitingForHost ? this.options.toolTaskQueue : null,
        waitingUntil: this.activeWait,
        pendingMessages: this.pendingMessages(),
        children: this.children.list,
        parentId: this.options.parent?.id,
        metrics: this.metricsValue,
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
    const recent = this.log.recent(this.sentEvents ?? this.modelSeenEvents, seen);
    this.sentEvents = seen;
    return { seen, recent };
  }

  /** The model answered a call made with the first `seen` events. */
  modelSaw(seen: number): void {
    this.modelSeenEvents = seen;
  }

  /** One more model call of this run: counters, usage and cost. */
  recordReply(reply: ModelCallResult): void {
    this.condenser.lastPromptTokens = reply.usage.promptTokens;
    this.iterationsValue++;
    this.stepsValue++;
    this.metricsValue = addUsage(this.metricsValue, reply, this.iterationsValue, 'step');
    this.runCostValue += reply.cost;
  }

  /** A condensation's usage (it is not a step). */
  recordCondensation(result: Pick<ModelCallResult, 'cost' | 'usage' | 'latencyMs'>): void {
    this.metricsValue = addUsage(this.metricsValue, result, this.iterationsValue, 'condense');
    this.condenser.lastPromptTokens = 0;
  }

  /** A sub-agent's work counts against this run's iterations and budget. */
  addChildWork(iterations: number, cost: number): void {
    this.iterationsValue += iterations;
    this.runCostValue += cost;
  }

  /** The workspace host's setup (a new version each time it is made). */
  setSetup(next: Omit<ConversationSetup, 'version'>): void {
    this.setupValue = { version: (this.setupValue?.version ?? 0) + 1, ...next };
  }

  setToolState(tool: string, state: unknown): void {
    this.toolState[tool] = state;
  }

  /** A `wait` call begins; the handlers end it early (see interruptWait). */
  beginWait(until: string, reason: string): ActiveWait {
    this.activeWait = { until, reason };
    this.publishDetails();
    return this.activeWait;
  }

  /** The `wait` call is over. */
  endWait(): void {
    this.activeWait = undefined;
    this.publishDetails();
  }

  private interruptWait(by: WaitEnd): void {
    if (this.activeWait && this.activeWait.endedBy === undefined) this.activeWait.endedBy = by;
  }

  // ---- hooks ----

  /** SessionStart hooks run once a run. */
  sessionStartDue(): boolean {
    return this.sessionStartedRun !== this.runNumberValue;
  }
  markSessionStarted(): void {
    this.sessionStartedRun = this.runNumberValue;
  }
  /** Whether a Stop hook already made the agent go on in this run (Claude Code's stop_hook_active). */
  get stopHookActive(): boolean {
    return this.stopHookRun === this.runNumberValue;
  }
  markStopHookActive(): void {
    this.stopHookRun = this.runNumberValue;
  }

  /** User messages the model has not seen and UserPromptSubmit hooks have not checked (each is checked once). */
  uncheckedPrompts(): { index: number; text: string }[] {
    const from = Math.max(this.modelSeenEvents, this.checkedPromptsUpTo);
    const out: { index: number; text: string }[] = [];
    for (const e of this.log.from(from)) if (e.kind === 'message' && e.source === 'user') out.push({ index: e.index, text: e.text });
    this.checkedPromptsUpTo = this.log.count;
    return out;
  }

  // ---- time travel ----

  /** Records step `step`'s checkpoint (an event, and the list rewinds and forks read). */
  recordCheckpoint(step: number, c: { commit?: string; added: number; changed: number; deleted: number }): void {
    const event = this.append({ kind: 'checkpoint', source: 'environment', step, ...c });
    const entry: CheckpointEntry = {
      step,
      index: event.index,
      time: event.timestamp,
      ...c,
      toolState: JSON.parse(JSON.stringify(this.toolState)) as Record<string, unknown>,
    };
    this.checkpoints.add(entry);
  }

  /** Why a rewind to `step` cannot be asked for now, or undefined. */
  rewindRefusal(step: unknown): string | undefined {
    if (this.rewinds.pending) return 'a rewind is already in progress';
    if (this.drainingValue) return 'the conversation is ending; fork it instead (`faheem fork ID --at N`)';
    return rewindRefusalFor(step, this.checkpoints, this.closeRequestedValue);
  }

  /**
   * Asks for a rewind to `step`: what is running stops (as a pause --now), actions waiting for
   * confirmation are rejected, sub-agents close; the loop then carries it out (performRewind).
   */
  requestRewind(step: number): number {
    const id = this.rewinds.request(step);
    if (this.statusValue === 'waiting_for_confirmation')
      this.decide({ approved: false, reason: `the conversation is being rewound to step ${step}` });
    this.pause({ now: true, reason: `rewind to step ${step}` });
    this.children.tell((child) => child.signal(closeSignal));
    this.wakeupsValue++;
    return id;
  }

  /** The workspace was put back to `entry`'s checkpoint: the later steps leave the prompt, the conversation is paused. */
  applyRewind(entry: CheckpointEntry, before: string, notUndone: string): RewindAnswer {
    const commit = entry.commit as string;
    const dropFrom = entry.index + 1;
    const dropTo = this.log.count;
    this.append({ kind: 'rewind', source: 'user', toStep: entry.step, commit, before, dropFrom, dropTo, notUndone });
    this.stepsValue = entry.step;
    this.checkpoints.rewindTo(entry.step);
    // The tools' state as after that step; a command that was running has ended.
    const state = entry.toolState ?? { terminal: { cwd: this.options.workspace, env: {} } };
    for (const key of Object.keys(this.toolState)) delete this.toolState[key];
    Object.assign(this.toolState, JSON.parse(JSON.stringify(state)) as Record<string, unknown>);
    const terminal = this.toolState.terminal as TerminalState | undefined;
    if (terminal?.running) delete terminal.running;
    this.lastErrorValue = null;
    if (this.statusValue !== 'paused') this.setStatus('paused', `rewound to step ${entry.step}`);
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
   * A step's checkpoint that came back with its last host call (see time-travel.ts): kept until
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
    this.forkMadeValue = true;
    const origin = this.forkedFrom;
    const reason = `forked from ${origin?.id ?? '?'} at step ${origin?.step ?? '?'}: workspace ${workspace} ready`;
    this.append({ kind: 'status', source: 'environment', status: this.statusValue, reason });
    this.publishDetails();
  }

  // ---- what users (and parents) can do ----

  /** A user message as the workflow accepts it; throws with the reason otherwise. */
  validateMessage(text: unknown): string {
    const checked = checkMessageText(text);
    if (this.closeRequestedValue) throw new Error('the conversation is closed');
    return checked;
  }

  /** Adds a user message (kept while paused, folded in before the next model call); its index. */
  addMessage(text: string): number {
    this.append({ kind: 'message', source: 'user', text });
    this.interruptWait('message');
    this.setStatus(statusAfterMessage(this.statusValue));
    this.publishDetails();
    return this.log.count - 1;
  }

  /** A message signal: added, or an error event saying why not (a signal has no answer). */
  receiveMessage(text: unknown): void {
    try {
      this.addMessage(this.validateMessage(text));
    } catch (err) {
      this.append({ kind: 'error', source: 'environment', message: `message not added: ${(err as Error).message}` });
    }
  }

  /** Pause: nothing new starts; the model call in flight is cancelled; `now` also interrupts the command. */
  pause(request: PauseRequest = {}): void {
    const outcome = pauseOutcome(this.statusValue, this.started);
    if (outcome === 'at-start') this.pauseAtStart = request;
    if (outcome !== 'pause') return;
    this.setStatus('paused', request.reason);
    this.interruptWait('pause');
    this.append({ kind: 'pause', source: 'user', now: request.now === true, ...(request.reason ? { reason: request.reason } : {}) });
    this.inFlight.model?.cancel();
    if (request.now) {
      this.inFlight.interruptRequested = true;
      this.inFlight.tool?.cancel();
    } else if (this.inFlight.waitingForHost) {
      this.inFlight.tool?.cancel(); // not picked up yet: nothing to interrupt, just do not start it
    }
    this.children.tell((child) => child.signal(pauseSignal, request));
  }

  /** The seed's `run()`: start a run, resume, or (waiting for confirmation) approve. */
  run(): void {
    if (this.closeRequestedValue) throw new Error('the conversation is closed');
    if (this.statusValue === 'running') this.interruptWait('resume');
    const outcome = runOutcome({
      status: this.statusValue,
      pendingActions: this.confirmation.pending.length,
      pendingMessages: this.pendingMessages(),
      childPaused: this.children.list.some((c) => c.status === 'paused'),
    });
    if (outcome.kind === 'approve') {
      this.decide({ approved: true });
      return;
    }
    if (outcome.kind === 'back-to-confirmation') {
      this.append({ kind: 'resume', source: 'user' });
      this.setStatus('waiting_for_confirmation', this.confirmation.describe());
      return;
    }
    if (outcome.kind === 'resume-children') this.children.tell((child) => child.signal(resumeSignal));
    if (outcome.kind !== 'start') return;
    const { wasPaused } = outcome;
    this.iterationsValue = 0;
    this.runCostValue = 0;
    this.runNumberValue++;
    this.lastErrorValue = null;
    if (wasPaused) this.append({ kind: 'resume', source: 'user' });
    this.setStatus('running');
    if (wasPaused) this.children.tell((child) => child.signal(resumeSignal));
  }

  /** The resume signal: like run(), except that it never approves actions waiting for confirmation. */
  resume(): void {
    if (this.closeRequestedValue) return;
    if (this.statusValue === 'waiting_for_confirmation' && isPatched('resume-signal-never-approves')) return;
    this.run();
  }

  /** Approve or reject the actions waiting for confirmation; how many there were. */
  decide(answer: { approved: boolean; reason?: string }): number {
    const n = this.confirmation.answer(answer);
    if (answer.approved) this.setStatus('running');
    return n;
  }

  /** `faheem deploy drain` asked this conversation to move to the deployment's current version. */
  askMove(): void {
    this.moveAskedValue = true;
    this.wakeupsValue++;
  }

  /** Whether a drain asked this conversation to move (the loop then checks the target version). */
  get moveAsked(): boolean {
    return this.moveAskedValue;
  }

  /** A drain asked and the target version changed: a wait or an approval should stop and move (no command). */
  moveWanted(): boolean {
    return this.moveAskedValue && targetVersionChanged();
  }

  /** The step under way stops here and moves with the conversation (carried to the next run). */
  carryStep(step: MovedStep): void {
    this.movedStepValue = step;
  }

  /** The step this run must stop for (set by carryStep) — the turn ends without finishing it. */
  get movingStep(): MovedStep | undefined {
    return this.movedStepValue;
  }

  /** The step carried in from the previous version, once (the new run finishes it first). */
  takeMovedStep(): MovedStep | undefined {
    const step = this.movedStepValue;
    this.movedStepValue = undefined;
    return step;
  }

  /** End the conversation: what is in flight is cancelled, sub-agents close too. */
  close(): void {
    this.closeRequestedValue = true;
    this.interruptWait('close');
    // A rewind asked for and not yet done will not be: say so to whoever waits for it.
    const pending = this.rewinds.pending;
    if (pending) this.rewinds.answer(pending.id, { error: 'the conversation was closed before the rewind' });
    this.inFlight.model?.cancel();
    if (this.inFlight.waitingForHost) this.inFlight.tool?.cancel();
    this.children.tell((child) => child.signal(closeSignal));
    this.wakeupsValue++;
  }

  /** A sub-agent reported its status and cost. */
  childReported(report: ChildReport): void {
    if (!this.children.update(report)) return;
    this.publishDetails();
    this.wakeupsValue++;
  }

  // ---- the run's start and end ----

  /** A new conversation's start: search attributes, the first message, run, a pause that came with the start. */
  begin(): void {
    if (!this.input.carried) {
      upsertSearchAttributes([
        { key: ConversationStatusKey, value: this.statusValue },
        { key: ConversationModelKey, value: this.model || 'default' },
      ]);
      // A close or pause may have come with the start (signals are handled first): honour them.
      if (this.input.firstMessage) this.addMessage(checkMessageText(this.input.firstMessage));
      if (this.input.run && !this.closeRequestedValue) this.run();
      if (this.pauseAtStart && this.statusValue === 'running' && isPatched('pause-at-start')) this.pause(this.pauseAtStart);
      this.publishDetails();
    }
    this.started = true;
  }

  /** The run is ending: waiting clients are answered now (they ask the next run). */
  drain(): void {
    this.drainingValue = true;
    // A rewind asked for as the run ends is not carried out: say so to whoever waits for it.
    const pending = this.rewinds.pending;
    if (pending)
      this.rewinds.answer(pending.id, { error: 'the conversation stopped (idle timeout, sub-agent done or closing) before the rewind' });
  }
}

/** Rewinds asked for (at most one at a time) and their answers, until the asker has read them. */
export class RewindRequests {
  private next = 0;
  private pendingValue: { id: number; to: number } | undefined;
  private readonly answers = new Map<number, { answer?: RewindAnswer; error?: string }>();

  get pending(): { id: number; to: number } | undefined {
    return this.pendingValue;
  }

  request(to: number): number {
    const id = ++this.next;
    this.pendingValue = { id, to };
    return id;
  }

  answer(id: number, result: { answer?: RewindAnswer; error?: string }): void {
    this.answers.set(id, result);
    if (this.pendingValue?.id === id) this.pendingValue = undefined;
  }

  answered(id: number): boolean {
    return this.answers.has(id);
  }

  /** The answer (once): a failed rewind fails the update with its reason. */
  take(id: number): RewindAnswer {
    const result = this.answers.get(id);
    this.answers.delete(id);
    if (!result?.answer)
      throw ApplicationFailure.create({
        message: result?.error ?? 'the rewind did not happen',
        type: FAILURE.RewindFailed,
        nonRetryable: true,
      });
    return result.answer;
  }
}
