// Activity: one file_editor command on the workspace's host.
import { Context } from '@temporalio/activity';
import path from 'node:path';
import { redact, secretValues } from '../security/redact.js';
import { editFile as edit } from '../tools/file-editor.js';
import type { ToolCallInput, ToolResult } from '../types.js';

export function createEditFile(env: NodeJS.ProcessEnv, home: string) {
  const secrets = secretValues(env);
  return async function editFile(input: ToolCallInput): Promise<ToolResult> {
    const ctx = Context.current();
    const command = (input.arguments as { command?: unknown } | null)?.command;
    // Viewing may simply run again; an edit cut off by a dying worker is reported, not repeated.
    if (ctx.info.attempt > 1 && command !== 'view') {
      return {
        content: 'This edit was started, but the worker running it stopped before it reported a result. View the file to see whether it was applied.',
        isError: true,
      };
    }
    const result = await edit(input.arguments, { workspace: input.workspace, undoDir: path.join(home, 'undo', input.conversationId) });
    return { ...result, content: redact(result.content, secrets) };
  };
}
