// Sub-agents (delegate calls): child conversations, what the parent knows of each, and handles to
// reach the open ones. The pure rules (ids, tools, limits) are in ../delegation.ts.
import { startChild } from '@temporalio/workflow';
import { describeInvalid } from '../../tools/define.js';
import { DelegateArgs } from '../delegate.js';
import type { ActionEvent, ConversationState, ToolResult } from '../../core/types.js';
import { childId, childInput, childMaxIterations, childObservation, childTools, DEFAULT_MAX_DEPTH } from './delegation.js';
import { oneLine } from '../../core/text.js';
import { closeSignal, pauseSignal, TenantKey } from '../../conversation/workflow/messages.js';
import { isPatched } from '../../conversation/workflow/legacy/patches.js';
import { failureMessage } from '../../conversation/workflow/reply.js';
import type { ConversationRun } from '../../conversation/workflow/runner/conversation-run.js';
import { PHASE_COMMANDS, type Applies } from '../../conversation/workflow/runner/phase-commands.js';

const { addChildWork, childStarted, childUpdated, record, recordAndShow } = PHASE_COMMANDS.delegating;

/** What a delegate call reads and writes of its (parent) run. */
export type DelegatingRun = Pick<
  ConversationRun,
  | 'childCount'
  | 'children'
  | 'closeRequested'
  | 'currentOptions'
  | 'depth'
  | 'id'
  | 'iterations'
  | 'offeredTools'
  | 'options'
  | 'runCost'
  | 'status'
> &
  Applies<'delegating'>;

/** The conversation workflow's type name: children are conversations too. */
const CONVERSATION_WORKFLOW = 'conversation';

/**
 * A delegate call: a child conversation (same workflow, id `<id>.sub-<n>`) with the task as its
 * first message. Its final answer is the observation; its iterations and cost count against the
 * parent's run. `siblings`: how many delegate calls the same reply made (they share the limits).
 */
export async function delegate(run: DelegatingRun, action: ActionEvent, siblings = 1): Promise<ToolResult> {
  const { options } = run;
  const parsed = DelegateArgs.safeParse(action.arguments);
  if (!parsed.success) return { content: describeInvalid('delegate', parsed.error), isError: true };
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (run.depth >= maxDepth) return { content: `Sub-agents may not nest deeper than ${maxDepth}: do this task yourself.`, isError: true };
  const granted = childTools(run.offeredTools(), parsed.data.tools, run.depth + 1, maxDepth);
  if ('error' in granted) return { content: granted.error, isError: true };
  const { task } = parsed.data;
  const cid = childId(run.id, run.childCount + 1);
  run.apply(childStarted, { id: cid, status: 'running', cost: 0, task });
  run.apply(record, { kind: 'child', source: 'environment', childId: cid, toolCallId: action.toolCallId, task, status: 'started' });
  const childConversation = childInput(run.currentOptions(), {
    parentId: run.id,
    depth: run.depth,
    task,
    tools: granted.tools,
    requested: parsed.data.tools !== undefined,
    maxIterations: childMaxIterations(parsed.data.max_iterations, options.maxIterations, run.iterations, siblings),
    budgetLeft: options.maxBudgetPerRunUsd === undefined ? undefined : Math.max(0, options.maxBudgetPerRunUsd - run.runCost),
  });
  // The child is in its parent's tenant: listed under it, and sharing its fairness key (children
  // inherit the priority; the attribute is set here). Histories from before tenants never ask.
  const tenant = options.tenant !== undefined && isPatched('tenant-sub-agents') ? options.tenant : undefined;
  let ended: ConversationState;
  try {
    const handle = await startChild(CONVERSATION_WORKFLOW, {
      workflowId: cid,
      args: [childConversation],
      ...(tenant !== undefined ? { typedSearchAttributes: [{ key: TenantKey, value: tenant }], priority: { fairnessKey: tenant } } : {}),
      staticSummary: oneLine(`sub-agent of ${run.id}: ${task}`, 200),
      staticDetails: `**Task:** ${task}\n\n**Parent:** \`${run.id}\` · **Tools:** ${granted.tools.join(', ')} · **Depth:** ${run.depth + 1} of ${maxDepth}`,
    });
    run.children.opened(cid, handle);
    // A pause or close that came while the child was starting reaches it now.
    if (run.closeRequested) handle.signal(closeSignal).catch(() => undefined);
    else if (run.status === 'paused') handle.signal(pauseSignal, {}).catch(() => undefined);
    ended = (await handle.result()) as ConversationState;
  } catch (err) {
    run.apply(childUpdated, cid, { status: 'error' });
    run.apply(record, { kind: 'child', source: 'environment', childId: cid, toolCallId: action.toolCallId, task, status: 'error' });
    return { content: `The sub-agent ${cid} failed: ${failureMessage(err)}`, isError: true };
  } finally {
    run.children.closed(cid);
  }
  const cost = ended.metrics.accumulatedCost;
  run.apply(childUpdated, cid, { status: ended.status, cost });
  run.apply(addChildWork, ended.iterations, cost);
  run.apply(recordAndShow, {
    kind: 'child',
    source: 'environment',
    childId: cid,
    toolCallId: action.toolCallId,
    task,
    status: ended.status,
  });
  return childObservation(cid, ended);
}
