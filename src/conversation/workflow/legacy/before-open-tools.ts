// Conversations from before every tool went through one definition (patch 'open-tools'): no setup
// step, terminal and file_editor had an activity each, and think / finish / task_tracker accepted
// looser arguments. Only histories from then take these paths; they replay the same.
import type { CancellationScope } from '@temporalio/workflow';
import type { ActionEvent, RunToolResult, TerminalState } from '../../../core/types.js';
import { TOOL_CALL } from '../activity-options.js';
import { oneLine } from '../../../core/text.js';
import type { ActivityProxies } from '../runner/activity-proxies.js';

/** What think / finish / task_tracker accepted before they had schemas: a finish without a string message, notes that were not strings. */
export function lenientArguments(tool: string, args: unknown): unknown {
  const a = (args ?? {}) as Record<string, unknown>;
  if (tool === 'finish') return { message: typeof a.message === 'string' ? a.message : '' };
  if (tool === 'task_tracker' && Array.isArray(a.task_list)) {
    return {
      ...a,
      task_list: a.task_list.map((t: unknown) => {
        const task = (t ?? {}) as Record<string, unknown>;
        return { ...task, notes: typeof task.notes === 'string' ? task.notes : undefined, status: task.status ?? 'todo' };
      }),
    };
  }
  return args;
}

/** What the old path needs of the conversation. */
export interface BeforeOpenToolsCall {
  conversationId: string;
  workspace: string;
  toolTaskQueue: string;
  terminal: TerminalState;
  scope: CancellationScope;
  activities: ActivityProxies;
}

/** terminal and file_editor as their own activities (runTerminal / editFile), the way those conversations ran them. */
export async function runOnHostBeforeOpenTools(action: ActionEvent, c: BeforeOpenToolsCall): Promise<RunToolResult> {
  const args = action.arguments as { command?: unknown; path?: unknown; timeout?: unknown };
  const base = { conversationId: c.conversationId, workspace: c.workspace, toolCallId: action.toolCallId, arguments: args };
  if (action.tool === 'terminal') {
    const timeoutSec = Number(args.timeout);
    const startToCloseTimeout =
      Number.isFinite(timeoutSec) && timeoutSec > 0 ? `${Math.ceil(timeoutSec) + 60} seconds` : TOOL_CALL.startToCloseTimeout;
    const result = await c.scope.run(() =>
      c.activities.runTerminal.executeWithOptions(
        { ...TOOL_CALL, startToCloseTimeout, taskQueue: c.toolTaskQueue, summary: `$ ${oneLine(String(args.command ?? ''), 120)}` },
        [{ ...base, terminal: c.terminal }],
      ),
    );
    const { terminal, ...rest } = result;
    return { ...rest, state: terminal };
  }
  return c.scope.run(() =>
    c.activities.editFile.executeWithOptions(
      { ...TOOL_CALL, taskQueue: c.toolTaskQueue, summary: `file_editor ${String(args.command)} ${String(args.path)}` },
      [base],
    ),
  );
}
