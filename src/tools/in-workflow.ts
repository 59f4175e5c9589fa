// The tools that need no machine: think, finish and task_tracker. Defined like every other tool, but
// they run inside the workflow (deterministic, no I/O), so no Node imports here.
import { defineTool, type AnyTool } from './define.js';
import { DelegateTool } from '../sub-agents/delegate.js';
import { FinishArgs, TaskTrackerArgs, ThinkArgs, WaitArgs } from './schemas.js';

export interface Task {
  title: string;
  notes?: string;
  status: 'todo' | 'in_progress' | 'done';
}

/** `think`: the model writes down its reasoning; nothing runs (always given to an agent). */
export const ThinkTool = {
  ...defineTool({
    name: 'think',
    description: 'Think out loud; use it to plan or reason about what you saw.',
    parameters: ThinkArgs,
    retry: 'repeat',
    execute: () => 'Your thought has been logged.',
  }),
  inWorkflow: true,
} as const;

/** `finish`: the model ends the run with its answer (always given to an agent). */
export const FinishTool = {
  ...defineTool({
    name: 'finish',
    description: 'Finish the task, with a short summary of what you did.',
    parameters: FinishArgs,
    retry: 'repeat',
    execute: ({ message }) => message ?? '',
  }),
  inWorkflow: true,
} as const;

/** `task_tracker`: the model keeps a plan (a task list) in the conversation. */
export const TaskTrackerTool = {
  ...defineTool<typeof TaskTrackerArgs, Task[]>({
    name: 'task_tracker',
    description: 'Keep a plan of tasks: view it, or plan (replace it).',
    parameters: TaskTrackerArgs,
    retry: 'repeat',
    execute: ({ command, task_list }, ctx) => {
      const tasks = ctx.state ?? [];
      if (command === 'view') return formatTasks(tasks);
      if (!task_list) return { content: 'task_tracker plan: the required argument "task_list" is missing.', isError: true };
      const next: Task[] = task_list.map((t) => ({
        title: t.title,
        status: t.status,
        ...(t.notes !== undefined ? { notes: t.notes } : {}),
      }));
      return { content: `Task list updated.\n${formatTasks(next)}`, state: next };
    },
  }),
  inWorkflow: true,
} as const;

/**
 * A durable wait: the conversation sleeps on a Temporal timer (no activity held, no process needed)
 * and goes on when the time comes, when a user message arrives, or on resume. The workflow runs it
 * itself (runner/durable-wait.ts); `execute` is never called.
 */
export const WaitTool = {
  ...defineTool({
    name: 'wait',
    description:
      'Wait durably for a while (e.g. for CI, or to check again later): give seconds or until, and the reason. Nothing runs meanwhile; a message from the user or a resume ends the wait early. The result says how the wait ended.',
    parameters: WaitArgs,
    retry: 'repeat',
    execute: () => 'The wait is run by the conversation itself.',
  }),
  inWorkflow: true,
} as const;

/** The tools the workflow runs itself, by name. */
export const WORKFLOW_TOOLS: ReadonlyMap<string, AnyTool> = new Map<string, AnyTool>(
  [ThinkTool, FinishTool, TaskTrackerTool, DelegateTool, WaitTool].map((t) => [t.name, t as AnyTool]),
);

function formatTasks(tasks: readonly Task[]): string {
  if (tasks.length === 0) return 'No tasks yet. Use command "plan" with a task_list to create them.';
  const mark = { todo: '[ ]', in_progress: '[~]', done: '[x]' } as const;
  return tasks.map((t, i) => `${i + 1}. ${mark[t.status]} ${t.title}${t.notes ? ` — ${t.notes}` : ''}`).join('\n');
}
