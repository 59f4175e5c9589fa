// Running one tool call: checks of the arguments, tools that run inside the workflow, sub-agents,
// and host tools as an activity on the workspace host's queue (waiting for that host when no worker
// there picks the call up).
import { isCancellation, type CancellationScope } from '@temporalio/workflow';
import type { AnyTool, ToolContext } from '../../../tools/define.js';
import { describeInvalid } from '../../../tools/define.js';
import { WORKFLOW_TOOLS } from '../../../tools/in-workflow.js';
import type { ActionEvent, ConversationSetup, RunToolResult, ToolCallPlan, ToolResult } from '../../../core/types.js';
import { checkImageRefs } from '../../../images/workflow/image-refs.js';
import { TOOL_CALL } from '../activity-options.js';
import { oneLine } from '../../../core/text.js';
import { lenientArguments, runOnHostBeforeOpenTools } from '../legacy/before-open-tools.js';
import { failureMessage } from '../reply.js';
import { interruptedPartial, interruptedResult } from '../../../tools/interrupted.js';
import type { ConversationActivities } from './activity-proxies.js';
import type { ConversationRun } from './conversation-run.js';
import { PHASE_COMMANDS, type Applies } from './phase-commands.js';
import { durableWait, type WaitRun } from './durable-wait.js';
import { NotStarted, onHost, type HostCallRun } from './host-call.js';
import { OutcomeUnknown } from './host-errors.js';
import { waitHibernation, type MidStepHibernateRun } from '../../../pool/workflow/pool-host.js';
import { delegate, type DelegatingRun } from '../../../sub-agents/workflow/sub-agents.js';

const { setToolState } = PHASE_COMMANDS.toolCall;

/** What running a tool call reads and writes of the run (sub-agents, waits and host calls included). */
export type ToolCallRun = Pick<ConversationRun, 'setup' | 'stepCheckpoints' | 'terminalState' | 'toolStateOf'> &
  Applies<'toolCall'> &
  // What the parts it calls read and write: a sub-agent, a wait, a host call.
  DelegatingRun &
  WaitRun &
  HostCallRun &
  MidStepHibernateRun;

/** Runs one tool call of the model's and says what came of it (never throws). */
export async function runTool(
  run: ToolCallRun,
  acts: ConversationActivities,
  action: ActionEvent,
  plan: ToolCallPlan | undefined,
  siblings = 1,
  checkpointStep?: number,
): Promise<ToolResult> {
  const args = action.arguments;
  const offered = run.offeredTools();
  if (!offered.includes(action.tool)) {
    return { content: `Unknown tool "${action.tool}". Available tools: ${offered.join(', ')}.`, isError: true };
  }
  if (typeof args === 'string') {
    return { content: `The arguments of ${action.tool} are not valid JSON: ${args.slice(0, 500)}`, isError: true };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { content: `The arguments of ${action.tool} must be a JSON object; got: ${String(args).slice(0, 500)}`, isError: true };
  }
  if (action.tool === 'delegate') return delegate(run, action, siblings);
  // A pooled conversation hibernates in a long wait (the folder goes back to the pool meanwhile).
  if (action.tool === 'wait') return durableWait(run, action, waitHibernation(run));
  const inWorkflow = WORKFLOW_TOOLS.get(action.tool);
  if (inWorkflow) return runInWorkflow(run, inWorkflow, action);

  const flight = run.inFlight;
  const scope = flight.beginTool();
  try {
    const setup = run.setup;
    const result = setup
      ? await runOnHost(run, acts, scope, action, plan, setup, checkpointStep)
      : await runOnHostBeforeOpenTools(action, {
          conversationId: run.id,
          workspace: run.options.workspace,
          toolTaskQueue: run.options.toolTaskQueue,
          terminal: run.terminalState(),
          scope,
          activities: acts.tool,
        });
    if (result.state !== undefined) run.apply(setToolState, action.tool, result.state);
    if (checkpointStep !== undefined && result.checkpoint) run.stepCheckpoints.noteFolded(checkpointStep, result.checkpoint);
    return {
      content: result.content,
      isError: result.isError,
      ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
      // References only (file_editor view of an image): the tool put the bytes in the object store.
      ...(result.images?.length ? { images: checkImageRefs(result.images) } : {}),
    };
  } catch (err) {
    if (err instanceof NotStarted) {
      return { content: 'Not run: the conversation was paused (or closed) while waiting for the workspace host.', isError: true };
    }
    if (err instanceof OutcomeUnknown) return { content: err.message, isError: true };
    if (isCancellation(err) || flight.interruptRequested) return interruptedResult(interruptedPartial(err));
    return { content: `The tool failed: ${failureMessage(err)}`, isError: true };
  } finally {
    flight.endTool();
  }
}

/** Every host tool, built-in, yours or an MCP server's: one activity on the workspace's host. */
function runOnHost(
  run: ToolCallRun,
  acts: ConversationActivities,
  scope: CancellationScope,
  action: ActionEvent,
  plan: ToolCallPlan | undefined,
  current: ConversationSetup,
  checkpointStep: number | undefined,
): Promise<RunToolResult> {
  const { options } = run;
  const spec = current.tools.find((t) => t.name === action.tool);
  const mcpConfig = spec?.mcp ? options.mcpServers?.[spec.mcp.server] : undefined;
  const timeout = plan?.timeoutSeconds;
  return scope.run(() =>
    onHost(
      run,
      // Read at each try: a pooled call that moved host runs with the state moved with it (the
      // terminal's directory on the new host). Only an activity's input: replay compares none.
      (extra, rescheduled) => {
        const state = run.toolStateOf(action.tool);
        return acts.tool.runTool.executeWithOptions(
          {
            ...TOOL_CALL,
            ...(timeout ? { startToCloseTimeout: `${Math.ceil(timeout)} seconds` } : {}),
            taskQueue: options.toolTaskQueue,
            summary: oneLine(plan?.summary ?? action.tool, 120),
            ...extra,
          },
          [
            {
              conversationId: run.id,
              workspace: options.workspace,
              toolCallId: action.toolCallId,
              tool: action.tool,
              arguments: action.arguments,
              ...(state !== undefined ? { state } : {}),
              ...(spec?.mcp && mcpConfig ? { mcp: { ...spec.mcp, config: mcpConfig } } : {}),
              ...(rescheduled ? { rescheduled: true } : {}),
              ...(checkpointStep !== undefined ? { checkpoint: { step: checkpointStep } } : {}),
            },
          ],
        );
      },
      true,
    ),
  );
}

/** think, finish, task_tracker: deterministic, so they run here and a replay recomputes them. */
async function runInWorkflow(run: ToolCallRun, tool: AnyTool, action: ActionEvent): Promise<ToolResult> {
  // Conversations from before tools were open accepted looser arguments; they replay the same.
  const parsed = tool.parameters.safeParse(run.setup ? action.arguments : lenientArguments(tool.name, action.arguments));
  if (!parsed.success) return { content: describeInvalid(tool.name, parsed.error), isError: true };
  const ctx: ToolContext = {
    conversationId: run.id,
    toolCallId: action.toolCallId,
    workspace: run.options.workspace,
    signal: NEVER_ABORTED,
    heartbeat: () => undefined,
    secrets: {},
    state: run.toolStateOf(tool.name),
    attempt: 1,
    exec: () => Promise.reject(new Error('ctx.exec is not available to tools that run inside the workflow')),
  };
  const out = await tool.execute(parsed.data, ctx);
  if (typeof out === 'string') return { content: out, isError: false };
  if (out.state !== undefined) run.apply(setToolState, tool.name, out.state);
  return { content: out.content, isError: out.isError === true };
}

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
