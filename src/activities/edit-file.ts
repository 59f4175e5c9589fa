// Activity: one file_editor command on the workspace's host.
import { Context } from '@temporalio/activity';
import path from 'node:path';
import { redact, secretValues } from '../security/redact.js';
import { editFile as edit } from '../tools/file-editor.js';
import { onRetry } from '../tools/schemas.js';
import type { ToolCallInput, ToolResult } from '../types.js';
import type { StartLog } from './start-log.js';

export function createEditFile(env: NodeJS.ProcessEnv, home: string, starts: StartLog) {
  const secrets = secretValues(env);
  return async function editFile(input: ToolCallInput): Promise<ToolResult> {
    const ctx = Context.current();
    // An edit cut off by a dying worker is reported, not repeated (the tool declares which are).
    if (onRetry('file_editor', input.arguments) === 'report' && (await starts.claim(ctx.info))) {
      return {
        content: 'This edit may have been applied, but the worker running it stopped before it reported a result. View the file to see.',
        isError: true,
      };
    }
    const result = await edit(input.arguments, { workspace: input.workspace, undoDir: path.join(home, 'undo', input.conversationId) });
    return { ...result, content: redact(result.content, secrets) };
  };
}
