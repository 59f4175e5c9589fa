// Tools that need no machine: they run inside the workflow, deterministically.
import type { ToolResult } from '../types.js';

export interface Task {
  title: string;
  notes?: string;
  status: 'todo' | 'in_progress' | 'done';
}

const TASK_STATUSES = ['todo', 'in_progress', 'done'];

/** The tools runLocalTool handles: they touch nothing outside the workflow. */
export const LOCAL_TOOLS: readonly string[] = ['think', 'finish', 'task_tracker'];

/** Runs `think`, `finish` and `task_tracker`; returns undefined for tools that need a worker. */
export function runLocalTool(tool: string, args: Record<string, unknown>, tasks: Task[]): ToolResult | undefined {
  switch (tool) {
    case 'think':
      if (typeof args.thought !== 'string') return missing('think', 'thought');
      return { content: 'Your thought has been logged.', isError: false };
    case 'finish':
      return { content: typeof args.message === 'string' ? args.message : '', isError: false };
    case 'task_tracker':
      return taskTracker(args, tasks);
    default:
      return undefined;
  }
}

function taskTracker(args: Record<string, unknown>, tasks: Task[]): ToolResult {
  if (args.command === 'view') return { content: formatTasks(tasks), isError: false };
  if (args.command !== 'plan') {
    return { content: 'task_tracker: "command" must be "view" or "plan".', isError: true };
  }
  if (!Array.isArray(args.task_list)) return missing('task_tracker plan', 'task_list');
  const next: Task[] = [];
  for (const [i, raw] of args.task_list.entries()) {
    const t = (raw ?? {}) as Record<string, unknown>;
    const status = t.status ?? 'todo';
    if (typeof t.title !== 'string' || t.title.trim() === '' || !TASK_STATUSES.includes(String(status))) {
      return {
        content: `task_tracker: task ${i + 1} needs a non-empty "title" and a "status" of todo, in_progress or done.`,
        isError: true,
      };
    }
    next.push({ title: t.title, status: status as Task['status'], ...(typeof t.notes === 'string' ? { notes: t.notes } : {}) });
  }
  tasks.splice(0, tasks.length, ...next);
  return { content: `Task list updated.\n${formatTasks(tasks)}`, isError: false };
}

function formatTasks(tasks: Task[]): string {
  if (tasks.length === 0) return 'No tasks yet. Use command "plan" with a task_list to create them.';
  const mark = { todo: '[ ]', in_progress: '[~]', done: '[x]' } as const;
  return tasks.map((t, i) => `${i + 1}. ${mark[t.status]} ${t.title}${t.notes ? ` — ${t.notes}` : ''}`).join('\n');
}

function missing(tool: string, arg: string): ToolResult {
  return { content: `${tool}: the required argument "${arg}" is missing or not a string/array.`, isError: true };
}
