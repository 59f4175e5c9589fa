/**
 * faheemcode: coding agents as durable Temporal workflows.
 *
 * The client side: `LLM`, `Agent`, `Conversation` (start, run, pause, message, resume, inspect),
 * `defineTool` for your own tools, `connectClient`, the errors the package throws (all
 * `FaheemError`s) and the types of what a conversation reports (state, events, metrics). The worker
 * is in `faheemcode/worker`, the scripted stand-in model for tests in `faheemcode/testing`.
 *
 * @packageDocumentation
 */
export {
  Agent,
  Conversation,
  DelegateTool,
  FileEditorTool,
  FinishTool,
  LLM,
  TaskTrackerTool,
  TerminalTool,
  ThinkTool,
  WaitTool,
  checkMessage,
  type AgentTool,
  type CreateOptions,
  type FollowOptions,
  type ImageInput,
  type RunResult,
} from './client/client.js';
export { LIVE_KINDS, type LiveDelta, type LiveKind } from './live/types.js';
export { connectClient } from './connection.js';
export { actingAs } from './client/acting.js';
export { forkConversation, ForkError, type ForkOptions } from './time-travel/fork.js';
export { NOT_UNDONE, type RewindAnswer } from './time-travel/workflow/rewind-rules.js';
export {
  ConversationClosedError,
  ConversationNotFoundError,
  DecryptionError,
  EncryptionConfigError,
  FaheemError,
  InvalidRequestError,
  ModelConfigError,
  NoWorkerError,
  SandboxError,
  ServerStartError,
  ServerUnreachableError,
  ToolInterruptedError,
  UsageError,
  WaitTimeoutError,
  type FaheemErrorCode,
} from './core/errors.js';
export { FAILURE, FAILURE_TYPES, failureCodeOf, failureTypeOf, type FailureType, type FailureTypeInfo } from './core/failure-types.js';
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
} from './client/schedules.js';
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
export type {
  HookEvent,
  HookEventOf,
  PostToolUseEvent,
  PreToolUseEvent,
  SessionStartEvent,
  StopEvent,
  UserPromptSubmitEvent,
} from './hooks/event.js';
export {
  defineTool,
  isTool,
  type AnyTool,
  type ExecOptions,
  type ExecResult,
  type RetryClass,
  type Tool,
  type ToolContext,
  type ToolOptions,
  type ToolOutput,
} from './tools/define.js';
export type { PauseRequest } from './conversation/workflow/messages.js';
// What users read and write; the workflow's own contracts (carried state, activity inputs and
// results, DEFAULTS) stay inside the package.
export {
  CONVERSATION_STATUSES,
  IMAGE_MIME_TYPES,
  TOOL_NAMES,
  type ActionEvent,
  type Actor,
  type AgentSpec,
  type CallSummary,
  type CheckpointEntry,
  type CheckpointEvent,
  type ChildEvent,
  type CloseEvent,
  type ChildSummary,
  type CondensationEvent,
  type CondenserOptions,
  type ConfirmationPolicy,
  type ConversationEvent,
  type ConversationState,
  type ConversationStatus,
  type ErrorEvent,
  type EventSource,
  type FallbackEvent,
  type ForkOrigin,
  type HostEvent,
  type HostChangedEvent,
  type ImageMimeType,
  type ImageRef,
  type InstructionsEvent,
  type LLMSpec,
  type McpHttpServerSpec,
  type McpServerSpec,
  type McpServersSpec,
  type McpStdioServerSpec,
  type MessageEvent,
  type Metrics,
  type ModelCallMetrics,
  type ObservationEvent,
  type OpenAIReasoningItem,
  type PauseEvent,
  type ReasoningBlock,
  type ReasoningEffort,
  type ResumeEvent,
  type RewindEvent,
  type StatusEvent,
  type TerminalState,
  type TokenUsage,
  type ToolName,
  type SkillsEvent,
  type SkippedModel,
  type WireApi,
} from './core/types/public.js';
