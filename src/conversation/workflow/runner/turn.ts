// One turn of the loop (a step): the setup if it is missing, a condensation if one is due, one
// model call, and the tools it asked for. It returns what happens next; `applyOutcome` records it.
// The turn is the step's glue over phases; each takes only its own slice of the run (a `Pick`).
// A phase with nothing to do is never awaited: the glue asks a synchronous `…Due` first, so old
// histories replay the same commands in the same order.
import { WORKFLOW_TOOLS } from '../../../tools/in-workflow.js';
import { reasoningText } from '../../../core/text.js';
import type { ActionEvent, CallSummary, ModelCallResult, MovedStep, ToolCallPlan, ToolResult } from '../../../core/types.js';
import { isPatched } from '../legacy/patches.js';
import { fallbackEvent, observation, parseArguments } from '../reply.js';
import { liveEvents } from '../../../time-travel/workflow/rewind-rules.js';
import { previousReplyTruncated, truncationVerdict } from '../truncation.js';
import type { ConversationActivities } from './activity-proxies.js';
import { asks, waitForAnswer } from './confirmation-gate.js';
import { condensationDue, condense, condenserSettings, type CondenserRun } from './condenser.js';
import { callModel, type ModelCallOutcome, type ModelCallRun } from './model-call.js';
import type { ConversationRun } from './conversation-run.js';
import { PHASE_COMMANDS, type Applies } from './phase-commands.js';
import { prepareTools, type SetupRun } from './setup.js';
import {
  checkpointAfterStep,
  checkpointBeforeFirstStep,
  firstCheckpointDue,
  firstCheckpointWithSetup,
  foldCheckpointInto,
  recordFoldedCheckpoint,
  stepCheckpointDue,
  type CheckpointRun,
} from '../../../time-travel/workflow/workspace-checkpoints.js';
import { runTool, type ToolCallRun } from './tool-dispatch.js';
import { waitUntil } from './durable-wait.js';
import { waitHibernation } from '../../../pool/workflow/pool-host.js';
import { moveToNewVersionDue } from './versioning.js';
import { addHookContext, hookPoint, hooksDue, type HooksRun } from '../../../hooks/workflow/hooks.js';
import type { HookDecision } from '../../../hooks/decision.js';
import { actingIn } from '../actor.js';
import { finishAsks, MAX_OUTPUT_TRIES, outputCheckText, outputTries } from '../output-check.js';

// A command in two sets (record, pause, setStatus) is one command whichever set names it: each
// function's view (TurnRun, ActionsRun, applyOutcome's) decides what it may apply.
const { markSessionStarted, markStopHookActive, promptsChecked, record, recordReply, reportToParent, pause } = PHASE_COMMANDS.turn;
const { askConfirmation, carryStep, clearConfirmation, setFinalMessage, setStatus, showDetails } = PHASE_COMMANDS.actions;
const { fail, markStuck } = PHASE_COMMANDS.outcome;

/** What a turn leads to. */
export type TurnOutcome =
  /** Go on with the next turn (if still running). */
  | { kind: 'continue' }
  /** The agent answered without tool calls, or called finish. */
  | { kind: 'finished' }
  /** A pause, a close or a rejection stopped the turn; the status already says so. */
  | { kind: 'stopped' }
  /** The same actions and results over and over. */
  | { kind: 'stuck'; reason: string }
  /** The conversation cannot go on: `event` says whether the error is also an event of its own. */
  | { kind: 'error'; message: string; event: boolean };

/** What the reply's tool calls read and write of the run (approval, hooks, the calls, the step's checkpoint). */
export type ActionsRun = Pick<
  ConversationRun,
  | 'closeRequested'
  | 'confirmation'
  | 'confirmationPolicy'
  | 'halted'
  | 'log'
  | 'moveWanted'
  | 'movingStep'
  | 'offeredTools'
  | 'runCost'
  | 'status'
> &
  Applies<'actions'> &
  CheckpointRun &
  HooksRun &
  ToolCallRun;

/** What a turn reads and writes of the run: its own counters and what its phases read. */
export type TurnRun = Pick<ConversationRun, 'iterations' | 'runNumber' | 'sessionStartDue' | 'stopHookActive' | 'uncheckedPrompts'> &
  Applies<'turn'> &
  ActionsRun &
  CondenserRun &
  ModelCallRun &
  SetupRun;

/** What the tool calls of a step came to, and whether anything ran on the host (for the step's checkpoint). */
export interface ActionsOutcome {
  outcome: TurnOutcome;
  touchedHost: boolean;
}

/** Takes one turn. Only `applyOutcome` changes the status at its end. */
export async function takeTurn(run: TurnRun, acts: ConversationActivities): Promise<TurnOutcome> {
  const { options } = run;
  if (run.iterations >= options.maxIterations) {
    return { kind: 'error', message: `reached the maximum of ${options.maxIterations} iterations in this run`, event: false };
  }
  if (!run.setup && isPatched('open-tools')) {
    const made = await prepareTools(run, acts, firstCheckpointWithSetup(run));
    if (made.kind === 'failed') return { kind: 'error', message: made.message, event: true };
    if (made.kind === 'cancelled' || run.halted) return { kind: 'stopped' };
  }
  // Step 0: the workspace before the first step (so the first step can be undone too).
  if (firstCheckpointDue(run)) {
    const folded = run.stepCheckpoints.takeFolded(0);
    if (folded) recordFoldedCheckpoint(run, folded);
    else await checkpointBeforeFirstStep(run, acts);
  }
  // Hooks before the model call: SessionStart once a run, UserPromptSubmit for each new user message.
  if (run.sessionStartDue()) {
    run.apply(markSessionStarted);
    if (hooksDue(run, 'SessionStart')) await startSession(run, acts);
  }
  const unchecked = run.uncheckedPrompts();
  run.apply(promptsChecked, unchecked.upTo);
  if (unchecked.prompts.length > 0 && hooksDue(run, 'UserPromptSubmit')) await submitPrompts(run, acts, unchecked.prompts);
  if (run.halted) return { kind: 'stopped' };
  const condenser = condensationDue(run);
  if (condenser) await condense(run, condenser, acts.model);
  if (run.halted) return { kind: 'stopped' };
  const called = await askModel(run, acts);
  if (called.kind === 'halted') return { kind: 'stopped' };
  // The previous step's checkpoint ran beside the model call; its event goes before this reply's.
  if (run.stepCheckpoints.pending) await run.stepCheckpoints.settled();
  if (called.kind === 'cancelled') return { kind: 'stopped' };
  if (called.kind === 'failed') return { kind: 'error', message: called.message, event: true };
  const { reply } = called;
  run.apply(recordReply, reply);
  // A reply from a fallback model says so (an event only: no command, old histories replay as before).
  const moved = fallbackEvent(reply, 'step');
  if (moved) run.apply(record, moved);
  // The parent's tree cost stays current while this sub-agent works (histories from before replay without it).
  if (options.parent && isPatched('child-cost-each-step')) run.apply(reportToParent);
  const { outcome, touchedHost } = await afterReply(run, acts, reply);
  // The step's checkpoint: the workspace as this step left it (shell commands' changes included).
  if (stepCheckpointDue(run)) {
    const folded = run.stepCheckpoints.takeFolded(run.steps);
    if (folded) recordFoldedCheckpoint(run, folded);
    else checkpointAfterStep(run, acts, touchedHost);
  }
  // Stop hooks: a block tells the agent why and it goes on instead of finishing.
  if (outcome.kind === 'finished' && run.status === 'running' && hooksDue(run, 'Stop')) return stopHooks(run, acts);
  return outcome;
}

/** What came of asking the model: its outcome, or halted (paused or closing) while condensing to fit. */
export type AskOutcome = ModelCallOutcome | { kind: 'halted' };

/** Calls the model; a prompt too long for its context window is condensed and asked once more (instead of failing). */
export async function askModel(run: TurnRun, acts: ConversationActivities): Promise<AskOutcome> {
  const called = await callModel(run, acts);
  if (called.kind !== 'failed' || !called.contextExceeded) return called;
  const settings = condenserSettings(run.options);
  const note = `the prompt is too long for the model's context window; ${settings ? 'condensing and trying once more' : 'condensation is off'}`;
  run.apply(record, { kind: 'error', source: 'environment', message: note });
  if (!settings || (await condense(run, settings, acts.model)).kind !== 'condensed') return called;
  if (run.halted) return { kind: 'halted' };
  return callModel(run, acts);
}

/** What a hook point came to: the run went on, or a hook paused it (the status says so). */
export type HookPointOutcome = { kind: 'went-on' } | { kind: 'paused' };

/** SessionStart hooks (asked only when due). A session's start cannot be blocked (as in Claude Code): the reason is shown, the run goes on. */
export async function startSession(
  run: HooksRun & Applies<'turn'> & Pick<TurnRun, 'runNumber'>,
  acts: ConversationActivities,
): Promise<HookPointOutcome> {
  const hooks = hookPoint(run, acts, 'SessionStart', { source: run.runNumber <= 1 ? 'startup' : 'resume' });
  if (!hooks) return { kind: 'went-on' };
  const d = await hooks;
  if (d.kind === 'block' && d.reason)
    run.apply(record, { kind: 'error', source: 'environment', message: `SessionStart hook: ${d.reason}` });
  addHookContext(run, 'SessionStart', d.context);
  return { kind: 'went-on' };
}

/** UserPromptSubmit hooks for each new user message (asked only when due): a block refuses the message. */
export async function submitPrompts(
  run: HooksRun & Applies<'turn'>,
  acts: ConversationActivities,
  prompts: readonly { index: number; text: string }[],
): Promise<HookPointOutcome> {
  let outcome: HookPointOutcome = { kind: 'went-on' };
  for (const message of prompts) {
    const hooks = hookPoint(run, acts, 'UserPromptSubmit', { prompt: message.text });
    if (!hooks) break;
    const d = await hooks;
    if (d.kind === 'block') {
      run.apply(record, {
        kind: 'refused',
        source: 'environment',
        messageIndex: message.index,
        reason: d.reason ?? 'refused by a UserPromptSubmit hook',
      });
    } else {
      addHookContext(run, 'UserPromptSubmit', d.context);
    }
    if (d.stop) {
      run.apply(pause, { reason: `a UserPromptSubmit hook stopped the run: ${d.stop}` });
      outcome = { kind: 'paused' };
    }
  }
  return outcome;
}

/** Stop hooks when the agent finished (asked only when due): a block tells the agent why, and it goes on. */
export async function stopHooks(
  run: HooksRun & Applies<'turn'> & Pick<TurnRun, 'stopHookActive'>,
  acts: ConversationActivities,
): Promise<TurnOutcome> {
  const hooks = hookPoint(run, acts, 'Stop', { stop_hook_active: run.stopHookActive });
  if (!hooks) return { kind: 'finished' };
  const d = await hooks;
  if (d.stop) run.apply(pause, { reason: `a Stop hook stopped the run: ${d.stop}` });
  else if (d.kind === 'block') {
    run.apply(markStopHookActive);
    addHookContext(run, 'Stop', d.reason ?? 'a Stop hook asks you to go on');
    return { kind: 'continue' };
  }
  return { kind: 'finished' };
}

/** The reply's tool calls (with confirmation when the policy asks); what happens next, and whether anything ran on the host. */
async function afterReply(run: ActionsRun, acts: ConversationActivities, reply: ModelCallResult): Promise<ActionsOutcome> {
  // Cut by the output cap: a text reply ends the run, cut tool calls get one more try, a second cut in a row is stuck.
  // (Histories from before it asked the model to go on after every cut text reply.)
  const verdict =
    reply.truncated && isPatched('truncation-ends-run')
      ? truncationVerdict(reply.toolCalls.length > 0, previousReplyTruncated(liveEvents(run.log.held())))
      : undefined;
  if (reply.toolCalls.length === 0) return { outcome: answer(run, reply, verdict), touchedHost: false };
  pauseOverBudget(run);
  const { actions, plans } = recordActions(run, reply);
  if (verdict?.kind === 'stuck') {
    for (const action of actions) {
      run.apply(record, observation(action, { content: 'Not run: the reply was cut by the output-token cap again.', isError: true }));
    }
    return { outcome: verdict, touchedHost: false };
  }
  // PreToolUse hooks: each call may be denied, sent to the user for approval, or run with other arguments.
  const pre =
    !run.halted && actions.some((a) => hooksDue(run, 'PreToolUse', a.tool))
      ? await preToolUse(run, acts, actions)
      : new Map<ActionEvent, HookDecision>();
  const hookAsks = [...pre.values()].some((d) => d.kind === 'ask');
  if (
    run.status === 'running' &&
    (hookAsks || asks(run.confirmationPolicy, actions, plans, run.offeredTools(), run.setup !== undefined)) &&
    !(await confirm(run, actions))
  ) {
    run.apply(showDetails);
    return { outcome: { kind: 'stopped' }, touchedHost: false };
  }
  return runActions(run, acts, actions, plans, pre);
}

/** A reply without tool calls: the agent's answer (or, cut by the output cap, what the verdict says). */
function answer(run: ActionsRun, reply: ModelCallResult, verdict: ReturnType<typeof truncationVerdict> | undefined): TurnOutcome {
  // Shown as the reply's thinking in events, the console and ACP (summaries are all a reader needs).
  const thinking = reasoningText(reply.reasoning);
  const checked = reply.outputCheck;
  run.apply(record, {
    kind: 'message',
    source: 'agent',
    text: reply.content ?? '',
    ...(reply.truncated ? { truncated: true } : {}),
    ...(thinking ? { thinking } : {}),
    call: callSummary(reply),
    ...(checked?.ok ? { output: checked.value } : {}),
  });
  if (verdict?.kind === 'stuck') return verdict;
  // Before the patch: not an answer; the next prompt tells the model (prompt.ts) and it goes on.
  if (reply.truncated && !verdict) return { kind: 'continue' };
  // An output schema: an answer that does not match goes back with what is wrong, a bounded number of times.
  if (checked && !checked.ok) return askForOutput(run, checked.errors);
  run.apply(setFinalMessage, reply.content ?? '', checked?.ok ? { value: checked.value } : undefined);
  return { kind: 'finished' };
}

/**
 * An answer that did not match the output schema (or finish, which gives none: `errors` empty):
 * the model is told, and asked again, until MAX_OUTPUT_TRIES answers in a row did not match.
 */
function askForOutput(run: ActionsRun, errors: string[]): TurnOutcome {
  const live = liveEvents(run.log.held());
  // finish again after it was told to answer: no answer is coming that way.
  if (errors.length === 0 && finishAsks(live) > 0)
    return { kind: 'error', message: 'finish was called again instead of a final answer matching the output schema', event: true };
  const tries = outputTries(live) + (errors.length > 0 ? 1 : 0);
  if (tries > MAX_OUTPUT_TRIES) {
    const message = `the answer did not match the output schema after ${MAX_OUTPUT_TRIES} tries: ${errors.join('; ')}`;
    return { kind: 'error', message, event: true };
  }
  run.apply(record, { kind: 'message', source: 'environment', text: outputCheckText(errors, tries), outputCheck: { try: tries, errors } });
  return { kind: 'continue' };
}

/** Over budget with work left: pause (not fail), so the user decides whether to spend more. */
function pauseOverBudget(run: ActionsRun): void {
  const limit = run.options.maxBudgetPerRunUsd;
  if (limit !== undefined && run.runCost >= limit && run.status === 'running') {
    run.apply(pause, { reason: `budget: this run cost $${run.runCost.toFixed(4)}, the limit is $${limit}` });
  }
}

/** Records the reply's tool calls as actions (the reply's thought, reasoning and cost on the first). */
function recordActions(
  run: ActionsRun,
  reply: ModelCallResult,
): { actions: ActionEvent[]; plans: Map<ActionEvent, ToolCallPlan | undefined> } {
  const actions: ActionEvent[] = [];
  const plans = new Map<ActionEvent, ToolCallPlan | undefined>();
  reply.toolCalls.forEach((call, i) => {
    const [index] = run.apply(record, {
      kind: 'action',
      source: 'agent',
      tool: call.name,
      toolCallId: call.id,
      arguments: parseArguments(call.arguments),
      replyId: reply.id,
      ...(call.itemId ? { itemId: call.itemId } : {}),
      ...(i === 0 && reply.content ? { thought: reply.content } : {}),
      // Reasoning goes back with the tool results (Anthropic's thinking with signatures, OpenAI's items with encrypted content).
      ...(i === 0 && reply.reasoning?.length ? { reasoning: reply.reasoning } : {}),
      ...(i === 0 && reply.truncated ? { truncated: true } : {}),
      ...(i === 0 ? { call: callSummary(reply) } : {}),
    });
    const action = run.log.get(index as number) as ActionEvent;
    actions.push(action);
    plans.set(action, call.plan);
  });
  return { actions, plans };
}

/** PreToolUse hooks for each call (asked only when some are due and the run goes on): their decisions. */
async function preToolUse(
  run: ActionsRun,
  acts: ConversationActivities,
  actions: readonly ActionEvent[],
): Promise<Map<ActionEvent, HookDecision>> {
  const pre = new Map<ActionEvent, HookDecision>();
  for (const action of actions) {
    if (run.halted) continue;
    const hooks = hookPoint(
      run,
      acts,
      'PreToolUse',
      { tool_name: action.tool, tool_input: toolInput(action.arguments), tool_use_id: action.toolCallId },
      action.tool,
    );
    if (hooks) pre.set(action, await hooks);
  }
  return pre;
}
/**
 * The first thing a run does when its conversation moved to a new version mid-step: the rest of
 * that step. A `wait` goes on until its deadline (calls after it in the reply are told they did not
 * run); actions waiting for approval wait again and run once approved. What happens next, as a turn's.
 */
export async function finishMovedStep(run: ActionsRun, acts: ConversationActivities, step: MovedStep): Promise<TurnOutcome> {
  const held = run.log.held();
  const byId = (id: string) => held.find((e): e is ActionEvent => e.kind === 'action' && e.toolCallId === id);
  if (step.kind === 'wait') {
    const action = byId(step.toolCallId);
    if (!action) return { kind: 'continue' };
    const result = await waitUntil(
      run,
      action,
      { until: step.until, reason: step.reason, capped: step.capped, started: Date.now() },
      waitHibernation(run),
    );
    if (run.movingStep) return { kind: 'continue' }; // moved again before it ended
    run.apply(record, observation(action, result));
    for (const id of step.rest) {
      const later = byId(id);
      if (later)
        run.apply(
          record,
          observation(later, {
            content: 'Not run: the conversation moved to a new version of the worker before this call started.',
            isError: true,
          }),
        );
    }
    run.apply(showDetails);
    return { kind: 'continue' };
  }
  const actions = step.toolCallIds.map(byId).filter((a): a is ActionEvent => a !== undefined);
  if (actions.length === 0) {
    if (run.status === 'waiting_for_confirmation') run.apply(setStatus, 'running');
    return { kind: 'continue' };
  }
  if (!(await confirm(run, actions))) {
    run.apply(showDetails);
    return { kind: 'stopped' };
  }
  const { outcome, touchedHost } = await runActions(run, acts, actions, new Map(), new Map());
  if (stepCheckpointDue(run)) checkpointAfterStep(run, acts, touchedHost);
  return outcome;
}

/** What a model call used and cost, for the events (people read it; the model never does). */
function callSummary(reply: ModelCallResult): CallSummary {
  return { model: reply.model, cost: reply.cost, latencyMs: reply.latencyMs, ...reply.usage };
}

/** A tool call's arguments as a hook sees them (always an object). */
function toolInput(args: unknown): Record<string, unknown> {
  return args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : { raw: args };
}

/** Runs the reply's tool calls in order (its sub-agents start together); what happens next. */
async function runActions(
  run: ActionsRun,
  acts: ConversationActivities,
  actions: readonly ActionEvent[],
  plans: ReadonlyMap<ActionEvent, ToolCallPlan | undefined>,
  pre: ReadonlyMap<ActionEvent, HookDecision>,
): Promise<ActionsOutcome> {
  const blocked = (action: ActionEvent) => pre.get(action)?.kind === 'block';
  const delegated = startDelegates(run, acts, actions, pre);
  let finished = false;
  // Whether anything ran that may have changed files (a host tool, a sub-agent in the same workspace).
  let touchedHost = delegated.size > 0;
  // The last host call takes the step's checkpoint with it, when nothing can change files after it.
  const lastHost = actions.filter((a) => !WORKFLOW_TOOLS.has(a.tool) && !blocked(a)).pop();
  for (const action of actions) {
    const started = delegated.get(action);
    if (notRun(run, action, started === undefined, pre.get(action))) continue;
    if (!WORKFLOW_TOOLS.has(action.tool)) touchedHost = true;
    const fold =
      action === lastHost && foldCheckpointInto(run, hooksDue(run, 'PostToolUse', action.tool) !== undefined, delegated.size > 0);
    const done = await runAction(run, acts, action, {
      started,
      plan: plans.get(action),
      decision: pre.get(action),
      checkpointStep: fold ? run.steps : undefined,
    });
    if (done.kind === 'moved') {
      // A drain moved the conversation in the middle of this call's `wait`: the rest of the step goes with it.
      run.apply(carryStep, { ...done.step, rest: actions.slice(actions.indexOf(action) + 1).map((a) => a.toolCallId) });
      return { outcome: { kind: 'continue' }, touchedHost };
    }
    if (done.kind === 'finished') finished = true;
    if (done.kind === 'failed') {
      run.apply(showDetails);
      return { outcome: { kind: 'error', message: done.message, event: true }, touchedHost };
    }
  }
  run.apply(showDetails);
  if (finished) return { outcome: { kind: 'finished' }, touchedHost };
  const stuck = run.status === 'running' ? run.log.stuckReason() : null;
  return { outcome: stuck ? { kind: 'stuck', reason: stuck } : { kind: 'continue' }, touchedHost };
}

/** What a PreToolUse hook made of a call: the model's call, or the call with the arguments the hook gave instead. */
function asRun(action: ActionEvent, decision: HookDecision | undefined): ActionEvent {
  const updated = decision?.updatedInput;
  return updated ? { ...action, arguments: updated } : action;
}

/** Sub-agents of one reply start together and work in parallel (their results are read in order). */
function startDelegates(
  run: ActionsRun,
  acts: ConversationActivities,
  actions: readonly ActionEvent[],
  pre: ReadonlyMap<ActionEvent, HookDecision>,
): Map<ActionEvent, Promise<ToolResult>> {
  const delegated = new Map<ActionEvent, Promise<ToolResult>>();
  if (run.status !== 'running' || run.closeRequested) return delegated;
  const delegates = actions.filter((a) => a.tool === 'delegate' && pre.get(a)?.kind !== 'block');
  for (const action of delegates) delegated.set(action, runTool(run, acts, asRun(action, pre.get(action)), undefined, delegates.length));
  return delegated;
}

/** Records why a call does not run (the run halted before it started, or a PreToolUse hook blocked it); false when it runs. */
function notRun(run: ActionsRun, action: ActionEvent, notStarted: boolean, decision: HookDecision | undefined): boolean {
  if (notStarted && run.halted) {
    run.apply(record, observation(action, { content: 'Not run: the conversation was paused before this call started.', isError: true }));
    return true;
  }
  if (decision?.kind !== 'block') return false;
  const reason = decision.reason ?? 'no reason given';
  run.apply(record, observation(action, { content: `Not run: a PreToolUse hook blocked this call: ${reason}`, isError: true }));
  return true;
}

/** What came of one tool call: recorded (finish among them), or moved with the conversation mid-`wait`. */
export type ActionOutcome =
  | { kind: 'recorded' }
  | { kind: 'finished' }
  /** The conversation cannot go on (finish called again where a structured answer is due). */
  | { kind: 'failed'; message: string }
  | { kind: 'moved'; step: MovedStep & { kind: 'wait' } };

/** Runs one tool call (or reads a started sub-agent's result), its PostToolUse hooks, and records the observation. */
export async function runAction(
  run: ActionsRun,
  acts: ConversationActivities,
  action: ActionEvent,
  call: {
    started: Promise<ToolResult> | undefined;
    plan: ToolCallPlan | undefined;
    decision: HookDecision | undefined;
    checkpointStep: number | undefined;
  },
): Promise<ActionOutcome> {
  const { decision } = call;
  const input = asRun(action, decision);
  let result = await (call.started ?? runTool(run, acts, input, call.plan, 1, call.checkpointStep));
  const moving = run.movingStep;
  if (moving?.kind === 'wait' && moving.toolCallId === action.toolCallId) return { kind: 'moved', step: moving };
  if (decision?.updatedInput)
    result = {
      ...result,
      content: `(A PreToolUse hook changed the arguments to ${JSON.stringify(decision.updatedInput)}.)\n${result.content}`,
    };
  // PostToolUse hooks see the result; what they say (a block's reason, their context) reaches the model with it.
  const hooks = hookPoint(
    run,
    acts,
    'PostToolUse',
    { tool_name: action.tool, tool_input: toolInput(input.arguments), tool_response: result, tool_use_id: action.toolCallId },
    action.tool,
  );
  if (hooks) {
    const post = await hooks;
    const notes = [post.kind === 'block' ? post.reason : undefined, post.context].filter((t): t is string => Boolean(t));
    if (notes.length > 0) result = { ...result, content: `${result.content}\n[PostToolUse hook] ${notes.join('\n')}` };
    if (post.stop) run.apply(pause, { reason: `a PostToolUse hook stopped the run: ${post.stop}` });
  }
  run.apply(record, observation(action, result));
  if (action.tool !== 'finish' || result.isError) return { kind: 'recorded' };
  // finish gives prose: with an output schema the answer itself is asked for next.
  if (run.options.outputSchema) {
    const asked = askForOutput(run, []);
    return asked.kind === 'error' ? { kind: 'failed', message: asked.message } : { kind: 'recorded' };
  }
  run.apply(setFinalMessage, result.content);
  return { kind: 'finished' };
}

/** Waits for approve / reject; true when the actions may run (otherwise they are recorded as rejected). */
async function confirm(run: ActionsRun, actions: ActionEvent[]): Promise<boolean> {
  run.apply(askConfirmation, actions);
  // A pooled conversation hibernates while the answer is long in coming (the folder goes back to the pool meanwhile).
  const answer = await waitForAnswer(
    { decision: () => run.confirmation?.decision, clear: () => run.apply(clearConfirmation) },
    run.options.confirmationTimeoutMs,
    () => run.closeRequested || run.moveWanted(),
    waitHibernation(run),
  );
  // A drain moved the conversation while it waited: the actions stay pending, on the new version.
  if (!answer.answered && !run.closeRequested && run.moveWanted() && moveToNewVersionDue()) {
    run.apply(carryStep, { kind: 'approval', toolCallIds: actions.map((a) => a.toolCallId) });
    return false;
  }
  if (answer.approved && run.status === 'running') return true;
  // A rejection made through the team API names its actor on what it records.
  actingIn(answer.by, () => {
    for (const action of actions) {
      run.apply(
        record,
        observation(action, { content: `The user rejected this action${answer.reason ? `: ${answer.reason}` : '.'}`, isError: true }),
      );
    }
    if (run.status === 'waiting_for_confirmation') run.apply(setStatus, 'running');
  });
  return false;
}

/** Records what a turn led to: the status it ends in (finished, stuck, error), if any. */
export function applyOutcome(run: Pick<ConversationRun, 'status'> & Applies<'outcome'>, outcome: TurnOutcome): void {
  switch (outcome.kind) {
    case 'finished':
      if (run.status === 'running') run.apply(setStatus, 'finished');
      return;
    case 'stuck':
      run.apply(markStuck, outcome.reason);
      return;
    case 'error':
      run.apply(fail, outcome.message, { event: outcome.event });
      return;
    case 'continue':
    case 'stopped':
      return;
  }
}
