// What a hook is told: the event as Claude Code sends it on a hook's stdin, with faheemcode's
// conversation id beside Claude Code's session id, and what the runHooks activity takes and gives
// back. Pure types: the workflow builds and reads these.
import type { CommandHook, HookEventName } from './config.js';
import type { HookDecision } from './decision.js';

/** Fields every hook event has. */
export interface HookEventCommon {
  hook_event_name: HookEventName;
  /** The conversation id (Claude Code's name for it). */
  session_id: string;
  /** The conversation id. */
  conversation_id: string;
  /** The workspace: an absolute path on the workspace's host. */
  cwd: string;
}

/** Before a tool call runs (after the model asked for it). */
export interface PreToolUseEvent extends HookEventCommon {
  hook_event_name: 'PreToolUse';
  tool_name: string;
  /** The call's arguments, as the model gave them. */
  tool_input: Record<string, unknown>;
  /** The model's id of the call. */
  tool_use_id?: string;
}

/** After a tool call ran. */
export interface PostToolUseEvent extends HookEventCommon {
  hook_event_name: 'PostToolUse';
  tool_name: string;
  tool_input: Record<string, unknown>;
  /** What the tool gave back (e.g. `{ content, isError, exitCode }`). */
  tool_response: unknown;
  tool_use_id?: string;
}

/** A user message, before the model sees it. */
export interface UserPromptSubmitEvent extends HookEventCommon {
  hook_event_name: 'UserPromptSubmit';
  prompt: string;
}

/** The agent is about to finish its run. */
export interface StopEvent extends HookEventCommon {
  hook_event_name: 'Stop';
  /** True when the agent goes on because a Stop hook blocked an earlier finish of this run. */
  stop_hook_active: boolean;
}

/** A conversation starts its first run (`startup`) or a run again (`resume`). */
export interface SessionStartEvent extends HookEventCommon {
  hook_event_name: 'SessionStart';
  source: 'startup' | 'resume' | 'clear' | 'compact';
}

/** The JSON a hook reads on stdin (more fields may be added; hooks should ignore unknown ones). */
export type HookEvent = PreToolUseEvent | PostToolUseEvent | UserPromptSubmitEvent | StopEvent | SessionStartEvent;

/** The event type of one event name. */
export type HookEventOf<E extends HookEventName> = Extract<HookEvent, { hook_event_name: E }>;

/** The `runHooks` activity's input: one event and the command hooks that match it (see matchingHooks). */
export interface RunHooksInput {
  conversationId: string;
  /** Absolute path on the workspace's host: where the hooks run. */
  workspace: string;
  /** Given to each hook as JSON on stdin; its `hook_event_name` picks the worker's function hooks too. */
  event: HookEvent;
  /** The command hooks to run (in parallel); the worker's function hooks for the event run after them. */
  hooks: CommandHook[];
}

/** One hook as it ran: for the event log and the Web UI (output shortened, secrets masked). */
export interface HookRunRecord {
  /** `command`: from the hooks config; `function`: a TypeScript hook of the worker. */
  type: 'command' | 'function';
  /** The command line (shortened), or `worker hook <Event>[<n>]`. */
  hook: string;
  /** null when it did not exit by itself (timeout, crash) or is a function. */
  exitCode: number | null;
  durationMs: number;
  timedOut: boolean;
  /** At most MAX_RECORD_OUTPUT_CHARS each, head and tail. */
  stdout: string;
  stderr: string;
  /** What this hook alone decided. */
  decision: HookDecision['kind'];
  /** Its failure, if it failed. */
  error?: string;
}

/** The `runHooks` activity's result. */
export interface RunHooksResult {
  /** All the hooks' decisions as one (command hooks first, in config order, then the worker's). */
  decision: HookDecision;
  /** One record a hook, in the same order. */
  outcomes: HookRunRecord[];
}
