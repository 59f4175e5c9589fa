// One conversation's workflow run: its state (plain data, ./run-state.ts: the actions waiting for
// confirmation too), the parts it holds (the log, what is in flight, open sub-agents, rewind
// requests, step checkpoints being taken), and `apply`, the one way its state changes: a pure command (./commands.ts) runs on
// the current snapshot, its events are recorded (with `by`, the actor of the call being handled,
// when there is one) and its effects carried out through the effects port (./effects.ts) once, in
// order, the details last. Built once from the workflow input
// (`fromInput`), written back for the next run (`toCarried`), read by queries (`snapshot`).
import { splitChain } from '../../../models/workflow/model-chain.js';
import type {
  WebhookDeliveryInput,
  Actor,
  CarriedState,
  ChildSummary,
  ConfirmationPolicy,
  ConversationInput,
  ConversationEvent,
  ConversationOptions,
  ConversationSetup,
  ConversationState,
  ConversationStatus,
  Metrics,
  MovedStep,
  TerminalState,
} from '../../../core/types.js';
import { CARRIED_STATE_VERSION, checkedCarried } from '../legacy/carried-state.js';
import type { PatchId } from '../legacy/patches.js';
import { ConversationLog } from '../conversation-log.js';
import { detailsText, type LastChange } from '../details.js';
import type { EventRun } from '../event-log.js';
import { closeSignal, pauseSignal, resumeSignal } from '../messages.js';
import { DEFAULT_SYSTEM_PROMPT, SECURITY_RISK_NOTE } from '../prompt.js';
import { CheckpointList, rewindRefusal as rewindRefusalFor } from '../../../time-travel/workflow/rewind-rules.js';
import { checkedMessage, halted, recordWebhook, type Effect, type Facts, type RunSnapshot, type CommandResult } from './commands.js';
import { pendingView } from './confirmation-gate.js';
import { InFlight } from './in-flight.js';
import type { EffectsPort } from './effects.js';
import {
  carriedFields,
  initialSession,
  initialState,
  sessionStartDue,
  stopHookActive,
  terminalOf,
  treeCost,
  type ActiveWait,
  type Confirmation,
  type RunState,
  type WaitEnd,
  woken,
} from './run-state.js';
import { OpenChildren } from '../../../sub-agents/workflow/open-children.js';
import { rewindAnswered } from '../../../time-travel/workflow/rewind-requests.js';
import { StepCheckpoints } from '../../../time-travel/workflow/step-checkpoints.js';
import { deliveryId, WebhookDeliveries } from '../../../webhooks/workflow/webhooks.js';

/**
 * The change that events recorded together with `by` make: the first that is not a status event
 * (a pause, a message, a close), else the first; undefined when none carries `by`.
 */
export function lastChangeOf(events: readonly ConversationEvent[]): LastChange | undefined {
  const withBy = events.filter((e) => e.by !== undefined);
  const main = withBy.find((e) => e.kind !== 'status') ?? withBy[0];
  return main?.by ? { by: main.by, kind: main.kind, index: main.index } : undefined;
}

/** The most webhook deliveries queued at once; a later stop is recorded as not sent. */
export const MAX_WEBHOOK_BACKLOG = 20;

/** What the run needs from its workflow (Temporal inside it; stand-ins in unit tests). */
export interface RunEnvironment {
  workflowId: string;
  runId: string;
  effects: EffectsPort;
  /** `isPatched` (a marker command): asked only where the loop always asked it. */
  patched: (id: PatchId) => boolean;
  /** Whether the deployment's target version changed (no command). */
  targetVersionChanged: () => boolean;
  /** Who the call being handled acts for (a header, no command; ../actor.ts); none when absent. */
  actor?: () => Actor | undefined;
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
  /** Handles to the open sub-agents (what the parent knows of each is in the state). */
  readonly children = new OpenChildren();
  /** The step checkpoints being taken (one after the other), while the loop goes on. */
  readonly stepCheckpoints = new StepCheckpoints();
  /** The stops being delivered to the conversation's webhook (one after the other), while the loop goes on. */
  readonly webhooks = new WebhookDeliveries();

  private current: RunSnapshot;
  private readonly env: RunEnvironment;
  /** What the Web UI's details say was changed last through the team API (found again in carried events). */
  private lastChange: LastChange | undefined;

  private constructor(input: ConversationInput, env: RunEnvironment) {
    const { options } = input;
    // Checked before anything reads it: the log its events, initialState the rest.
    if (input.carried !== undefined) input = { ...input, carried: checkedCarried(input.carried) };
    this.env = env;
    this.input = input;
    this.options = options;
    this.id = env.workflowId;
    this.model = options.agent.llm.model ?? '';
    this.depth = options.parent?.depth ?? 0;
    this.log = new ConversationLog(input.carried?.events ?? []);
    this.lastChange = lastChangeOf((input.carried?.events ?? []).filter((e) => e.by !== undefined).slice(-1));
    this.current = { state: initialState(input, env.runId, this.log.count), session: initialSession(input) };
    // The policy as the run starts: a change during the run reaches the prompt with the next run.
    const policy = this.current.state.confirmationPolicy;
    this.systemPrompt = (options.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT) + (policy === 'never' ? '' : `\n${SECURITY_RISK_NOTE}`);
  }

  /**
   * The run for this workflow input (a new conversation, or one continued as new). A carried state
   * of no shape a worker wrote fails the workflow with CarriedStateInvalid (see checkedCarried).
   */
  static fromInput(input: ConversationInput, env: RunEnvironment): ConversationRun {
    return new ConversationRun(input, env);
  }

  // ---- applying a command ----

  /** What the commands read from the held parts. */
  private facts(now: string, actor: Actor | undefined): Facts {
    return {
      actor,
      pendingMessages: this.pendingMessages(),
      waitingForHost: this.inFlight.waitingForHost,
      hasParent: this.options.parent !== undefined,
      patched: this.env.patched,
      nextIndex: this.log.count,
      now,
      webhook: this.options.webhook !== undefined,
    };
  }

  /**
   * The one way the run's state changes: runs a pure command (./commands.ts) on the current
   * snapshot, records its events (each wakes waiting loops; each carries `by` while a call made
   * through the team API is handled), carries out its effects once, in order, announces the change
   * to followers, and answers with the command's value.
   */
  apply<A extends unknown[], T>(command: (m: RunSnapshot, facts: Facts, ...args: A) => CommandResult<T>, ...args: A): T {
    // The workflow clock stands still within a task: the events recorded now carry this time.
    const now = new Date().toISOString();
    const actor = this.env.actor?.();
    const result = command(this.current, this.facts(now, actor), ...args);
    this.current = { state: result.state, session: result.session };
    const stamped: ConversationEvent[] = [];
    for (const event of result.events) {
      const recorded = this.log.append(actor ? { ...event, by: actor } : event, now);
      if (recorded.by) stamped.push(recorded);
      this.current = { ...this.current, session: woken(this.current.session) };
    }
    this.lastChange = lastChangeOf(stamped) ?? this.lastChange;
    this.flush(result.effects);
    this.announce();
    return result.value;
  }

  private announced = '';
  /** The status last announced, and the event count when it began (no command: only notices carry it). */
  private announcedStatus = { key: '', since: 0 };

  /** Tells followers (through the worker, not the history) what the conversation now has, if it changed. */
  private announce(): void {
    const closing = this.closeRequested || this.draining;
    const statusKey = `${this.status}/${this.runNumber}/${closing}`;
    if (statusKey !== this.announcedStatus.key) this.announcedStatus = { key: statusKey, since: this.log.count };
    const notice = {
      events: this.log.count,
      status: this.status,
      runNumber: this.runNumber,
      since: this.announcedStatus.since,
      ...(closing ? { closing: true } : {}),
    };
    const key = `${notice.events}/${statusKey}`;
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
          this.env.effects.searchAttributes({ status: effect.status, ...(effect.model !== undefined ? { model: effect.model } : {}) });
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
        case 'webhook': {
          const event = this.log.get(effect.eventIndex);
          if (event && this.options.webhook)
            this.deliver({
              conversationId: this.id,
              url: this.options.webhook.url,
              payload: { id: this.id, status: effect.status, event },
              deliveryId: deliveryId(this.id, effect.eventIndex),
            });
          break;
        }
      }
    }
    if (details) this.publishDetails();
  }

  /**
   * Queues a delivery to the conversation's webhook (patch webhook-deliveries: asked only by
   * conversations with a webhook); its end is recorded as a `webhook` event.
   */
  deliver(request: WebhookDeliveryInput): void {
    const webhook = this.options.webhook;
    const send = this.env.effects.deliverWebhook;
    if (!webhook || !send || !this.env.patched('webhook-deliveries')) return;
    const { event, status } = request.payload;
    // A receiver that hangs must not grow the queue (nor the input a continue-as-new carries) without end.
    if (this.webhooks.unfinished.length >= MAX_WEBHOOK_BACKLOG) {
      // Recorded once the change that made this stop is applied (deliver runs among its effects).
      const skipped = {
        eventIndex: event.index,
        status,
        delivered: false,
        attempts: 0,
        reason: `not sent: ${MAX_WEBHOOK_BACKLOG} earlier stops still wait for the receiver`,
      };
      void Promise.resolve().then(() => this.apply(recordWebhook, skipped));
      return;
    }
    this.webhooks.queue(request, async (r) => {
      const outcome = await send(webhook.taskQueue, r);
      this.apply(recordWebhook, { eventIndex: event.index, status, ...outcome });
    });
  }

  /** The Web UI's current details for this conversation (published by the flush only). */
  private publishDetails(): void {
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
        lastChange: this.lastChange,
        ...(state.output !== undefined ? { output: state.output } : {}),
      }),
    );
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
  /** The actions waiting for approve / reject and the answer once given (absent when none wait). */
  get confirmation(): Confirmation | undefined {
    return this.current.session.confirmation;
  }
  get closeRequested(): boolean {
    return this.current.session.closeRequested;
  }
  /** A `pause --now` asked the host to stop everything the conversation started there; not asked yet. */
  get processesStopDue(): boolean {
    return this.current.session.processesStopDue === true;
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
  /** How many sub-agents were started (the next one's number is one more). */
  get childCount(): number {
    return this.current.state.childCount;
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
    return halted(this.current);
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
    return terminalOf(this.current.state, this.options.workspace);
  }

  /** Whether actions wait for the user's approval (carried on continue-as-new with the state). */
  get confirmationPolicy(): ConfirmationPolicy {
    return this.current.state.confirmationPolicy;
  }

  /** The options as they stand now (the confirmation policy in force): what a sub-agent or a fork inherits. */
  currentOptions(): ConversationOptions {
    return { ...this.options, confirmationPolicy: this.current.state.confirmationPolicy };
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
      confirmationPolicy: state.confirmationPolicy,
      // Set on the worker only (LLM_MODEL): the head of its chain as the worker names it (its setup), else as the last call's answer did.
      model: this.model || splitChain(state.setup?.workerModel)[0] || state.metrics.calls?.at(-1)?.model || '',
      terminal: this.terminalState(),
      closed: session.closeRequested,
      pendingActions: pendingView(this.current.session.confirmation),
      runCost: state.runCost,
      children,
      finalMessage: state.finalMessage,
      ...(state.output !== undefined ? { output: state.output } : {}),
      waitingForHost: this.inFlight.waitingForHost ? this.options.toolTaskQueue : null,
      waitingUntil: session.activeWait ? { until: session.activeWait.until, reason: session.activeWait.reason } : null,
      steps: state.steps,
      forkedFrom: state.forkedFrom ?? null,
      forkPending: this.input.fork !== undefined && !this.forkMade,
      ...(this.options.parent ? { parentId: this.options.parent.id } : {}),
      ...(this.options.tenant !== undefined ? { tenant: this.options.tenant } : {}),
      ...(this.options.pool !== undefined ? { pool: this.options.pool, host: this.options.poolHost?.host ?? null } : {}),
    };
  }

  /** This conversation's cost plus its sub-agents'. */
  treeCost(): number {
    return treeCost(this.current.state);
  }

  /** What the next run starts from when this one continues as new: only what the model still needs (earlier runs answer for the rest). */
  toCarried(): CarriedState {
    return { version: CARRIED_STATE_VERSION, ...carriedFields(this.current.state), events: this.log.compact() };
  }

  // ---- what the loop reads ----

  /** The events since the last model call, if small (they travel with the call); `seen`: the count now (see the eventsSent command). */
  recentEvents(): { seen: number; recent: ReturnType<ConversationLog['recent']> } {
    const seen = this.log.count;
    return { seen, recent: this.log.recent(this.current.session.sentEvents ?? this.current.state.modelSeenEvents, seen) };
  }

  /** What ended the `wait` in progress early, if anything has. */
  get waitEndedBy(): WaitEnd | undefined {
    return this.current.session.activeWait?.endedBy;
  }

  /** The `wait` in progress, if any. */
  get activeWait(): ActiveWait | undefined {
    return this.current.session.activeWait;
  }

  /** SessionStart hooks run once a run. */
  sessionStartDue(): boolean {
    return sessionStartDue(this.current.state);
  }

  /** Whether a Stop hook already made the agent go on in this run (Claude Code's stop_hook_active). */
  get stopHookActive(): boolean {
    return stopHookActive(this.current.state);
  }

  /**
   * User messages the model has not seen and UserPromptSubmit hooks have not checked (each is
   * checked once: the promptsChecked command with `upTo` marks them).
   */
  uncheckedPrompts(): { prompts: { index: number; text: string }[]; upTo: number } {
    const { state } = this.current;
    const from = Math.max(state.modelSeenEvents, state.hooks.checkedPromptsUpTo);
    const prompts: { index: number; text: string }[] = [];
    for (const e of this.log.from(from)) if (e.kind === 'message' && e.source === 'user') prompts.push({ index: e.index, text: e.text });
    return { prompts, upTo: this.log.count };
  }

  /** Why a rewind to `step` cannot be asked for now, or undefined. */
  rewindRefusal(step: unknown): string | undefined {
    if (this.current.session.rewinds.pending) return 'a rewind is already in progress';
    if (this.current.session.draining) return 'the conversation is ending; fork it instead (`faheem fork ID --at N`)';
    return rewindRefusalFor(step, this.checkpoints, this.current.session.closeRequested);
  }

  /** The rewind asked for and not yet carried out, if any. */
  get pendingRewind(): { readonly id: number; readonly to: number } | undefined {
    return this.current.session.rewinds.pending;
  }

  /** Whether rewind `id` has its answer (done, or why not). */
  rewindAnswered(id: number): boolean {
    return rewindAnswered(this.current.session.rewinds, id);
  }

  /** A user message as the workflow accepts it; throws with the reason otherwise. */
  validateMessage(text: unknown): string {
    return checkedMessage(this.current, text);
  }

  /** Whether a drain asked this conversation to move (the loop then checks the target version). */
  get moveAsked(): boolean {
    return this.current.session.moveAsked;
  }

  /** A drain asked and the target version changed: a wait or an approval should stop and move (no command). */
  moveWanted(): boolean {
    return this.current.session.moveAsked && this.env.targetVersionChanged();
  }

  /** The step this run must stop for (set by carryStep), or the one carried in from the previous version. */
  get movingStep(): MovedStep | undefined {
    return this.current.state.movedStep;
  }
}
