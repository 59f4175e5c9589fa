// faheemcode's own host tools, terminal and file_editor, defined with the same API as yours, made
// from the environment they are given: a worker's (where its files and secrets are), or, for the
// SDK's TerminalTool and FileEditorTool (src/client/client.ts), the user's process's.
import path from 'node:path';
import { conversationFolder } from '../conversation/conversation-id.js';
import { faheemHome } from '../home.js';
import { commandBaseEnv, namedSecrets, secretValues } from '../security/env-policy.js';
import type { TerminalState } from '../core/types.js';
import { defineTool, type AnyTool } from './define.js';
import { editFile } from './file-editor.js';
import { putImage } from '../images/store.js';
import { DelegateTool } from '../sub-agents/delegate.js';
import { FinishTool, TaskTrackerTool, ThinkTool, WaitTool } from './in-workflow.js';
import { hiddenDirs, type Sandbox } from '../sandbox/sandbox.js';
import { FileEditorArgs, TerminalArgs } from './schemas.js';
import { riskyUnlessRatedLow, terminalNeedsApproval } from './risk.js';
import { runTerminalCall } from './terminal.js';
import type { ChildEnv } from '../environment.js';
import { storeSettings, type StoreSettings } from '../settings/store.js';

/** What the built-in tools are made from on a worker. */
export interface BuiltinConfig {
  /** The worker's environment: secrets, FAHEEM_HOME, and what commands start from (through the allow-list). Read at the first call. */
  env: ChildEnv;
  /** Where images go (the worker's store settings; default: read from `env` at the first call). */
  store?: StoreSettings;
  /** Run terminal commands under this sandbox (default: none). */
  sandbox?: Sandbox;
  /** A command with no new output this long is returned as still running (default 30 s; the worker's FAHEEM_TERMINAL_SOFT_TIMEOUT_S). */
  softTimeoutMs?: number;
  /** Start commands through the spawn helper (default: on; the worker's FAHEEM_SPAWN_HELPER). */
  spawnHelper?: boolean;
}

/** Reads what the tool needs from the environment once, at its first call. */
function once<T>(make: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: make() }).v;
}

// Every built-in tool, whoever made it: a worker given one among its tools runs its own instead.
const builtins = new WeakSet<object>();
function builtin<T extends object>(tool: T): T {
  builtins.add(tool);
  return tool;
}

/** Whether `tool` is one of faheemcode's built-in tools (TerminalTool, ThinkTool, …), not a tool of yours. */
export function isBuiltinTool(tool: unknown): boolean {
  return typeof tool === 'object' && tool !== null && builtins.has(tool);
}
for (const t of [TaskTrackerTool, ThinkTool, FinishTool, DelegateTool, WaitTool]) builtin(t);

/** The terminal tool for a worker with this configuration. */
export function terminalTool(config: BuiltinConfig) {
  const setup = once(() => {
    const env = config.env;
    return { env, home: faheemHome(env), secrets: secretValues(env), baseEnv: commandBaseEnv(env), secretEnv: namedSecrets(env) };
  });
  const tool = defineTool<typeof TerminalArgs, TerminalState>({
    name: 'terminal',
    description: 'Run a bash command in the workspace and see its output and exit code.',
    parameters: TerminalArgs,
    retry: 'report',
    needsApproval: terminalNeedsApproval,
    timeoutSeconds: (args) => (args.timeout ? Math.ceil(args.timeout) + 60 : undefined),
    summary: (args) =>
      args.is_input ? `terminal input ${JSON.stringify(args.command)}` : args.reset ? 'terminal reset' : `$ ${args.command}`,
    interruptedMessage:
      'This command may have run, but the worker running it stopped before it reported a result. ' +
      'Its effects are unknown: check the state (files, processes) before running it again.',
    // Interrupted by `pause --now`, runTerminal throws a ToolInterruptedError with the output so far.
    async execute(args, ctx) {
      const { env, home, secrets, baseEnv, secretEnv } = setup();
      // The id names a folder of the worker's: one with `/` or `..` would reach another.
      const outputs = conversationFolder(path.join(home, 'outputs'), ctx.conversationId);
      if ('refused' in outputs) return { content: outputs.refused, isError: true };
      // Checked already against TerminalArgs (the tool's parameters) by runTool: not again.
      const result = await runTerminalCall(args, ctx.state ?? { cwd: ctx.workspace, env: {} }, {
        workspace: ctx.workspace,
        session: ctx.conversationId,
        signal: ctx.signal,
        outputDir: outputs.dir,
        secrets,
        baseEnv,
        secretEnv,
        ...(config.softTimeoutMs !== undefined ? { softTimeoutMs: config.softTimeoutMs } : {}),
        ...(config.spawnHelper !== undefined ? { spawnHelper: config.spawnHelper } : {}),
        ...(config.sandbox ? { sandbox: config.sandbox, sandboxHide: hiddenDirs(env) } : {}),
        ...(ctx.output ? { onOutput: ctx.output } : {}),
      });
      const { terminal, ...rest } = result;
      return { ...rest, state: terminal };
    },
  });
  return builtin(tool);
}

/** The file_editor tool for a worker with this configuration. */
export function fileEditorTool(config: BuiltinConfig) {
  const home = once(() => faheemHome(config.env));
  const store = once(() => config.store ?? storeSettings(config.env));
  const tool = defineTool({
    name: 'file_editor',
    description: 'View, create and edit files: view (a file with line numbers, or a directory), create, str_replace, insert, undo_edit.',
    parameters: FileEditorArgs,
    // create refuses to overwrite different content, so creating the same file again is harmless.
    retry: (args) => (args.command === 'view' || args.command === 'create' ? 'repeat' : 'report'),
    needsApproval: riskyUnlessRatedLow,
    summary: (args) => `file_editor ${args.command} ${args.path}`,
    interruptedMessage:
      'This edit may have been applied, but the worker running it stopped before it reported a result. View the file to see.',
    execute: async (args, ctx) => {
      const undo = conversationFolder(path.join(home(), 'undo'), ctx.conversationId);
      if ('refused' in undo) return { content: undo.refused, isError: true };
      const { image, ...result } = await editFile(args, { workspace: ctx.workspace, undoDir: undo.dir });
      if (!image) return result;
      // The bytes go to the object store; the result (and so history) carries the reference.
      const ref = await putImage(store(), image.bytes, { name: path.basename(args.path), mimeType: image.mimeType });
      return { ...result, images: [ref] };
    },
  });
  return builtin(tool);
}

export { DelegateTool, FinishTool, TaskTrackerTool, ThinkTool, WaitTool };

/** Every built-in tool, made for a worker with this environment. */
export function builtinTools(config: BuiltinConfig): AnyTool[] {
  return [terminalTool(config), fileEditorTool(config), TaskTrackerTool, ThinkTool, FinishTool, DelegateTool, WaitTool] as AnyTool[];
}
