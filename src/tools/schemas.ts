// What the model sees: each tool's name, description and argument schema (zod, turned into JSON
// Schema for the API). The executors validate with the same schemas.
import { z } from 'zod';
import type { ToolName } from '../types.js';

const securityRisk = z
  .enum(['LOW', 'MEDIUM', 'HIGH'])
  .optional()
  .describe('Your estimate of how risky this action is: LOW, MEDIUM or HIGH.');

export const TerminalArgs = z.object({
  command: z
    .string()
    .describe('The bash command to run in the workspace. The working directory and exported variables carry over between calls. With is_input: the text or key (C-c, C-d, Enter, Up, …) to send, or empty to wait for more output.'),
  is_input: z.boolean().optional().describe('Send the command as input to the running process instead of running it.'),
  timeout: z.number().positive().max(3600).optional().describe('Hard limit in seconds: the command is stopped then. Without it, a command with no new output for 30 s is returned as still running.'),
  reset: z.boolean().optional().describe('Reset the terminal: working directory back to the workspace, exported variables cleared.'),
  security_risk: securityRisk,
});

export const FileEditorArgs = z.object({
  command: z.enum(['view', 'create', 'str_replace', 'insert', 'undo_edit']),
  path: z.string().min(1).describe('A path inside the workspace, absolute or relative to it.'),
  file_text: z.string().optional().describe('The whole content, for create.'),
  old_str: z.string().optional().describe('The exact text to replace; it must occur exactly once.'),
  new_str: z.string().optional().describe('The replacement (str_replace) or the text to insert (insert).'),
  insert_line: z.number().int().min(0).optional().describe('Insert after this line (0 = at the top).'),
  view_range: z.tuple([z.number().int().min(1), z.number().int().min(-1)]).optional().describe('[start, end] lines to view; end -1 means to the end.'),
  security_risk: securityRisk,
});

export const TaskTrackerArgs = z.object({
  command: z.enum(['view', 'plan']),
  task_list: z
    .array(z.object({ title: z.string(), notes: z.string().optional(), status: z.enum(['todo', 'in_progress', 'done']) }))
    .optional()
    .describe('The whole task list, for plan.'),
});

export const ThinkArgs = z.object({ thought: z.string().describe('Your reasoning; nothing is run.') });
export const FinishArgs = z.object({ message: z.string().describe('A short summary of what you did.') });

/**
 * What a retry may do after an attempt was cut off (its worker died): `repeat` runs the call again
 * (no effects, or the same effect twice is harmless); `report` tells the model its effects are
 * unknown, unless the attempt provably never began.
 */
export type OnRetry = 'repeat' | 'report';

interface ToolSpec {
  description: string;
  schema: z.ZodObject;
  onRetry: (args: unknown) => OnRetry;
}

const TOOLS: Record<ToolName, ToolSpec> = {
  terminal: {
    description: 'Run a bash command in the workspace and see its output and exit code.',
    schema: TerminalArgs,
    onRetry: () => 'report',
  },
  file_editor: {
    description: 'View, create and edit files: view (a file with line numbers, or a directory), create, str_replace, insert, undo_edit.',
    schema: FileEditorArgs,
    // create refuses to overwrite different content, so creating the same file again is harmless.
    onRetry: (args) => (['view', 'create'].includes((args as { command?: string } | null)?.command ?? '') ? 'repeat' : 'report'),
  },
  // These run inside the workflow, not as activities; a replay recomputes them.
  task_tracker: { description: 'Keep a plan of tasks: view it, or plan (replace it).', schema: TaskTrackerArgs, onRetry: () => 'repeat' },
  think: { description: 'Think out loud; use it to plan or reason about what you saw.', schema: ThinkArgs, onRetry: () => 'repeat' },
  finish: { description: 'Finish the task, with a short summary of what you did.', schema: FinishArgs, onRetry: () => 'repeat' },
};

/** What a retry of this call may do (see OnRetry); unknown tools are reported, to be safe. */
export function onRetry(tool: string, args: unknown): OnRetry {
  return TOOLS[tool as ToolName]?.onRetry(args) ?? 'report';
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

// Built once per tool: every model call sends them, and converting the schemas is not free.
const definitions = new Map<ToolName, FunctionTool>();

export function toolDefinitions(names: readonly ToolName[]): FunctionTool[] {
  return names
    .filter((n) => TOOLS[n])
    .map((name) => {
      let definition = definitions.get(name);
      if (!definition) {
        const parameters = z.toJSONSchema(TOOLS[name].schema) as Record<string, unknown>;
        definition = { type: 'function', function: { name, description: TOOLS[name].description, parameters } };
        definitions.set(name, definition);
      }
      return definition;
    });
}

/** Turns a zod error into one sentence the model can act on. */
export function describeInvalid(tool: string, error: z.ZodError): string {
  const parts = error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`);
  return `Invalid arguments for ${tool}: ${parts.join('; ')}`;
}
