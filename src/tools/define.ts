// One way to define a tool, for the built-ins and for yours: a name, a description, a zod schema
// for the arguments (the model sees it as JSON Schema), what a retry may do, whether it needs the
// user's approval, and the function that runs it. No Node imports: the tools that run inside the
// workflow (think, finish, task_tracker) are defined with this too.
import { InvalidRequestError } from '../core/errors.js';
import type { z } from 'zod';
import type { ImageRef } from '../core/types.js';

/**
 * What a retry may do after an attempt was cut off (its worker died mid-call): `repeat` runs the call
 * again (it has no effects, or doing them twice is harmless); `report` tells the model that its
 * effects are unknown, unless the attempt provably never began (then it simply runs).
 */
export type RetryClass = 'repeat' | 'report';

/** What `ctx.exec` gives back. A failing program is a result, not an exception. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  /** The program's exit code; 127 when it was not found; 128 + n when signal n ended it; 124 after `timeoutMs`. */
  exitCode: number;
  /** Stopped because it ran longer than `timeoutMs`. */
  timedOut: boolean;
}

/** Options of `ctx.exec`. */
export interface ExecOptions {
  /** Written to the program's standard input (default: none, it reads end-of-file). */
  input?: string;
  /** Stop it (with everything it started) after this long; the result then has `timedOut` and exit code 124. */
  timeoutMs?: number;
  /** Where it starts: relative to the workspace, or absolute (default: the workspace). */
  cwd?: string;
  /** Variables on top of the worker's environment (which has no secrets, LLM_* or TEMPORAL_*). */
  env?: Record<string, string>;
}

/** What a tool's `execute` gets besides its arguments. */
export interface ToolContext<State = unknown> {
  /** The conversation (= workflow id) this call belongs to. */
  conversationId: string;
  /** The model's id for this call. */
  toolCallId: string;
  /** The conversation's workspace: an absolute path on this host. */
  workspace: string;
  /** Aborted when the call is interrupted (`faheem pause --now`, close); stop promptly and return. */
  signal: AbortSignal;
  /** Tells Temporal the call is alive. The worker already heartbeats while a call runs; `details` are shown in the Web UI. */
  heartbeat(details?: unknown): void;
  /** The worker's named secrets (FAHEEM_SECRET_<NAME>=value, by NAME). Their values are masked in the result. */
  secrets: Readonly<Record<string, string>>;
  /** This tool's durable state in this conversation (what its last call returned as `state`), if any. */
  state: State | undefined;
  /** 1 on the first attempt; more after the worker running an earlier attempt died. */
  attempt: number;
  /**
   * Runs a program (no shell: `exec('git', ['status'])`) in the workspace and gives back its output
   * and exit code. On a worker started with `--sandbox bwrap` it runs under the same sandbox as the
   * terminal's commands (only the workspace and a private /tmp writable, the worker's home hidden,
   * optionally no network); everything it started is stopped when `signal` aborts (the promise then
   * rejects, with the output so far as the error's `partialOutput`) or after `timeoutMs`. Use it
   * instead of `child_process` so that your tool is confined like the terminal.
   *
   * Present on the workspace host's worker (every tool that runs there); absent for the tools the
   * workflow runs itself.
   */
  exec: (command: string, args?: readonly string[], options?: ExecOptions) => Promise<ExecResult>;
  /**
   * Shows a piece of this call's output to whoever follows the conversation live (`faheem events
   * --follow`, the console) as it is produced. A view, not the record: the result you return is
   * what the model reads and history keeps. Secrets are masked. Present on the workspace host's worker.
   */
  output?: (text: string) => void;
}

/** A tool's answer: the text the model reads, or the full result. */
export type ToolOutput<State = unknown> =
  | string
  | {
      content: string;
      isError?: boolean;
      exitCode?: number;
      /** Kept by the conversation (durably, across workers) and handed to the next call as `ctx.state`. */
      state?: State;
      /** Images for the model, as references to images already in the object store (`file_editor view` of an image). */
      images?: ImageRef[];
    };

/** What `defineTool` takes: the tool's name, description, argument schema, retry class, approval rule and `execute`. */
export interface ToolOptions<Params extends z.ZodObject, State = unknown> {
  /** What the model calls it: letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  /** What it does, for the model. */
  description: string;
  /** The arguments. Validated on the worker before `execute`; a bad call becomes an observation with the reason. */
  parameters: Params;
  /** What a retry may do after a crash mid-call (default `report`: never run twice). */
  retry?: RetryClass | ((args: z.infer<Params>) => RetryClass);
  /** Under the `risky` confirmation policy, whether a call waits for the user's approval (default false). */
  needsApproval?: boolean | ((args: z.infer<Params>) => boolean);
  /** Hard limit for one call in seconds (default 15 minutes). */
  timeoutSeconds?: number | ((args: z.infer<Params>) => number | undefined);
  /** One line for the Web UI's timeline (default: the tool name). */
  summary?: (args: z.infer<Params>) => string;
  /** What the model reads when a call was cut off by a crash and may have had effects (retry `report`). */
  interruptedMessage?: string;
  execute(args: z.infer<Params>, ctx: ToolContext<State>): ToolOutput<State> | Promise<ToolOutput<State>>;
}

/** A tool made by `defineTool`: pass it to `Agent` (by name) and to `createWorker` (to run it). */
export interface Tool<Params extends z.ZodObject = z.ZodObject, State = unknown> extends ToolOptions<Params, State> {
  readonly kind: 'faheem.tool';
  /** Runs inside the workflow (deterministic, no I/O): only faheemcode's own think, finish, task_tracker. */
  readonly inWorkflow?: boolean;
}

/** Any tool, whatever its argument and state types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any, any>;

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool the model can call.
 *
 * ```ts
 * const addNumbers = defineTool({
 *   name: 'add_numbers',
 *   description: 'Add two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   retry: 'repeat',
 *   execute: async ({ a, b }) => String(a + b),
 * });
 * ```
 */
export function defineTool<Params extends z.ZodObject, State = unknown>(options: ToolOptions<Params, State>): Tool<Params, State> {
  if (!TOOL_NAME.test(options.name)) {
    throw new InvalidRequestError(
      `defineTool: "${options.name}" is not a valid tool name (letters, digits, _ and -, at most 64 characters)`,
    );
  }
  if (options.name.startsWith('mcp__')) throw new InvalidRequestError(`defineTool: names starting with "mcp__" are for MCP servers' tools`);
  if (typeof options.execute !== 'function') throw new InvalidRequestError(`defineTool: ${options.name} needs an execute function`);
  return { ...options, kind: 'faheem.tool' };
}

/** Whether a value is a tool made by `defineTool` (used to find the tools a module exports). */
export function isTool(value: unknown): value is AnyTool {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'faheem.tool';
}

/** The tool's retry class for these arguments. */
export function retryClass(tool: AnyTool, args: unknown): RetryClass {
  const r = tool.retry;
  return typeof r === 'function' ? r(args) : (r ?? 'report');
}

/** Turns a zod error into one sentence the model can act on. */
export function describeInvalid(tool: string, error: z.ZodError): string {
  const parts = error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`);
  return `Invalid arguments for ${tool}: ${parts.join('; ')}`;
}
