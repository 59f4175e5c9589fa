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
  WaitTool,
  type AgentTool,
  type CreateOptions,
} from './client.js';
export { connectClient } from './connection.js';
export {
  changeSchedule,
  createSchedule,
  listSchedules,
  scheduleRunsQuery,
  ScheduleError,
  type ScheduleCreateOptions,
  type ScheduleInfo,
  type ScheduleOverlap,
  type ScheduleVerb,
} from './schedules.js';
export { parseMcpConfigFile, parseMcpServers } from './mcp/config.js';
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
