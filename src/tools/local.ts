// The tools that need no machine: think, finish and task_tracker. Defined like every other tool, but
// they run inside the workflow (deterministic, no I/O), so no Node imports here.
import { defineTool, type AnyTool } from './define.js';
import { DelegateTool } from './delegate.js';
import { FinishArgs, TaskTrackerArgs, ThinkArgs } from './schemas.js';

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
      const next: Task[] = task_list.map((t) => ({ title: t.title, status: t.status, ...(t.notes !== undefined ? { notes: t.notes } : {}) }));
      return { content: `Task list updated.\n${formatTasks(next)}`, state: next };
    },
  }),
  inWorkflow: true,
} as const;

/** The tools the workflow runs itself, by name. */
export const WORKFLOW_TOOLS: ReadonlyMap<string, AnyTool> = new Map<string, AnyTool>(
  [ThinkTool, FinishTool, TaskTrackerTool, DelegateTool].map((t) => [t.name, t as AnyTool]),
);

function formatTasks(tasks: readonly Task[]): string {
  if (tasks.length === 0) return 'No tasks yet. Use command "plan" with a task_list to create them.';
  const mark = { todo: '[ ]', in_progress: '[~]', done: '[x]' } as const;
  return tasks.map((t, i) => `${i + 1}. ${mark[t.status]} ${t.title}${t.notes ? ` — ${t.notes}` : ''}`).join('\n');
}
