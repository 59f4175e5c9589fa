/**
 * faheemcode: coding agents as durable Temporal workflows.
 *
 * The client side: `LLM`, `Agent`, `Conversation` (start, run, pause, message, resume, inspect),
 * `defineTool` for your own tools, and `connectClient`. The worker is in `faheemcode/worker`, the
 * scripted stand-in model for tests in `faheemcode/testing`.
 *
 * @packageDocumentation
 */
export {
  Agent,
  Conversation,
  ConversationNotFoundError,
  DelegateTool,
  FileEditorTool,
  FinishTool,
  LLM,
  TaskTrackerTool,
  TerminalTool,
  ThinkTool,
  type AgentTool,
  type CreateOptions,
} from './client.js';
export { connectClient } from './connection.js';
export { parseMcpConfigFile, parseMcpServers } from './mcp/config.js';
export {
  HOOK_EVENTS,
  HooksConfigError,
  matchingHooks,
  parseHooks,
  parseHooksFile,
  type CommandHook,
  type HookEventName,
  type HookMatcherGroup,
  type HooksConfig,
} from './hooks/config.js';
export type { HookAnswer, HookDecision } from './hooks/decision.js';
export type { HookEvent, HookEventOf, PostToolUseEvent, PreToolUseEvent, SessionStartEvent, StopEvent, UserPromptSubmitEvent } from './hooks/event.js';
export {
  defineTool,
  isTool,
  type AnyTool,
  type RetryClass,
  type Tool,
  type ToolContext,
  type ToolOptions,
  type ToolOutput,
} from './tools/define.js';
export type { PauseRequest } from './workflows/messages.js';
export * from './types.js';
