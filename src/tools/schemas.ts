// The built-in tools' argument schemas (zod; the model sees them as JSON Schema). No Node imports:
// the workflow validates the arguments of the tools it runs itself with these.
import { z } from 'zod';

const securityRisk = z
  .enum(['LOW', 'MEDIUM', 'HIGH'])
  .optional()
  .describe('Your estimate of how risky this action is: LOW, MEDIUM or HIGH.');

export const TerminalArgs = z.object({
  command: z
    .string()
    .describe(
      'The bash command to run in the workspace. The working directory and exported variables carry over between calls. With is_input: the text or key (C-c, C-d, Enter, Up, …) to send, or empty to wait for more output.',
    ),
  is_input: z.boolean().optional().describe('Send the command as input to the running process instead of running it.'),
  timeout: z
    .number()
    .positive()
    .max(3600)
    .optional()
    .describe(
      'Hard limit in seconds: the command is stopped then. Without it, a command with no new output for 30 s is returned as still running.',
    ),
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
  view_range: z
    .tuple([z.number().int().min(1), z.number().int().min(-1)])
    .optional()
    .describe('[start, end] lines to view; end -1 means to the end.'),
  security_risk: securityRisk,
});

export const TaskTrackerArgs = z.object({
  command: z.enum(['view', 'plan']),
  task_list: z
    .array(
      z.object({
        title: z.string().regex(/\S/, 'must not be empty'),
        notes: z.string().optional(),
        status: z.enum(['todo', 'in_progress', 'done']).default('todo'),
      }),
    )
    .optional()
    .describe('The whole task list, for plan.'),
});

export const ThinkArgs = z.object({ thought: z.string().describe('Your reasoning; nothing is run.') });
export const FinishArgs = z.object({ message: z.string().optional().describe('A short summary of what you did.') });

export const WaitArgs = z
  .object({
    seconds: z.number().positive().optional().describe('How long to wait, in seconds.'),
    until: z.iso.datetime({ offset: true }).optional().describe('Wait until this time (ISO 8601, e.g. 2026-12-01T09:00:00Z) instead.'),
    reason: z.string().min(1).describe('What you are waiting for (shown to the user while you wait).'),
  })
  .refine((a) => a.seconds !== undefined || a.until !== undefined, { message: 'give seconds or until' });

export { describeInvalid } from './define.js';
