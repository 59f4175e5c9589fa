// The conversation workflow: one per conversation, workflow id = conversation id.
// Loop: wait until running → model call → each tool call → repeat until the model stops, a limit
// is hit, or a pause arrives. All state is plain data so that it replays and continues as new.
import {
  ActivityFailure,
  CancellationScope,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { HandlerUnfinishedPolicy, TimeoutType } from '@temporalio/common';
import type { Activities } from '../activities/index.js';
import type { AnyTool, ToolContext } from '../tools/define.js';
import { describeInvalid } from '../tools/define.js';
import { DelegateArgs } from '../tools/delegate.js';
import { WORKFLOW_TOOLS } from '../tools/local.js';
import {
  DEFAULTS,
  emptyMetrics,
  type ActionEvent,
  type CarriedState,
  type ChildReport,
  type ChildSummary,
  type ConversationSetup,
  type ConversationInput,
  type ConversationState,
  type CondenserOptions,
  type ConversationStatus,
  type Metrics,
  type ModelCallResult,
  type RunToolResult,
  type TerminalState,
  type ToolCallPlan,
  type ToolResult,
} from '../types.js';
import {
  ConversationModelKey,
  ConversationStatusKey,
  DESCRIPTIONS,
  addMessageUpdate,
  approveUpdate,
  childStatusSignal,
  closeSignal,
  rejectUpdate,
  eventRunsQuery,
  eventsQuery,
  messageSignal,
  pauseSignal,
  resumeSignal,
  runUpdate,
  setupQuery,
  stateQuery,
  waitForChangeUpdate,
  checkMessageText,
  type PauseRequest,
  type WaitRequest,
} from './messages.js';
import { MODEL_CALL, PREPARE_TOOLS, TOOL_CALL } from './activity-options.js';
import { needsConfirmation } from './confirmation.js';
import { ConversationLog, type NewEvent } from './conversation-log.js';
import { detailsText, formatDuration, shorten, summarizeArgs } from './details.js';
import { eventsPage, type EventRun } from './event-log.js';
import { addUsage, cancelledDetails, failureMessage, lenientArguments, observation, parseArguments } from './reply.js';
import { pauseOutcome, runOutcome, statusAfterMessage } from './status.js';
import { childHasEnded, childId, childInput, childMaxIterations, childObservation, childTools, DEFAULT_MAX_DEPTH } from './delegation.js';
import { DEFAULT_SYSTEM_PROMPT, SECURITY_RISK_NOTE, condensationRange } from './prompt.js';

/**
 * Histories from before every tool went through one definition (no setup step; terminal and
 * file_editor had an activity each) replay on the old path; new work takes the new one.
 */
const OPEN_TOOLS_PATCH = 'open-tools';

export async function conversation(input: ConversationInput): Promise<ConversationState> {
  const { options } = input;
  const id = workflowInfo().workflowId;
  const carried = input.carried;
  const model = options.agent.llm.model ?? '';
  const systemPrompt =
    (options.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT) +
    (options.confirmationPolicy === 'never' ? '' : `\n${SECURITY_RISK_NOTE}`);

  // The events this run holds (all of them, until a condensation lets the next run drop old ones),
  // with the counts the loop needs kept as events are added.
  const log = new ConversationLog(carried?.events ?? []);
  // Which run recorded which events: earlier runs answer for the events this one no longer holds.
  const runs: EventRun[] = [...(carried?.runs ?? []), { runId: workflowInfo().runId, from: log.count }];
  let status: ConversationStatus = carried?.status ?? 'idle';
  let iterations = carried?.iterations ?? 0;
  let runNumber = carried?.runNumber ?? 0;
  let metrics: Metrics = carried?.metrics ?? emptyMetrics();
  let lastError: string | null = carried?.lastError ?? null;
  // Each tool's durable state (the terminal's cwd and variables, the task list), by tool name.
  const toolState: Record<string, unknown> = carried?.toolState ?? {
    terminal: carried?.terminal ?? { cwd: options.workspace, env: {} },
    ...(carried?.tasks ? { task_tracker: carried.tasks } : {}),
  };
  // Events the model has seen: user messages after this point are "pending".
  let modelSeenEvents = carried?.modelSeenEvents ?? 0;
  // Events up to here went with this run's last model call (its worker likely caches them).
  let sentEvents: number | undefined;
  let runCost = carried?.runCost ?? 0;
  let lastPromptTokens = carried?.lastPromptTokens ?? 0;
  let condenseRetryAt = carried?.condenseRetryAt ?? 0;
  // What the workspace host offered when the conversation first ran: tools and AGENTS.md.
  let setup: ConversationSetup | undefined = carried?.setup;
  // Actions of the current reply waiting for approve / reject, and the answer once given.
  let pendingActions: ActionEvent[] = [];
  let decision: { approved: boolean; reason?: string } | undefined;
  let closeRequested = false;
  let wakeups = 0;
  let modelScope: CancellationScope | undefined;
  let toolScope: CancellationScope | undefined;
  let interruptRequested = false;
  // No worker on the workspace host's queue has picked up our last call for a while.
  let waitingForHost = false;
  // The run is ending (completing or continuing as new): waits answer at once.
  let draining = false;
  // Before the start-up below has run, a pause is kept for it (see pause()).
  let started = carried !== undefined;
  let pauseAtStart: PauseRequest | undefined;
  // Sub-agents (delegate calls): what the parent knows of each, and handles to reach the open ones.
  const children: ChildSummary[] = carried?.children ?? [];
  let childCount = carried?.childCount ?? 0;
  const openChildren = new Map<string, ChildWorkflowHandle<typeof conversation>>();
  let finalMessage: string | null = carried?.finalMessage ?? null;
  const depth = options.parent?.depth ?? 0;

  const modelActs = proxyActivities<Activities>(MODEL_CALL);
  const toolActs = proxyActivities<Activities>({ ...TOOL_CALL, taskQueue: options.toolTaskQueue });

  // ---- state helpers ----

  function append(event: NewEvent): void {
    log.append(event, new Date().toISOString());
    wakeups++;
  }

  function setStatus(next: ConversationStatus, reason?: string): void {
    if (next === status) return;
    status = next;
    append({ kind: 'status', source: 'environment', status: next, ...(reason ? { reason } : {}) });
    upsertSearchAttributes([{ key: ConversationStatusKey, value: next }]);
    publishDetails();
    reportToParent();
  }

  /** A sub-agent keeps its parent's view of it current (status and the cost of its tree). */
  function reportToParent(): void {
    if (!options.parent) return;
    const report: ChildReport = { id, status, cost: treeCost() };
    // The parent may have closed meanwhile: nothing to tell then.
    getExternalWorkflowHandle(options.parent.id).signal(childStatusSignal, report).catch(() => undefined);
  }

  /** This conversation's cost plus its sub-agents'. */
  function treeCost(): number {
    return children.reduce((sum, c) => sum + c.cost, metrics.accumulatedCost);
  }

  /** Pause, resume and close reach every open sub-agent at once. */
  function tellChildren(fn: (handle: ChildWorkflowHandle<typeof conversation>) => Promise<void>): void {
    for (const handle of openChildren.values()) fn(handle).catch(() => undefined);
  }

  function pendingMessages(): number {
    return log.pendingMessages(modelSeenEvents);
  }

  function state(): ConversationState {
    return {
      id,
      status,
      iterations,
      runNumber,
      events: log.count,
      pendingMessages: pendingMessages(),
      metrics: children.length > 0 ? { ...metrics, accumulatedCost: treeCost() } : metrics,
      lastError,
      workspace: options.workspace,
      // Set on the worker only (LLM_MODEL): the model the last call says answered.
      model: model || metrics.calls?.at(-1)?.model || '',
      terminal: terminalState(),
      closed: closeRequested,
      pendingActions: pendingActions.map((a) => ({ toolCallId: a.toolCallId, tool: a.tool, arguments: a.arguments })),
      runCost,
      children,
      finalMessage,
      waitingForHost: waitingForHost ? options.toolTaskQueue : null,
      ...(options.parent ? { parentId: options.parent.id } : {}),
    };
  }

  function terminalState(): TerminalState {
    return (toolState.terminal as TerminalState | undefined) ?? { cwd: options.workspace, env: {} };
  }

  /** The tools the model may call: the setup's, or (older conversations) the agent's names. */
  function offeredTools(): string[] {
    return setup ? setup.tools.map((t) => t.name) : options.agent.tools;
  }

  function publishDetails(): void {
    setCurrentDetails(
      detailsText({
        status,
        lastError,
        iterations,
        maxIterations: options.maxIterations,
        runNumber,
        lastAction: log.lastAction,
        waitingForHost: waitingForHost ? options.toolTaskQueue : null,
        pendingMessages: pendingMessages(),
        children,
        parentId: options.parent?.id,
        metrics,
      }),
    );
  }

  // ---- what users can do ----

  function validateMessage(text: unknown): string {
    const checked = checkMessageText(text);
    if (closeRequested) throw new Error('the conversation is closed');
    return checked;
  }

  function addMessage(text: string): number {
    append({ kind: 'message', source: 'user', text });
    setStatus(statusAfterMessage(status));
    publishDetails();
    return log.count - 1;
  }

  function pause(request: PauseRequest = {}): void {
    const outcome = pauseOutcome(status, started);
    if (outcome === 'at-start') pauseAtStart = request;
    if (outcome !== 'pause') return;
    setStatus('paused', request.reason);
    append({ kind: 'pause', source: 'user', now: request.now === true, ...(request.reason ? { reason: request.reason } : {}) });
    modelScope?.cancel();
    if (request.now) {
      interruptRequested = true;
      toolScope?.cancel();
    } else if (waitingForHost) {
      toolScope?.cancel(); // not picked up yet: nothing to interrupt, just do not start it
    }
    tellChildren((child) => child.signal(pauseSignal, request));
  }

  function run(): void {
    if (closeRequested) throw new Error('the conversation is closed');
    const outcome = runOutcome({
      status,
      pendingActions: pendingActions.length,
      pendingMessages: pendingMessages(),
      childPaused: children.some((c) => c.status === 'paused'),
    });
    if (outcome.kind === 'approve') {
      decide({ approved: true });
      return;
    }
    if (outcome.kind === 'back-to-confirmation') {
      append({ kind: 'resume', source: 'user' });
      setStatus('waiting_for_confirmation', describePending());
      return;
    }
    if (outcome.kind === 'resume-children') tellChildren((child) => child.signal(resumeSignal));
    if (outcome.kind !== 'start') return;
    const { wasPaused } = outcome;
    iterations = 0;
    runCost = 0;
    runNumber++;
    lastError = null;
    if (wasPaused) append({ kind: 'resume', source: 'user' });
    setStatus('running');
    if (wasPaused) tellChildren((child) => child.signal(resumeSignal));
  }

  function describePending(): string {
    return `${pendingActions.length} action(s) need approval: ${pendingActions.map((a) => `${a.tool} ${summarizeArgs(a.arguments)}`).join('; ')}`;
  }

  function decide(answer: { approved: boolean; reason?: string }): number {
    const n = pendingActions.length;
    decision = answer;
    if (answer.approved) setStatus('running');
    return n;
  }

  setHandler(approveUpdate, () => ({ approved: decide({ approved: true }) }), {
    description: DESCRIPTIONS.approve,
    validator: () => {
      if (pendingActions.length === 0 || decision) throw new Error('nothing is waiting for confirmation');
      if (status !== 'waiting_for_confirmation') throw new Error(`the conversation is ${status}; resume it first, then approve`);
    },
  });
  setHandler(rejectUpdate, (reason: string) => ({ rejected: decide({ approved: false, ...(reason ? { reason } : {}) }) }), {
    description: DESCRIPTIONS.reject,
    validator: (_reason: string) => {
      if (pendingActions.length === 0 || decision) throw new Error('nothing is waiting for confirmation');
    },
  });

  setHandler(messageSignal, (text) => {
    try {
      addMessage(validateMessage(text));
    } catch (err) {
      append({ kind: 'error', source: 'environment', message: `message not added: ${(err as Error).message}` });
    }
  }, { description: DESCRIPTIONS.message });
  setHandler(pauseSignal, (request) => pause(request ?? {}), { description: DESCRIPTIONS.pause });
  setHandler(resumeSignal, () => {
    if (closeRequested) return;
    // Only an explicit run (update) approves actions waiting for confirmation; a resume never does.
    if (status === 'waiting_for_confirmation' && patched('resume-signal-never-approves')) return;
    run();
  }, { description: DESCRIPTIONS.resume });
  setHandler(closeSignal, () => {
    closeRequested = true;
    modelScope?.cancel();
    if (waitingForHost) toolScope?.cancel();
    tellChildren((child) => child.signal(closeSignal));
    wakeups++;
  }, { description: DESCRIPTIONS.close });
  setHandler(childStatusSignal, (report: ChildReport) => {
    const child = children.find((c) => c.id === report?.id);
    if (!child) return;
    child.status = report.status;
    child.cost = Math.max(child.cost, Number(report.cost) || 0);
    publishDetails();
    wakeups++;
  }, { description: DESCRIPTIONS.childStatus });
  setHandler(stateQuery, state, { description: DESCRIPTIONS.state });
  setHandler(setupQuery, () => setup ?? null, { description: DESCRIPTIONS.setup });
  setHandler(eventRunsQuery, () => runs, { description: DESCRIPTIONS.eventRuns });
  setHandler(eventsQuery, (fromIndex = 0, limit = 10_000) => eventsPage(log.from(Math.max(0, fromIndex)), limit), {
    description: DESCRIPTIONS.events,
  });
  setHandler(addMessageUpdate, (text) => ({ index: addMessage(text), status }), {
    description: DESCRIPTIONS.addMessage,
    validator: (text) => void validateMessage(text),
  });
  // Clients wait here instead of polling: each wait is one update, answered when there is news.
  setHandler(waitForChangeUpdate, async (request: WaitRequest) => {
    const after = request?.afterEvents;
    const afterRun = request?.afterRun;
    await condition(
      () =>
        draining ||
        closeRequested ||
        (after !== undefined && log.count > after) ||
        (request?.whenStopped === true && (status !== 'running' || (afterRun !== undefined && runNumber > afterRun))),
    );
    return { events: log.count, status, runNumber };
  }, {
    description: DESCRIPTIONS.waitForChange,
    // A client that went away leaves nothing to finish: the workflow may complete or continue without it.
    unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
    validator: (request: WaitRequest) => {
      const numbers = [request?.afterEvents, request?.afterRun].filter((n) => n !== undefined);
      if (numbers.some((n) => !Number.isFinite(Number(n)))) throw new Error('afterEvents and afterRun must be numbers');
      if (request?.afterEvents === undefined && request?.whenStopped !== true) throw new Error('give afterEvents or whenStopped');
    },
  });
  setHandler(runUpdate, () => {
    run();
    return { runNumber, status };
  }, {
    description: DESCRIPTIONS.run,
    validator: () => {
      if (closeRequested) throw new Error('the conversation is closed');
    },
  });

  // ---- the loop ----

  async function callModel(): Promise<ModelCallResult | undefined> {
    const seen = log.count;
    const step = iterations + 1;
    // The events since the last call travel with this one (when small), so the worker need not query.
    const recent = log.recent(sentEvents ?? modelSeenEvents, seen);
    sentEvents = seen;
    modelScope = new CancellationScope();
    try {
      const reply = await modelScope.run(() =>
        modelActs.callModel.executeWithOptions({ ...MODEL_CALL, summary: `LLM ${model || 'default model'} · step ${step}` }, [
          {
            conversationId: id,
            step,
            llm: options.agent.llm,
            systemPrompt,
            eventCount: seen,
            tools: offeredTools(),
            ...(setup ? { setupVersion: setup.version } : {}),
            ...(recent ? { recent } : {}),
          },
        ]),
      );
      modelSeenEvents = seen;
      return reply;
    } catch (err) {
      // Paused or closing: the call is made again on resume. A cancelled call whose worker died
      // before acknowledging ends in a timeout instead; that is still the pause, not an error.
      if (isCancellation(err) || wasCancelled()) return undefined;
      lastError = `model call failed: ${failureMessage(err)}`;
      append({ kind: 'error', source: 'environment', message: lastError });
      setStatus('error', lastError);
      return undefined;
    } finally {
      modelScope = undefined;
    }
  }

  /** Whether the model call in flight was cancelled (a pause or close), whatever error it ended in. */
  function wasCancelled(): boolean {
    return modelScope?.consideredCancelled === true || status !== 'running' || closeRequested;
  }

  async function runTool(action: ActionEvent, plan: ToolCallPlan | undefined, siblings = 1): Promise<ToolResult> {
    const args = action.arguments;
    const offered = offeredTools();
    if (!offered.includes(action.tool)) {
      return { content: `Unknown tool "${action.tool}". Available tools: ${offered.join(', ')}.`, isError: true };
    }
    if (typeof args === 'string') {
      return { content: `The arguments of ${action.tool} are not valid JSON: ${args.slice(0, 500)}`, isError: true };
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return { content: `The arguments of ${action.tool} must be a JSON object; got: ${String(args).slice(0, 500)}`, isError: true };
    }
    if (action.tool === 'delegate') return delegate(action, siblings);
    const inWorkflow = WORKFLOW_TOOLS.get(action.tool);
    if (inWorkflow) return runInWorkflow(inWorkflow, action);

    toolScope = new CancellationScope();
    try {
      const result = setup ? await runOnHost(action, plan, setup) : await runOnHostBeforeOpenTools(action);
      if (result.state !== undefined) toolState[action.tool] = result.state;
      return { content: result.content, isError: result.isError, ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}) };
    } catch (err) {
      if (err instanceof NotStarted) {
        return { content: 'Not run: the conversation was paused (or closed) while waiting for the workspace host.', isError: true };
      }
      if (isCancellation(err) || interruptRequested) {
        const partial = cancelledDetails(err);
        return {
          content: `The command was interrupted by a pause before it finished.${partial ? `\nOutput so far:\n${partial}` : ''}`,
          isError: true,
          exitCode: -1,
        };
      }
      return { content: `The tool failed: ${failureMessage(err)}`, isError: true };
    } finally {
      toolScope = undefined;
      interruptRequested = false;
    }
  }

  /** Every host tool, built-in, yours or an MCP server's: one activity on the workspace's host. */
  function runOnHost(action: ActionEvent, plan: ToolCallPlan | undefined, current: ConversationSetup): Promise<RunToolResult> {
    const spec = current.tools.find((t) => t.name === action.tool);
    const mcpConfig = spec?.mcp ? options.mcpServers?.[spec.mcp.server] : undefined;
    const timeout = plan?.timeoutSeconds;
    return (toolScope as CancellationScope).run(() =>
      onHost((extra, rescheduled) => toolActs.runTool.executeWithOptions(
        {
          ...TOOL_CALL,
          ...(timeout ? { startToCloseTimeout: `${Math.ceil(timeout)} seconds` } : {}),
          taskQueue: options.toolTaskQueue,
          summary: shorten(plan?.summary ?? action.tool, 120),
          ...extra,
        },
        [
          {
            conversationId: id,
            workspace: options.workspace,
            toolCallId: action.toolCallId,
            tool: action.tool,
            arguments: action.arguments,
            ...(toolState[action.tool] !== undefined ? { state: toolState[action.tool] } : {}),
            ...(spec?.mcp && mcpConfig ? { mcp: { ...spec.mcp, config: mcpConfig } } : {}),
            ...(rescheduled ? { rescheduled: true } : {}),
          },
        ],
      )),
    );
  }

  /**
   * Runs a call on the workspace host. If no worker there picks it up within hostWaitMs, the
   * conversation says it is waiting for that host (status, events, Web UI) and asks again, now
   * without a limit; a call that never started is safe to schedule again.
   */
  async function onHost<T>(call: (extra: ActivityOptions, rescheduled: boolean) => Promise<T>): Promise<T> {
    try {
      return await call({ scheduleToStartTimeout: options.hostWaitMs ?? DEFAULTS.hostWaitMs }, false);
    } catch (err) {
      if (!(err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START)) throw err;
    }
    if (status !== 'running' || closeRequested) throw new NotStarted();
    waitingForHost = true;
    append({ kind: 'host', source: 'environment', queue: options.toolTaskQueue, available: false });
    publishDetails();
    try {
      // Told it may have begun under the first try (a retry that timed out), so `report` tools still never run twice.
      return await call({}, true);
    } catch (err) {
      // Paused or closed while waiting: the call had not been picked up.
      if (isCancellation(err)) throw new NotStarted();
      throw err;
    } finally {
      waitingForHost = false;
      append({ kind: 'host', source: 'environment', queue: options.toolTaskQueue, available: true });
      publishDetails();
    }
  }

  /** Conversations from before tools were open: terminal and file_editor had an activity each. */
  async function runOnHostBeforeOpenTools(action: ActionEvent): Promise<RunToolResult> {
    const args = action.arguments as { command?: unknown; path?: unknown; timeout?: unknown };
    const base = { conversationId: id, workspace: options.workspace, toolCallId: action.toolCallId, arguments: args };
    const scope = toolScope as CancellationScope;
    if (action.tool === 'terminal') {
      const timeoutSec = Number(args.timeout);
      const startToCloseTimeout = Number.isFinite(timeoutSec) && timeoutSec > 0 ? `${Math.ceil(timeoutSec) + 60} seconds` : TOOL_CALL.startToCloseTimeout;
      const result = await scope.run(() =>
        toolActs.runTerminal.executeWithOptions(
          { ...TOOL_CALL, startToCloseTimeout, taskQueue: options.toolTaskQueue, summary: `$ ${shorten(String(args.command ?? ''), 120)}` },
          [{ ...base, terminal: terminalState() }],
        ),
      );
      const { terminal, ...rest } = result;
      return { ...rest, state: terminal };
    }
    return scope.run(() =>
      toolActs.editFile.executeWithOptions(
        { ...TOOL_CALL, taskQueue: options.toolTaskQueue, summary: `file_editor ${String(args.command)} ${String(args.path)}` },
        [base],
      ),
    );
  }

  /**
   * A sub-agent: a child conversation (same workflow, id `<id>.sub-<n>`) with the task as its first
   * message. Its final answer is the observation; its iterations and cost count against this run.
   */
  async function delegate(action: ActionEvent, siblings = 1): Promise<ToolResult> {
    const parsed = DelegateArgs.safeParse(action.arguments);
    if (!parsed.success) return { content: describeInvalid('delegate', parsed.error), isError: true };
    const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    if (depth >= maxDepth) return { content: `Sub-agents may not nest deeper than ${maxDepth}: do this task yourself.`, isError: true };
    const granted = childTools(offeredTools(), parsed.data.tools, depth + 1, maxDepth);
    if ('error' in granted) return { content: granted.error, isError: true };
    const { task } = parsed.data;
    const cid = childId(id, ++childCount);
    const summary: ChildSummary = { id: cid, status: 'running', cost: 0, task };
    children.push(summary);
    append({ kind: 'child', source: 'environment', childId: cid, toolCallId: action.toolCallId, task, status: 'started' });
    const childConversation = childInput(options, {
      parentId: id,
      depth,
      task,
      tools: granted.tools,
      requested: parsed.data.tools !== undefined,
      maxIterations: childMaxIterations(parsed.data.max_iterations, options.maxIterations, iterations, siblings),
      budgetLeft: options.maxBudgetPerRunUsd === undefined ? undefined : Math.max(0, options.maxBudgetPerRunUsd - runCost),
    });
    let ended: ConversationState;
    try {
      const handle = await startChild(conversation, {
        workflowId: cid,
        args: [childConversation],
        staticSummary: shorten(`sub-agent of ${id}: ${task}`, 200),
        staticDetails: `**Task:** ${task}\n\n**Parent:** \`${id}\` · **Tools:** ${granted.tools.join(', ')} · **Depth:** ${depth + 1} of ${maxDepth}`,
      });
      openChildren.set(cid, handle);
      // A pause or close that came while the child was starting reaches it now.
      if (closeRequested) handle.signal(closeSignal).catch(() => undefined);
      else if (status === 'paused') handle.signal(pauseSignal, {}).catch(() => undefined);
      ended = await handle.result();
    } catch (err) {
      summary.status = 'error';
      append({ kind: 'child', source: 'environment', childId: cid, toolCallId: action.toolCallId, task, status: 'error' });
      return { content: `The sub-agent ${cid} failed: ${failureMessage(err)}`, isError: true };
    } finally {
      openChildren.delete(cid);
    }
    summary.status = ended.status;
    summary.cost = ended.metrics.accumulatedCost;
    iterations += ended.iterations;
    runCost += summary.cost;
    append({ kind: 'child', source: 'environment', childId: cid, toolCallId: action.toolCallId, task, status: ended.status });
    publishDetails();
    return childObservation(cid, ended);
  }

  /** think, finish, task_tracker: deterministic, so they run here and a replay recomputes them. */
  async function runInWorkflow(tool: AnyTool, action: ActionEvent): Promise<ToolResult> {
    // Conversations from before tools were open accepted looser arguments; they replay the same.
    const parsed = tool.parameters.safeParse(setup ? action.arguments : lenientArguments(tool.name, action.arguments));
    if (!parsed.success) return { content: describeInvalid(tool.name, parsed.error), isError: true };
    const ctx: ToolContext = {
      conversationId: id,
      toolCallId: action.toolCallId,
      workspace: options.workspace,
      signal: NEVER_ABORTED,
      heartbeat: () => undefined,
      secrets: {},
      state: toolState[tool.name],
      attempt: 1,
      exec: () => Promise.reject(new Error('ctx.exec is not available to tools that run inside the workflow')),
    };
    const out = await tool.execute(parsed.data, ctx);
    if (typeof out === 'string') return { content: out, isError: false };
    if (out.state !== undefined) toolState[tool.name] = out.state;
    return { content: out.content, isError: out.isError === true };
  }

  /**
   * Asks the workspace host which tools it has for this conversation (and reads AGENTS.md there).
   * False when it did not happen (a pause, or a failure now recorded as the conversation's error).
   */
  async function prepareTools(): Promise<boolean> {
    modelScope = new CancellationScope();
    try {
      const result = await modelScope.run(() =>
        onHost((extra) => toolActs.prepareTools.executeWithOptions(
          { ...PREPARE_TOOLS, taskQueue: options.toolTaskQueue, summary: 'prepare tools (and MCP servers, AGENTS.md) on the workspace host', ...extra },
          [
            {
              conversationId: id,
              workspace: options.workspace,
              tools: options.agent.tools,
              hostTools: options.agent.hostTools === true,
              ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
            },
          ],
        )),
      );
      setup = {
        version: (setup?.version ?? 0) + 1,
        tools: result.tools,
        ...(result.instructions ? { instructions: result.instructions } : {}),
      };
      if (result.instructions) append({ kind: 'instructions', source: 'environment', ...result.instructions });
      for (const message of result.errors) append({ kind: 'error', source: 'environment', message });
      return true;
    } catch (err) {
      if (err instanceof NotStarted || isCancellation(err) || wasCancelled()) return false;
      lastError = `could not prepare the tools on ${options.toolTaskQueue}: ${failureMessage(err)}`;
      append({ kind: 'error', source: 'environment', message: lastError });
      setStatus('error', lastError);
      return false;
    } finally {
      modelScope = undefined;
    }
  }

  async function step(): Promise<void> {
    if (iterations >= options.maxIterations) {
      lastError = `reached the maximum of ${options.maxIterations} iterations in this run`;
      setStatus('error', lastError);
      return;
    }
    if (!setup && patched(OPEN_TOOLS_PATCH)) {
      if (!(await prepareTools())) return;
      if (status !== 'running' || closeRequested) return;
    }
    // Checked without a promise: the workflow sandbox records a stack for every promise, at a price.
    const condenser = condensationDue();
    if (condenser) await condense(condenser);
    if (status !== 'running' || closeRequested) return;
    const reply = await callModel();
    if (!reply) return;
    lastPromptTokens = reply.usage.promptTokens;
    iterations++;
    metrics = addUsage(metrics, reply, iterations, 'step');
    runCost += reply.cost;
    // The parent's tree cost stays current while this sub-agent works (histories from before replay without it).
    if (options.parent && patched('child-cost-each-step')) reportToParent();

    if (reply.toolCalls.length === 0) {
      append({ kind: 'message', source: 'agent', text: reply.content ?? '', ...(reply.truncated ? { truncated: true } : {}) });
      // Cut by the output cap: not an answer; the next prompt tells the model (prompt.ts) and it goes on.
      if (reply.truncated) return;
      finalMessage = reply.content ?? '';
      if (status === 'running') setStatus('finished');
      return;
    }
    if (options.maxBudgetPerRunUsd !== undefined && runCost >= options.maxBudgetPerRunUsd && status === 'running') {
      // Over budget with work left: pause (not fail), so the user decides whether to spend more.
      pause({ reason: `budget: this run cost $${runCost.toFixed(4)}, the limit is $${options.maxBudgetPerRunUsd}` });
    }
    const actions: ActionEvent[] = [];
    const plans = new Map<ActionEvent, ToolCallPlan | undefined>();
    reply.toolCalls.forEach((call, i) => {
      const action = log.append({
        kind: 'action',
        source: 'agent',
        tool: call.name,
        toolCallId: call.id,
        arguments: parseArguments(call.arguments),
        replyId: reply.id,
        ...(i === 0 && reply.content ? { thought: reply.content } : {}),
        ...(i === 0 && reply.reasoning?.length ? { reasoning: reply.reasoning } : {}),
        ...(i === 0 && reply.truncated ? { truncated: true } : {}),
      }, new Date().toISOString()) as ActionEvent;
      wakeups++;
      actions.push(action);
      plans.set(action, call.plan);
    });
    if (status === 'running' && asksConfirmation(actions, plans) && !(await confirm(actions))) {
      publishDetails();
      return;
    }
    // Sub-agents of one reply start together and work in parallel; their results are read in order.
    const delegated = new Map<ActionEvent, Promise<ToolResult>>();
    if (status === 'running' && !closeRequested) {
      const delegates = actions.filter((a) => a.tool === 'delegate');
      for (const action of delegates) delegated.set(action, runTool(action, undefined, delegates.length));
    }
    let finished = false;
    for (const action of actions) {
      const started = delegated.get(action);
      if (!started && (status !== 'running' || closeRequested)) {
        append(observation(action, { content: 'Not run: the conversation was paused before this call started.', isError: true }));
        continue;
      }
      const result = await (started ?? runTool(action, plans.get(action)));
      append(observation(action, result));
      if (action.tool === 'finish' && !result.isError) {
        finished = true;
        finalMessage = result.content;
      }
    }
    publishDetails();
    if (finished && status === 'running') {
      setStatus('finished');
      return;
    }
    const stuck = status === 'running' ? log.stuckReason() : null;
    if (stuck) {
      lastError = stuck;
      setStatus('stuck', stuck);
    }
  }

  /** The condenser's options when the prompt has grown past its limits (kept counts: no walk of the log). */
  function condensationDue(): CondenserOptions | undefined {
    const c = options.condenser === false ? undefined : (options.condenser ?? DEFAULTS.condenser);
    if (!c) return undefined;
    const visible = log.promptEvents;
    if (visible <= c.maxEvents && lastPromptTokens <= c.maxPromptTokens) return undefined;
    if (visible < condenseRetryAt) return undefined; // it failed recently: try again once the prompt has grown
    return c;
  }

  /** Summarises older events (an activity): the range from the kept head to about half the prompt. */
  async function condense(c: CondenserOptions): Promise<void> {
    const visible = log.promptEvents;
    const range = condensationRange(log.held(), c.keepFirst);
    if (!range) return;
    const folded = range.folds;
    modelScope = new CancellationScope();
    try {
      const result = await modelScope.run(() =>
        modelActs.condense.executeWithOptions({ ...MODEL_CALL, summary: `condense events ${range.from}–${range.to - 1}` }, [
          {
            conversationId: id,
            llm: options.agent.llm,
            from: folded ? folded.forgottenTo : range.from,
            to: range.to,
            ...(folded ? { previousSummary: folded.summary } : {}),
          },
        ]),
      );
      metrics = addUsage(metrics, result, iterations, 'condense');
      lastPromptTokens = 0;
      append({ kind: 'condensation', source: 'environment', summary: result.summary, forgottenFrom: range.from, forgottenTo: range.to });
    } catch (err) {
      if (isCancellation(err) || wasCancelled()) return;
      condenseRetryAt = visible + Math.max(10, Math.floor(c.maxEvents / 4));
      append({ kind: 'error', source: 'environment', message: `condensation failed (${failureMessage(err)}); going on with the full context` });
    } finally {
      modelScope = undefined;
    }
  }

  /** Whether the confirmation policy asks the user about any of these actions. */
  function asksConfirmation(actions: ActionEvent[], plans: Map<ActionEvent, ToolCallPlan | undefined>): boolean {
    const offered = offeredTools();
    return actions.some((a) =>
      needsConfirmation(options.confirmationPolicy, {
        tool: a.tool,
        arguments: a.arguments,
        plan: plans.get(a),
        inWorkflow: WORKFLOW_TOOLS.has(a.tool),
        // Only with a setup: older histories asked for unknown tools too, and must replay the same.
        unknown: setup !== undefined && !offered.includes(a.tool),
      }),
    );
  }

  /** Waits for approve / reject; true when the actions may run. */
  async function confirm(actions: ActionEvent[]): Promise<boolean> {
    pendingActions = actions;
    decision = undefined;
    setStatus('waiting_for_confirmation', describePending());
    const timeout = options.confirmationTimeoutMs;
    const answered =
      timeout === undefined
        ? (await condition(() => decision !== undefined || closeRequested), true)
        : await condition(() => decision !== undefined || closeRequested, timeout, {
            summary: `waiting for confirmation (rejected after ${formatDuration(timeout)})`,
          });
    const answer = decision ?? { approved: false, reason: answered ? 'the conversation was closed' : `no answer within ${formatDuration(timeout ?? 0)}` };
    pendingActions = [];
    decision = undefined;
    if (answer.approved && status === 'running') return true;
    for (const action of actions) {
      append(observation(action, { content: `The user rejected this action${answer.reason ? `: ${answer.reason}` : '.'}`, isError: true }));
    }
    if (status === 'waiting_for_confirmation') setStatus('running');
    return false;
  }

  // ---- start ----

  if (!carried) {
    upsertSearchAttributes([
      { key: ConversationStatusKey, value: status },
      { key: ConversationModelKey, value: model || 'default' },
    ]);
    // A close or pause may have come with the start (signals are handled first): honour them.
    if (input.firstMessage) addMessage(checkMessageText(input.firstMessage));
    if (input.run && !closeRequested) run();
    if (pauseAtStart && status === 'running' && patched('pause-at-start')) pause(pauseAtStart);
    publishDetails();
  }
  started = true;

  // A long conversation continues as new so its history stays small; the state travels as input.
  const continueAsNewEvery = options.continueAsNewEverySteps ?? DEFAULTS.continueAsNewEverySteps;
  let stepsThisRun = 0;
  let continueAsNewNow = false;

  for (;;) {
    if (stepsThisRun >= continueAsNewEvery || workflowInfo().continueAsNewSuggested) {
      continueAsNewNow = true;
      break;
    }
    if (status !== 'running' && !closeRequested) {
      // Idle (or paused, finished, …): wait for something to happen, at most the idle timeout.
      const seenWakeups = wakeups;
      const woke = await condition(
        () => closeRequested || status === 'running' || wakeups !== seenWakeups,
        options.idleTimeoutMs,
        { summary: `idle timeout: the conversation completes if nothing happens for ${formatDuration(options.idleTimeoutMs)}` },
      );
      if (!woke) break; // idle for too long: the workflow completes, its history stays readable
    }
    if (closeRequested) break;
    if (status === 'running') {
      await step();
      stepsThisRun++;
    }
    // A sub-agent's work ends with its run: it completes, and its parent reads the result.
    if (options.parent && childHasEnded(status)) break;
  }
  // Never continue (or complete) with an update half-handled; signals that arrive meanwhile are
  // handled first (the server rejects a completion that races a new signal, and the task re-runs).
  if ((!continueAsNewNow || closeRequested) && setup && options.mcpServers && Object.keys(options.mcpServers).length > 0) {
    // The conversation ends: stop its MCP servers on the workspace host (best effort, bounded).
    await toolActs.releaseTools
      .executeWithOptions(
        { scheduleToCloseTimeout: '1 minute', taskQueue: options.toolTaskQueue, retry: { maximumAttempts: 3 }, summary: 'stop MCP servers' },
        [id],
      )
      .catch(() => undefined);
  }
  // Waiting clients are answered now (they ask the next run); then no handler is left half-done.
  draining = true;
  await condition(allHandlersFinished);
  if (continueAsNewNow && !closeRequested) {
    const carry: CarriedState = {
      // Only what the model still needs; earlier runs answer for the rest (see EventLog).
      events: log.compact(),
      runs,
      status,
      iterations,
      runNumber,
      metrics,
      lastError,
      terminal: terminalState(),
      modelSeenEvents,
      runCost,
      toolState,
      ...(setup ? { setup } : {}),
      lastPromptTokens,
      condenseRetryAt,
      children,
      childCount,
      finalMessage,
    };
    await continueAsNew<typeof conversation>({ ...input, carried: carry });
  }
  return state();
}

// ---- small helpers ----

/** A host call that was never picked up, dropped because the conversation paused or closed. */
class NotStarted extends Error {}

// Tools inside the workflow finish at once; nothing can abort them, and the sandbox has no AbortController.
const NEVER_ABORTED = {
  aborted: false,
  reason: undefined,
  onabort: null,
  throwIfAborted: () => undefined,
  addEventListener: () => undefined,
  removeEventListener: () => undefined,
  dispatchEvent: () => false,
} as unknown as AbortSignal;
