// Activities that exist only for conversations from before every tool went through one definition
// (patch 'open-tools' in src/conversation/workflow/legacy/patches.ts): terminal and file_editor had an activity
// each, and a conversation that scheduled one before an upgrade still gets an answer. Thin wrappers
// over runTool; they go when that patch does.
import type { RunToolInput, RunToolResult, TerminalCallInput, TerminalResult, ToolCallInput, ToolResult } from '../core/types.js';

/** runTerminal and editFile, answered by `runTool`. */
export function createLegacyToolActivities(runTool: (input: RunToolInput) => Promise<RunToolResult>) {
  /** terminal as its own activity: the shell state travels as `terminal`. */
  async function runTerminal(input: TerminalCallInput): Promise<TerminalResult> {
    const { terminal, ...rest } = input;
    const result = await runTool({ ...rest, tool: 'terminal', state: terminal });
    const { state, ...out } = result;
    return { ...out, terminal: (state as TerminalResult['terminal'] | undefined) ?? terminal };
  }

  /** file_editor as its own activity. */
  async function editFile(input: ToolCallInput): Promise<ToolResult> {
    return runTool({ ...input, tool: 'file_editor' });
  }

  return { runTerminal, editFile };
}
