// The activity contracts: what the workflow sends its activities and gets back. Internal (not
// exported from the package); plain data that travels through Temporal payloads.
import type { CheckpointInfo } from '../../time-travel/types.js';
import type { HookEventName } from '../../hooks/config.js';
import type { SkillInfo } from '../../skills/prompt.js';
import type {
  ConversationEvent,
  ConversationStatus,
  ImageRef,
  LLMSpec,
  McpServersSpec,
  ReasoningBlock,
  RepositoryInstructions,
  SkippedModel,
  TerminalState,
  TokenUsage,
  ToolSpec,
} from './public.js';

export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
  /** The Responses API's id of the function_call item (`fc_…`), when it came through that API. */
  itemId?: string;
  /** What the tool's definition says about this call, worked out by the model-call worker. */
  plan?: ToolCallPlan;
}

/** Per call, from the tool's definition: whether it needs approval, its time limit, its Web UI line. */
export interface ToolCallPlan {
  needsApproval?: boolean;
  timeoutSeconds?: number;
  summary?: string;
}

/** An image in the prompt: its reference, and its bytes (base64) once the model call has read them from the store. */
export interface PromptImage extends ImageRef {
  data?: string;
}

/**
 * A message in the chat-completions format, built from the event log. `images` (user and tool
 * messages) is ours: each wire API's converter puts them in that API's own form.
 */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; images?: PromptImage[] }
  | {
      role: 'assistant';
      content: string | null;
      /** `item_id`: the Responses API's id of the function_call item; not part of the chat-completions format. */
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string }; item_id?: string }[];
      /** Provider reasoning to send back (Anthropic thinking blocks, Responses reasoning items); not part of the chat-completions format. */
      reasoning?: ReasoningBlock[];
    }
  | { role: 'tool'; tool_call_id: string; content: string; images?: PromptImage[] };

/**
 * The model call gets a reference to the transcript (events [0, eventCount) of the conversation),
 * not the transcript itself: it reads the events with the `events` query. So each event is in
 * history once, and history grows linearly with the conversation instead of quadratically.
 */
export interface ModelCallInput {
  conversationId: string;
  /**
   * The conversation's step this reply will be (steps count over every run; a rewind goes back),
   * as checkpoints and `Metrics.calls` count them. Fallback tool-call ids (a provider that gives
   * none) are `call_<step>_<eventCount>_<i>`: unique over runs and rewinds, the same on a retry.
   */
  step: number;
  llm: LLMSpec;
  systemPrompt: string;
  eventCount: number;
  /** Tool names, for conversations without a setup (started before tools were open). */
  tools: string[];
  /** The conversation's setup version: the worker reads the setup (tools, instructions) with the `setup` query, once. */
  setupVersion?: number;
  /** The events since the previous model call, when small: a worker that cached the rest makes no query. */
  recent?: RecentEvents;
}

/**
 * Events [from, from + events.length) of a conversation, sent with a model call. `anchor` names the
 * event just before them, so a worker can check that its cached transcript is the one they follow.
 */
export interface RecentEvents {
  from: number;
  anchor?: { index: number; timestamp: string };
  events: ConversationEvent[];
}

export interface CondenseInput {
  conversationId: string;
  llm: LLMSpec;
  /** Summarise events [from, to) of the conversation (with the previous summary, if any). */
  from: number;
  to: number;
  previousSummary?: string;
}

export interface CondenseResult {
  summary: string;
  usage: TokenUsage;
  cost: number;
  latencyMs: number;
  /** The model the endpoint says answered. */
  model?: string;
  /** With a fallback chain that moved: the chain's model that answered. */
  answeredBy?: string;
  /** With a fallback chain that moved: the models passed over before it, and why. */
  fallbacks?: SkippedModel[];
}

export interface ModelCallResult {
  id: string;
  model: string;
  content: string | null;
  toolCalls: ChatToolCall[];
  usage: TokenUsage;
  cost: number;
  latencyMs: number;
  /** Reasoning blocks to keep with the reply (Anthropic thinking, with signatures). */
  reasoning?: ReasoningBlock[];
  /** The reply was cut by the output-token cap (finish_reason `length` / stop_reason `max_tokens`). */
  truncated?: boolean;
  /** With an output schema, for a reply without tool calls: its text checked against the schema on the worker. */
  outputCheck?: { ok: true; value: unknown } | { ok: false; errors: string[] };
  /** With a fallback chain that moved: the chain's model that answered (`anthropic/…`). */
  answeredBy?: string;
  /** With a fallback chain that moved: the models passed over before it, and why. */
  fallbacks?: SkippedModel[];
}

export interface ToolCallInput {
  conversationId: string;
  workspace: string;
  toolCallId: string;
  /** Raw arguments object from the model; the activity validates it. */
  arguments: unknown;
}

/** One call of any host tool (the single tool activity). */
export interface RunToolInput extends ToolCallInput {
  tool: string;
  /** The tool's durable state in this conversation. */
  state?: unknown;
  /** Scheduled again after no worker picked up the first try in time: that try may still have begun. */
  rescheduled?: boolean;
  /** For an MCP tool: its server's config (with `${VAR}` unexpanded) and what a retry may do. */
  mcp?: { server: string; tool: string; retry: 'repeat' | 'report'; config: McpServersSpec[string] };
  /**
   * The step's last host call: after the tool, take the workspace's checkpoint as step `step` (the
   * step's checkpoint then needs no activity of its own).
   */
  checkpoint?: { step: number };
}

export interface RunToolResult extends ToolResult {
  state?: unknown;
  /** The checkpoint asked for with `checkpoint` (absent when it could not be taken: the workflow takes it on its own then). */
  checkpoint?: CheckpointInfo;
}

/** Made once per conversation on the workspace host: the tools it offers, AGENTS.md, problems found. */
export interface PrepareToolsInput {
  conversationId: string;
  workspace: string;
  tools: string[];
  hostTools: boolean;
  mcpServers?: McpServersSpec;
  /** Also take the checkpoint before the first step (step 0), so that it needs no activity of its own. */
  checkpoint?: { step: number };
}

export interface PrepareToolsResult {
  tools: ToolSpec[];
  /** The checkpoint asked for with `checkpoint` (absent when it could not be taken: the workflow takes it on its own then). */
  checkpoint?: CheckpointInfo;
  instructions?: RepositoryInstructions;
  /** Readable problems: a tool this host lacks, an MCP server that would not start. */
  errors: string[];
  /** The skills found in the workspace and on the host (name, description, path of SKILL.md); absent in older results. */
  skills?: SkillInfo[];
  /** Skill files skipped (malformed, oversized, …): one readable warning each. */
  warnings?: string[];
  /** The events this worker has TypeScript hooks for (createWorker({ hooks })): runHooks is worth calling for them even without command hooks. */
  hookEvents?: HookEventName[];
  /** The model this worker calls for conversations that name none (its LLM_MODEL); absent in older results. */
  workerModel?: string;
}

export interface TerminalCallInput extends ToolCallInput {
  terminal: TerminalState;
}

export interface ToolResult {
  content: string;
  isError: boolean;
  exitCode?: number;
  /** Images for the model (references; the tool put the bytes in the object store). */
  images?: ImageRef[];
}

export interface TerminalResult extends ToolResult {
  terminal: TerminalState;
}

/** What a webhook delivery POSTs (as JSON): the conversation's id, its status, and the stop's event as `events --json` prints it. */
export interface WebhookPayload {
  id: string;
  status: ConversationStatus;
  event: ConversationEvent;
}

/** The deliverWebhook activity's input: no secret (the webhook worker holds it). */
export interface WebhookDeliveryInput {
  conversationId: string;
  url: string;
  payload: WebhookPayload;
  /** Names this delivery (`<conversation id>/<event index>`) so a receiver can drop a repeat. */
  deliveryId: string;
}

/** A delivery the receiver took (a 2xx answer). */
export interface WebhookDeliveryResult {
  statusCode: number;
  /** The attempt that got through (1: the first). */
  attempts: number;
}

/** What a failed delivery's ApplicationFailure carries as its one detail. */
export interface WebhookFailureDetails {
  statusCode?: number;
  attempts: number;
}
