// The conversation workflow: one per conversation, workflow id = conversation id.
// Loop: wait until running → model call → each tool call → repeat until the model stops, a limit
// is hit, or a pause arrives. All state is plain data so that it replays and continues as new.
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import {
  DEFAULTS,
  emptyMetrics,
  type ActionEvent,
  type CarriedState,
  type ConversationEvent,
  type ConversationInput,
  type ConversationState,
  type ConversationStatus,
  type Metrics,
  type ModelCallResult,
  type TerminalState,
  type ToolResult,
} from '../types.js';
import {
  ConversationModelKey,
  ConversationStatusKey,
  DESCRIPTIONS,
  addMessageUpdate,
  approveUpdate,
  closeSignal,
  rejectUpdate,
  eventsQuery,
  messageSignal,
  pauseSignal,
  resumeSignal,
  runUpdate,
  stateQuery,
  type PauseRequest,
} from './messages.js';
import { DEFAULT_SYSTEM_PROMPT, SECURITY_RISK_NOTE, condensationRange, isModelEvent, promptEvents } from './prompt.js';
import { LOCAL_TOOLS, runLocalTool, type Task } from './local-tools.js';
import { detectStuck } from './stuck.js';

// Model calls heartbeat often so that a pause can abort them, and a dead worker is noticed within
// the heartbeat timeout. WAIT_CANCELLATION_COMPLETED: a resumed run never overlaps the aborted call.
const MODEL_CALL: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // A short first retry gets a model call going again soon after its worker died.
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
};

// A retried tool attempt whose predecessor began reports an interruption instead of running again
// (see the activities), so a few attempts are enough to get that report through a second worker.
const TOOL_CALL: ActivityOptions = {
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '2 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 5 },
};

const PAUSABLE: ConversationStatus[] = ['running', 'waiting_for_confirmation'];

export async function conversation(input: ConversationInput): Promise<ConversationState> {
  const { options } = input;
  const id = workflowInfo().workflowId;
  const carried = input.carried;
  const model = options.agent.llm.model ?? '';
  const systemPrompt =
    (options.agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT) +
    (options.confirmationPolicy === 'never' ? '' : `\n${SECURITY_RISK_NOTE}`);

  const events: ConversationEvent[] = carried?.events ?? [];
  let status: ConversationStatus = carried?.status ?? 'idle';
  let iterations = carried?.iterations ?? 0;
  let runNumber = carried?.runNumber ?? 0;
  let metrics: Metrics = carried?.metrics ?? emptyMetrics();
  let lastError: string | null = carried?.lastError ?? null;
  let terminal: TerminalState = carried?.terminal ?? { cwd: options.workspace, env: {} };
  // Events the model has seen: user messages after this point are "pending".
  let modelSeenEvents = carried?.modelSeenEvents ?? 0;
  const tasks: Task[] = carried?.tasks ?? [];
  let runCost = carried?.runCost ?? 0;
  let lastPromptTokens = 0;
  let condenseRetryAt = 0;
  // Actions of the current reply waiting for approve / reject, and the answer once given.
  let pendingActions: ActionEvent[] = [];
  let decision: { approved: boolean; reason?: string } | undefined;
  let closeRequested = false;
  let wakeups = 0;
  let modelScope: CancellationScope | undefined;
  let toolScope: CancellationScope | undefined;
  let interruptRequested = false;

  const modelActs = proxyActivities<Activities>(MODEL_CALL);
  const toolActs = proxyActivities<Activities>({ ...TOOL_CALL, taskQueue: options.toolTaskQueue });

  // ---- state helpers ----

  function append(event: DistributiveOmit<ConversationEvent, 'index' | 'timestamp'>): void {
    events.push({ ...event, index: events.length, timestamp: new Date().toISOString() } as ConversationEvent);
    wakeups++;
  }

  function setStatus(next: ConversationStatus, reason?: string): void {
    if (next === status) return;
    status = next;
    append({ kind: 'status', source: 'environment', status: next, ...(reason ? { reason } : {}) });
    upsertSearchAttributes([{ key: ConversationStatusKey, value: next }]);
    publishDetails();
  }

  function pendingMessages(): number {
    let n = 0;
    for (let i = modelSeenEvents; i < events.length; i++) {
      const e = events[i];
      if (e?.kind === 'message' && e.source === 'user') n++;
    }
    return n;
  }

  function state(): ConversationState {
    return {
      id,
      status,
      iterations,
      runNumber,
      events: events.length,
      pendingMessages: pendingMessages(),
      metrics,
      lastError,
      workspace: options.workspace,
      model,
      terminal,
      closed: closeRequested,
      pendingActions: pendingActions.map((a) => ({ toolCallId: a.toolCallId, tool: a.tool, arguments: a.arguments })),
      runCost,
    };
  }

  function publishDetails(): void {
    const lastAction = [...events].reverse().find((e): e is ActionEvent => e.kind === 'action');
    setCurrentDetails(
      [
        `**Status:** ${status}${lastError && (status === 'error' || status === 'stuck') ? ` — ${lastError}` : ''}`,
        `**Step:** ${iterations} of ${options.maxIterations} (run ${runNumber})`,
        lastAction ? `**Last action:** \`${lastAction.tool}\` ${summarizeArgs(lastAction.arguments)}` : '',
        `**Pending messages:** ${pendingMessages()}`,
        `**Tokens:** ${metrics.promptTokens} in / ${metrics.completionTokens} out · **Cost:** $${metrics.accumulatedCost.toFixed(4)}`,
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
  }

  // ---- what users can do ----

  function validateMessage(text: unknown): string {
    if (typeof text !== 'string' || text.trim() === '') throw new Error('the message is empty');
    if (text.length > DEFAULTS.maxMessageChars) {
      throw new Error(`the message has ${text.length} characters; the limit is ${DEFAULTS.maxMessageChars}`);
    }
    if (closeRequested) throw new Error('the conversation is closed');
    return text;
  }

  function addMessage(text: string): number {
    append({ kind: 'message', source: 'user', text });
    // As in the seed: a message makes a finished or stuck conversation idle; paused stays paused.
    if (status === 'finished' || status === 'stuck') setStatus('idle');
    publishDetails();
    return events.length - 1;
  }

  function pause(request: PauseRequest = {}): void {
    if (!PAUSABLE.includes(status)) return;
    setStatus('paused', request.reason);
    append({ kind: 'pause', source: 'user', now: request.now === true, ...(request.reason ? { reason: request.reason } : {}) });
    modelScope?.cancel();
    if (request.now) {
      interruptRequested = true;
      toolScope?.cancel();
    }
  }

  function run(): void {
    if (closeRequested) throw new Error('the conversation is closed');
    if (status === 'waiting_for_confirmation') {
      decide({ approved: true }); // as in the seed SDK: run() while waiting approves
      return;
    }
    if (status === 'paused' && pendingActions.length > 0) {
      // Back to waiting: resuming never approves what the user has not seen approved.
      append({ kind: 'resume', source: 'user' });
      setStatus('waiting_for_confirmation', describePending());
      return;
    }
    if (status === 'running') return;
    if (status === 'finished' && pendingMessages() === 0) return; // nothing new to work on
    const wasPaused = status === 'paused';
    iterations = 0;
    runCost = 0;
    runNumber++;
    lastError = null;
    if (wasPaused) append({ kind: 'resume', source: 'user' });
    setStatus('running');
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
    if (!closeRequested) run();
  }, { description: DESCRIPTIONS.resume });
  setHandler(closeSignal, () => {
    closeRequested = true;
    modelScope?.cancel();
    wakeups++;
  }, { description: DESCRIPTIONS.close });
  setHandler(stateQuery, state, { description: DESCRIPTIONS.state });
  setHandler(eventsQuery, (fromIndex = 0, limit = 10_000) => eventsPage(events, fromIndex, limit), {
    description: DESCRIPTIONS.events,
  });
  setHandler(addMessageUpdate, (text) => ({ index: addMessage(text), status }), {
    description: DESCRIPTIONS.addMessage,
    validator: (text) => void validateMessage(text),
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
    const seen = events.length;
    const step = iterations + 1;
    modelScope = new CancellationScope();
    try {
      const reply = await modelScope.run(() =>
        modelActs.callModel.executeWithOptions({ ...MODEL_CALL, summary: `LLM ${model || 'default model'} · step ${step}` }, [
          { conversationId: id, step, llm: options.agent.llm, systemPrompt, eventCount: seen, tools: options.agent.tools },
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

  async function runTool(action: ActionEvent): Promise<ToolResult> {
    const args = action.arguments;
    if (!options.agent.tools.includes(action.tool as never)) {
      return {
        content: `Unknown tool "${action.tool}". Available tools: ${options.agent.tools.join(', ')}.`,
        isError: true,
      };
    }
    if (typeof args === 'string') {
      return { content: `The arguments of ${action.tool} are not valid JSON: ${args.slice(0, 500)}`, isError: true };
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return { content: `The arguments of ${action.tool} must be a JSON object; got: ${String(args).slice(0, 500)}`, isError: true };
    }
    const local = runLocalTool(action.tool, args as Record<string, unknown>, tasks);
    if (local) return local;

    const base = { conversationId: id, workspace: options.workspace, toolCallId: action.toolCallId, arguments: args };
    toolScope = new CancellationScope();
    try {
      if (action.tool === 'terminal') {
        const timeoutSec = Number((args as { timeout?: unknown }).timeout);
        const startToCloseTimeout = Number.isFinite(timeoutSec) && timeoutSec > 0 ? `${Math.ceil(timeoutSec) + 60} seconds` : TOOL_CALL.startToCloseTimeout;
        const result = await toolScope.run(() =>
          toolActs.runTerminal.executeWithOptions(
            { ...TOOL_CALL, startToCloseTimeout, taskQueue: options.toolTaskQueue, summary: `$ ${shorten(String((args as { command?: unknown }).command ?? ''), 120)}` },
            [{ ...base, terminal }],
          ),
        );
        terminal = result.terminal;
        return { content: result.content, isError: result.isError, ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}) };
      }
      const a = args as { command?: unknown; path?: unknown };
      return await toolScope.run(() =>
        toolActs.editFile.executeWithOptions(
          { ...TOOL_CALL, taskQueue: options.toolTaskQueue, summary: `file_editor ${String(a.command)} ${String(a.path)}` },
          [base],
        ),
      );
    } catch (err) {
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

  async function step(): Promise<void> {
    if (iterations >= options.maxIterations) {
      lastError = `reached the maximum of ${options.maxIterations} iterations in this run`;
      setStatus('error', lastError);
      return;
    }
    await maybeCondense();
    if (status !== 'running' || closeRequested) return;
    const reply = await callModel();
    if (!reply) return;
    lastPromptTokens = reply.usage.promptTokens;
    iterations++;
    metrics = addUsage(metrics, reply, iterations, 'step');
    runCost += reply.cost;

    if (reply.toolCalls.length === 0) {
      append({ kind: 'message', source: 'agent', text: reply.content ?? '' });
      if (status === 'running') setStatus('finished');
      return;
    }
    if (options.maxBudgetPerRunUsd !== undefined && runCost >= options.maxBudgetPerRunUsd && status === 'running') {
      // Over budget with work left: pause (not fail), so the user decides whether to spend more.
      pause({ reason: `budget: this run cost $${runCost.toFixed(4)}, the limit is $${options.maxBudgetPerRunUsd}` });
    }
    const actions: ActionEvent[] = [];
    reply.toolCalls.forEach((call, i) => {
      append({
        kind: 'action',
        source: 'agent',
        tool: call.name,
        toolCallId: call.id,
        arguments: parseArguments(call.arguments),
        replyId: reply.id,
        ...(i === 0 && reply.content ? { thought: reply.content } : {}),
      });
      actions.push(events[events.length - 1] as ActionEvent);
    });
    if (status === 'running' && !(await confirm(actions))) {
      publishDetails();
      return;
    }
    let finished = false;
    for (const action of actions) {
      if (status !== 'running' || closeRequested) {
        append(observation(action, { content: 'Not run: the conversation was paused before this call started.', isError: true }));
        continue;
      }
      const result = await runTool(action);
      append(observation(action, result));
      if (action.tool === 'finish' && !result.isError) finished = true;
    }
    publishDetails();
    if (finished && status === 'running') {
      setStatus('finished');
      return;
    }
    const stuck = status === 'running' ? detectStuck(events) : null;
    if (stuck) {
      lastError = stuck;
      setStatus('stuck', stuck);
    }
  }

  /** Summarises older events (an activity) when the prompt has grown past the condenser's limits. */
  async function maybeCondense(): Promise<void> {
    const c = options.condenser === false ? undefined : (options.condenser ?? DEFAULTS.condenser);
    if (!c) return;
    const visible = promptEvents(events).filter(isModelEvent).length;
    if (visible <= c.maxEvents && lastPromptTokens <= c.maxPromptTokens) return;
    if (visible < condenseRetryAt) return; // it failed recently: try again once the prompt has grown
    const range = condensationRange(events, c.keepFirst);
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

  function needsConfirmation(action: ActionEvent): boolean {
    if (options.confirmationPolicy === 'never' || LOCAL_TOOLS.includes(action.tool)) return false;
    if (options.confirmationPolicy === 'always') return true;
    const risk = (action.arguments as { security_risk?: unknown } | null)?.security_risk;
    return !(risk === 'LOW' || risk === 'MEDIUM'); // risky: HIGH, and anything unknown, asks
  }

  /** Waits for approve / reject when the policy asks; true when the actions may run. */
  async function confirm(actions: ActionEvent[]): Promise<boolean> {
    if (!actions.some(needsConfirmation)) return true;
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
    if (input.firstMessage) addMessage(validateMessage(input.firstMessage));
    if (input.run) run();
    publishDetails();
  }

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
  }
  // Never continue (or complete) with an update half-handled; signals that arrive meanwhile are
  // handled first (the server rejects a completion that races a new signal, and the task re-runs).
  await condition(allHandlersFinished);
  if (continueAsNewNow && !closeRequested) {
    const carry: CarriedState = {
      events,
      status,
      iterations,
      runNumber,
      metrics,
      lastError,
      terminal,
      modelSeenEvents,
      tasks,
      runCost,
    };
    await continueAsNew<typeof conversation>({ ...input, carried: carry });
  }
  return state();
}

// ---- small pure helpers ----

/** At most `limit` events from `fromIndex`, and about DEFAULTS.eventsPageChars characters (at least one). */
function eventsPage(events: readonly ConversationEvent[], fromIndex: number, limit: number): ConversationEvent[] {
  const page: ConversationEvent[] = [];
  let size = 0;
  for (let i = Math.max(0, fromIndex); i < events.length && page.length < limit; i++) {
    const event = events[i] as ConversationEvent;
    size += JSON.stringify(event).length;
    if (page.length > 0 && size > DEFAULTS.eventsPageChars) break;
    page.push(event);
  }
  return page;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function observation(action: ActionEvent, result: ToolResult): DistributiveOmit<ConversationEvent, 'index' | 'timestamp'> {
  return {
    kind: 'observation',
    source: 'environment',
    tool: action.tool,
    toolCallId: action.toolCallId,
    content: result.content,
    isError: result.isError,
    ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
  };
}

function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    // A JSON string is not an arguments object either; keep it apart from unparsable text.
    return typeof parsed === 'string' ? [parsed] : parsed;
  } catch {
    return raw; // kept as the string; runTool reports it as invalid JSON
  }
}

function addUsage(m: Metrics, r: Pick<ModelCallResult, 'cost' | 'usage' | 'latencyMs'>, step: number, kind: 'step' | 'condense'): Metrics {
  return {
    accumulatedCost: m.accumulatedCost + r.cost,
    promptTokens: m.promptTokens + r.usage.promptTokens,
    completionTokens: m.completionTokens + r.usage.completionTokens,
    cacheReadTokens: m.cacheReadTokens + r.usage.cacheReadTokens,
    llmCalls: m.llmCalls + 1,
    calls: [...(m.calls ?? []), { step, kind, ...r.usage, cost: r.cost, latencyMs: r.latencyMs }].slice(-100),
  };
}

function failureMessage(err: unknown): string {
  let e: unknown = err;
  // ActivityFailure wraps the real cause (an ApplicationFailure or a timeout).
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof TimeoutFailure) return `timed out (${e.timeoutType})`;
  if (e instanceof ApplicationFailure || e instanceof Error) return e.message;
  return String(e);
}

function cancelledDetails(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof CancelledFailure && typeof e.details?.[0] === 'string') return e.details[0];
  return '';
}

function summarizeArgs(args: unknown): string {
  if (args && typeof args === 'object') {
    const a = args as Record<string, unknown>;
    const main = a.command ?? a.path ?? a.message ?? a.thought;
    if (main !== undefined) return shorten(String(main), 80);
  }
  return '';
}

function formatDuration(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 48 ? `${Math.round(h / 24)} days` : h >= 1 ? `${Math.round(h)} hours` : `${Math.round(ms / 60_000)} minutes`;
}

function shorten(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}
