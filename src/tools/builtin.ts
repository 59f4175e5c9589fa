// faheemcode's own host tools, terminal and file_editor, defined with the same API as yours. The
// worker makes them from its environment (where its files and secrets are); the exported
// constants use the process's, and are what you pass to `Agent`.
import path from 'node:path';
import { faheemHome } from '../home.js';
import { secretValues } from '../security/redact.js';
import type { TerminalState } from '../types.js';
import { defineTool, type AnyTool } from './define.js';
import { editFile } from './file-editor.js';
import { DelegateTool } from './delegate.js';
import { FinishTool, TaskTrackerTool, ThinkTool, WaitTool } from './local.js';
import { hiddenDirs, type SandboxOptions } from './sandbox.js';
import { FileEditorArgs, TerminalArgs } from './schemas.js';
import { CommandInterrupted, commandBaseEnv, namedSecrets, runTerminal } from './terminal.js';

export interface BuiltinConfig {
  /** The worker's environment: secrets, FAHEEM_HOME. */
  env?: NodeJS.ProcessEnv;
  /** Run terminal commands under this sandbox (default: none). */
  sandbox?: SandboxOptions;
}

// The model rates each terminal and file_editor call; under `risky`, HIGH or no rating asks.
const riskyUnlessRatedLow = (args: { security_risk?: 'LOW' | 'MEDIUM' | 'HIGH' | undefined }) =>
  !(args.security_risk === 'LOW' || args.security_risk === 'MEDIUM');

export function terminalTool(config: BuiltinConfig = {}) {
  const env = config.env ?? process.env;
  const home = faheemHome(env);
  const secrets = secretValues(env);
  const baseEnv = commandBaseEnv(env);
  const secretEnv = namedSecrets(env);
  return defineTool<typeof TerminalArgs, TerminalState>({
    name: 'terminal',
    description: 'Run a bash command in the workspace and see its output and exit code.',
    parameters: TerminalArgs,
    retry: 'report',
    needsApproval: riskyUnlessRatedLow,
    timeoutSeconds: (args) => (args.timeout ? Math.ceil(args.timeout) + 60 : undefined),
    summary: (args) => (args.is_input ? `terminal input ${JSON.stringify(args.command)}` : args.reset ? 'terminal reset' : `$ ${args.command}`),
    interruptedMessage:
      'This command may have run, but the worker running it stopped before it reported a result. ' +
      'Its effects are unknown: check the state (files, processes) before running it again.',
    async execute(args, ctx) {
      try {
        const result = await runTerminal(args, ctx.state ?? { cwd: ctx.workspace, env: {} }, {
          workspace: ctx.workspace,
          session: ctx.conversationId,
          signal: ctx.signal,
          outputDir: path.join(home, 'outputs', ctx.conversationId),
          secrets,
          baseEnv,
          secretEnv,
          ...(config.sandbox ? { sandbox: config.sandbox, sandboxHide: hiddenDirs(env) } : {}),
        });
        const { terminal, ...rest } = result;
        return { ...rest, state: terminal };
      } catch (err) {
        // Interrupted by `pause --now`: what it printed so far goes back with the interruption.
        if (err instanceof CommandInterrupted) throw Object.assign(new Error('interrupted by a pause'), { partialOutput: err.partialOutput });
        throw err;
      }
    },
  });
}

export function fileEditorTool(config: BuiltinConfig = {}) {
  const home = faheemHome(config.env ?? process.env);
  return defineTool({
    name: 'file_editor',
    description: 'View, create and edit files: view (a file with line numbers, or a directory), create, str_replace, insert, undo_edit.',
    parameters: FileEditorArgs,
    // create refuses to overwrite different content, so creating the same file again is harmless.
    retry: (args) => (args.command === 'view' || args.command === 'create' ? 'repeat' : 'report'),
    needsApproval: riskyUnlessRatedLow,
    summary: (args) => `file_editor ${args.command} ${args.path}`,
    interruptedMessage: 'This edit may have been applied, but the worker running it stopped before it reported a result. View the file to see.',
    execute: (args, ctx) => editFile(args, { workspace: ctx.workspace, undoDir: path.join(home, 'undo', ctx.conversationId) }),
  });
}

/** Runs bash commands in the workspace (cwd and exported variables carry over between calls). */
export const TerminalTool = terminalTool();
/** Views and edits files inside the workspace. */
export const FileEditorTool = fileEditorTool();
export { DelegateTool, FinishTool, TaskTrackerTool, ThinkTool, WaitTool };

/** Every built-in tool, made for a worker with this environment. */
export function builtinTools(config: BuiltinConfig = {}): AnyTool[] {
  return [terminalTool(config), fileEditorTool(config), TaskTrackerTool, ThinkTool, FinishTool, DelegateTool, WaitTool] as AnyTool[];
}
