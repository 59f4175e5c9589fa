// The public types: what users of the SDK and the CLI see (conversations, events, state, metrics,
// options). Plain data only: everything here travels through Temporal payloads, so no classes, no
// functions, no secrets.
import type { HookEventName, HooksConfig } from '../../hooks/config.js';
import type { SkillInfo } from '../../skills/prompt.js';
import type { Actor } from '../../client/tenants.js';

export type { Actor };

/** Every status a conversation can be in, as `faheem list --status` accepts them. */
export const CONVERSATION_STATUSES = ['idle', 'running', 'paused', 'waiting_for_confirmation', 'finished', 'error', 'stuck'] as const;
/** A conversation's status: idle, running, paused, waiting_for_confirmation, finished, error or stuck. */
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

/** faheemcode's own tools; users add theirs with `defineTool` and MCP servers. */
export const TOOL_NAMES = ['terminal', 'file_editor', 'task_tracker', 'think', 'finish', 'delegate', 'wait'] as const;
/** The name of one of faheemcode's own tools. */
export type ToolName = (typeof TOOL_NAMES)[number];

/** When an action waits for approval: never, always, or when risky (the model's rating or the tool's own rule). */
export type ConfirmationPolicy = 'never' | 'always' | 'risky';

/** What the model is and where it lives. The API key is not here: the worker holds it. */
export interface LLMSpec {
  usageId: string;
  /** e.g. `openai/gpt-4o`, `anthropic/claude-sonnet-4-6`; empty means the worker's LLM_MODEL. */
  model?: string;
  baseUrl?: string;
  temperature?: number;
  /** Ask the model to reason first (Anthropic: extended thinking; OpenAI: `reasoning_effort`); default the worker's LLM_REASONING_EFFORT, else off. */
  reasoningEffort?: ReasoningEffort;
  /**
   * How an OpenAI-compatible model is called: `responses` (OpenAI's Responses API) or `chat` (chat
   * completions). Default the worker's LLM_WIRE_API, else `responses` on OpenAI's own endpoint and
   * `chat` on any other base URL. Anthropic models always use the Messages API.
   */
  wireApi?: WireApi;
  /**
   * Models to move to, in order, when `model` (or the worker's LLM_MODEL chain) is unavailable (429,
   * 5xx, 529, unreachable), e.g. `['anthropic/claude-sonnet-4-6']`. Each resolves its endpoint and key
   * on the worker as a model of its own (`baseUrl` is `model`'s only); see docs/models.md.
   */
  fallbacks?: string[];
}

/** A model of a fallback chain that a call passed over, and why (one line, keys masked). */
export interface SkippedModel {
  model: string;
  reason: string;
}

/** The OpenAI wire API: the Responses API (`/v1/responses`) or chat completions (`/v1/chat/completions`). */
export type WireApi = 'responses' | 'chat';

/**
 * One reasoning item of OpenAI's Responses API, exactly as the API returned it (with `store: false`,
 * its `encrypted_content`): kept on the action event and sent back untouched before the function
 * calls it led to.
 */
export interface OpenAIReasoningItem {
  type: 'reasoning';
  id: string;
  /** Summaries of the reasoning (asked for with `reasoning.summary: 'auto'`); shown as thinking. */
  summary: { type: 'summary_text'; text: string }[];
  /** The reasoning itself, encrypted by OpenAI; opaque here. */
  encrypted_content?: string | null;
  content?: { type: 'reasoning_text'; text: string }[];
  status?: 'in_progress' | 'completed' | 'incomplete';
}

/** How hard the model thinks before it answers. */
export type ReasoningEffort = 'low' | 'medium' | 'high';

/**
 * The model's reasoning as the provider returned it (Anthropic's thinking blocks, with their
 * signatures; OpenAI's Responses reasoning items, with their encrypted content): kept on the action
 * event and sent back unchanged on the tool-use continuation.
 */
export type ReasoningBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | {
      type: 'openai_reasoning';
      item: OpenAIReasoningItem;
      /** The call id of the function call that came right after it in the reply (it goes back just before that call). */
      followedBy?: string;
    };

/** An agent as the conversation keeps it (plain data): its model, tool names and system prompt. */
export interface AgentSpec {
  llm: LLMSpec;
  /** Tool names: built-ins, tools made with `defineTool` (the workspace host's worker runs them). */
  tools: string[];
  /** Also every tool the workspace host's worker was given (`faheem worker --tools`); the CLI sets it. */
  hostTools?: boolean;
  systemPrompt?: string;
}

/**
 * A tool as the conversation knows it: plain data, made on the workspace host from the tool's
 * definition (or an MCP server's listing) when the conversation starts.
 */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments, as the model sees it. */
  parameters: Record<string, unknown>;
  /** Inside the workflow (think, finish, task_tracker) or as an activity on the workspace host. */
  runsIn: 'workflow' | 'host';
  /** Under the risky policy: always, never, or decided per call from the arguments by the tool itself. */
  needsApproval: boolean | 'per-call';
  /** For an MCP server's tool: which server and tool, and what a retry may do (from its annotations). */
  mcp?: { server: string; tool: string; retry: 'repeat' | 'report' };
}

/** What the workspace host told the conversation when it started: its tools and the repository's instructions. */
export interface ConversationSetup {
  /** Increments each time the setup is made; model-call workers cache it by (conversation, version). */
  version: number;
  tools: ToolSpec[];
  instructions?: RepositoryInstructions;
  /** The skills the model is shown (name, description, path of SKILL.md; never the body). */
  skills?: SkillInfo[];
  /** The events the host's worker has TypeScript hooks for (runHooks runs for them even without command hooks). */
  hookEvents?: HookEventName[];
  /** The model the host's worker calls when the conversation names none (its LLM_MODEL), for the Web UI's summaries. */
  workerModel?: string;
  /** The conversation's output schema (the `setup` query adds it from the options; not kept in the setup itself). */
  outputSchema?: Record<string, unknown>;
}

export interface RepositoryInstructions {
  /** Relative to the workspace, e.g. `AGENTS.md`. */
  path: string;
  text: string;
  /** The file was longer than the cap; `text` is its beginning. */
  truncated: boolean;
}

/** A local MCP server, started by the workspace host's worker. Write secrets as `${VAR}`, never literally. */
export interface McpStdioServerSpec {
  /** The program to start. */
  command: string;
  args?: string[];
  /** Variables for it; `${VAR}` and `${VAR:-default}` are filled in from the worker's environment. */
  env?: Record<string, string>;
  /** Where it starts (default: the workspace). */
  cwd?: string;
}

/** A remote MCP server (streamable HTTP). Write tokens in `headers` as `${VAR}`, never literally. */
export interface McpHttpServerSpec {
  /** An http:// or https:// URL. */
  url: string;
  headers?: Record<string, string>;
}

/** One MCP server: a local one (`command`) or a remote one (`url`). */
export type McpServerSpec = McpStdioServerSpec | McpHttpServerSpec;

/** MCP servers by name, in the format editors keep: `{ name: { command, args, env } | { url, headers } }`. */
export type McpServersSpec = Record<string, McpServerSpec>;

/** The shell state that carries from one command to the next; durable, so a new worker continues it. */
export interface TerminalState {
  cwd: string;
  /** Variables the conversation's commands exported or changed (never the worker's own secrets). */
  env: Record<string, string>;
  /** A command left running (no new output for a while); reachable with is_input on its host. */
  running?: { command: string; startedAt: string };
}

/** Tokens of one model call, or of all of them. */
export interface TokenUsage {
  /** Every input token of the call: uncached, read from the cache and written to it. */
  promptTokens: number;
  completionTokens: number;
  /** Input tokens read from the provider's prompt cache (part of promptTokens). */
  cacheReadTokens: number;
  /** Input tokens written to the prompt cache (part of promptTokens; absent before caching was counted). */
  cacheWriteTokens?: number;
}

/** What a conversation has used so far: cost (USD, the whole tree's with sub-agents), tokens and model calls. */
export interface Metrics {
  accumulatedCost: number;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  /** Input tokens written to the prompt cache (absent in metrics from before it was counted). */
  cacheWriteTokens: number;
  llmCalls: number;
  /** Each model call, newest last (the last 100): tokens, cost and latency. */
  calls?: ModelCallMetrics[];
}

/** One model call in `Metrics.calls`: its step, whether it answered or condensed, its cost and latency. */
export interface ModelCallMetrics extends TokenUsage {
  /** The conversation's step (over every run; a condensation: the steps taken before it). */
  step: number;
  kind: 'step' | 'condense';
  cost: number;
  latencyMs: number;
  /** The model the endpoint says answered (also when only the worker named it). */
  model?: string;
  /** The reply was cut by the output-token cap. */
  truncated?: boolean;
  /** The models of the fallback chain passed over before the one that answered (absent: none). */
  fallbacks?: string[];
}

export const emptyMetrics = (): Metrics => ({
  accumulatedCost: 0,
  promptTokens: 0,
  completionTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  llmCalls: 0,
  calls: [],
});

export interface ConversationOptions {
  workspace: string;
  agent: AgentSpec;
  /** A JSON Schema the final answer must match: it ends as a JSON value (`output`), checked, and asked again when it does not match. */
  outputSchema?: Record<string, unknown>;
  /** Task queue that the workspace's host listens on: every tool runs there. */
  toolTaskQueue: string;
  maxIterations: number;
  confirmationPolicy: ConfirmationPolicy;
  /** A conversation that is not running for this long completes (its history stays readable). */
  idleTimeoutMs: number;
  /** Continue as new after this many model calls in one workflow run (and whenever Temporal suggests it). */
  continueAsNewEverySteps?: number;
  /** Waiting for confirmation longer than this rejects the actions (default: wait for ever). */
  confirmationTimeoutMs?: number;
  /** A run that has cost this much (USD) pauses with the reason "budget". */
  maxBudgetPerRunUsd?: number;
  /** Summarise older events when the prompt grows; `false` turns it off. */
  condenser?: CondenserOptions | false;
  /** MCP servers whose tools the agent gets; `${VAR}` in env and headers is filled in on the worker. */
  mcpServers?: McpServersSpec;
  /** Set on a sub-agent's conversation: its parent and how deep it is (the root is 0). */
  parent?: { id: string; depth: number };
  /**
   * The team API's tenant it belongs to (src/client/tenants.ts): its FaheemTenant search attribute and
   * Temporal fairness key, which its sub-agents, forks and scheduled runs carry too.
   */
  tenant?: string;
  /** How deep sub-agents may nest (default 2: a sub-agent's sub-agent may not delegate). */
  maxDepth?: number;
  /** The longest one `wait` call may sleep (default 7 days); a longer one is cut to this. */
  maxWaitMs?: number;
  /** A checkpoint of the workspace after every step (default true); false turns time travel off. */
  checkpoints?: boolean;
  /** Claude Code's hooks (`{ hooks: { PreToolUse: [...], … } }`), run on the workspace host; kept with the conversation (no secrets in it). */
  hooks?: HooksConfig;
  /** After this long with no worker picking up a call on the tool queue, say so (default 30 s). */
  hostWaitMs?: number;
  /**
   * The pool of hosts whose workspace this is (`faheem start --pool`): the workspace lives in the
   * object store and on one live host of the pool at a time; `workspace` and `toolTaskQueue` are
   * that host's, set when a host claims the conversation.
   */
  pool?: string;
  /** The host of the pool that holds it now, and its fence epoch (set by the workflow; absent while it hibernates). */
  poolHost?: { host: string; epoch: number };
  /** A pooled conversation idle this long releases its host folder (default 10 minutes; paused: at once). */
  poolIdleReleaseMs?: number;
  /** The host a hibernating pooled conversation released (set by the workflow). */
  poolReleasedBy?: string;
  /**
   * Set by the workflow when the conversation hibernated in the middle of a step (a wait, an
   * approval): that step's workspace as it was then, shipped before the folder was released. The
   * next claim restores it; the step records it as its checkpoint when no host call came after.
   */
  poolReleasedMidStep?: { step: number; commit: string; added: number; changed: number; deleted: number };
  /**
   * Where each stop (finished, paused, waiting for approval, error, stuck) is POSTed. Only the URL
   * and the queue of the webhook worker: the secret stays with whoever created the conversation.
   */
  webhook?: WebhookSpec;
}

/** A conversation's webhook as the conversation keeps it (no secret: see src/webhooks/secrets.ts). */
export interface WebhookSpec {
  /** An http(s) URL, checked when the conversation was created. */
  url: string;
  /** The task queue of the worker that delivers it (the creating `faheem api` process's: `<task queue>-webhooks`). */
  taskQueue: string;
}

/** A sub-agent as its parent sees it. */
export interface ChildSummary {
  id: string;
  status: ConversationStatus;
  /** The whole cost of its tree so far (USD). */
  cost: number;
  task: string;
}

/** When older events are summarised for the model's prompt. */
export interface CondenserOptions {
  /** Condense when the model's prompt holds more events than this… */
  maxEvents: number;
  /** …or when the last model call's prompt had more tokens than this. */
  maxPromptTokens: number;
  /** Events at the start that always stay (the task). */
  keepFirst: number;
}

/** Where a forked conversation came from. */
export interface ForkOrigin {
  id: string;
  step: number;
  /** The checkpoint its workspace was made from. */
  commit: string;
}

/** One checkpoint as the conversation keeps it (and `faheem checkpoints` lists it). */
export interface CheckpointEntry {
  step: number;
  /** The event that records it. */
  index: number;
  time: string;
  commit?: string;
  added: number;
  changed: number;
  deleted: number;
  /** Left behind by a rewind to an earlier step (still restorable). */
  rewound?: boolean;
  /** The tools' durable state after the step (the terminal's cwd and variables, the task list); kept for recent steps only. */
  toolState?: Record<string, unknown>;
}

// ---- Events: immutable records, ordered by index. ----

/** Who an event comes from. */
export type EventSource = 'user' | 'agent' | 'environment';

/** What every event has: its place in the log, its time and its source. */
interface EventBase {
  /** Its place in the event log, from 0. */
  index: number;
  /** ISO time from the workflow clock (deterministic on replay). */
  timestamp: string;
  source: EventSource;
  /** Set by readers on events a rewind left behind (out of the prompt, still readable). */
  rewound?: true;
  /**
   * Who made the change this event records, when it came through the team API (`faheem api`): the
   * tenant and the key's id or name, never the key. Absent on what the agent, the loop or a plain
   * Temporal client (the CLI, the SDKs, the console) did.
   */
  by?: Actor;
}

/** The image formats a conversation takes (sniffed from the bytes, never from a file name). */
export const IMAGE_MIME_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
/** One of the image formats a conversation takes. */
export type ImageMimeType = (typeof IMAGE_MIME_TYPES)[number];

/**
 * An image as a conversation keeps it: a reference, never the bytes. The bytes are in the object
 * store (FAHEEM_OBJECT_STORE, else a folder under FAHEEM_HOME) under `images/<sha256>`, written by
 * the client (or the tool) before the reference reaches the workflow, and read by the model call.
 */
export interface ImageRef {
  /** The SHA-256 of the image's bytes, 64 lowercase hex digits. */
  sha256: string;
  mimeType: ImageMimeType;
  /** Its size in bytes. */
  size: number;
  /** A name to show (the file's base name), when it came from a file. */
  name?: string;
}

/** What one model call used and cost (on the agent's message, or the first action of a reply). */
export interface CallSummary extends TokenUsage {
  model: string;
  /** USD at the model's list prices (cache reads and writes included). */
  cost: number;
  latencyMs: number;
}

/** A message, from the user or the agent. */
export interface MessageEvent extends EventBase {
  kind: 'message';
  text: string;
  /** Images sent with a user message (references; the bytes stay in the object store). */
  images?: ImageRef[];
  /** An agent reply cut by the output-token cap: the model is told so in its next prompt. */
  truncated?: boolean;
  /**
   * An agent reply's thinking as text (Anthropic thinking, the Responses API's reasoning summaries),
   * for display. A final reply's reasoning blocks are not kept: nothing sends them back.
   */
  thinking?: string;
  /** The model call that wrote this reply. */
  call?: CallSummary;
  /** A conversation with an output schema: the answer's JSON value, checked against it (only on a reply that matched). */
  output?: unknown;
  /** The model is told its answer did not match the output schema (`errors` empty: finish was called; the answer is asked for). */
  outputCheck?: { try: number; errors: string[] };
}

/** A tool call the model made. */
export interface ActionEvent extends EventBase {
  kind: 'action';
  tool: string;
  toolCallId: string;
  /** Arguments as the model sent them (parsed when they were valid JSON). */
  arguments: unknown;
  /** The text the model wrote alongside its tool calls (on the first action of a reply). */
  thought?: string;
  /** Groups the actions of one model reply. */
  replyId: string;
  /** The Responses API's id of this function_call item (`fc_…`), sent back with it beside its reasoning. */
  itemId?: string;
  /** The reply's reasoning blocks (on the first action of a reply), sent back with the tool calls. */
  reasoning?: ReasoningBlock[];
  /** The model call that made this reply (on its first action). */
  call?: CallSummary;
  /** The reply was cut by the output-token cap (on the first action): the model is told so. */
  truncated?: boolean;
}

/** What a tool call gave back (`exitCode` for the terminal). */
export interface ObservationEvent extends EventBase {
  kind: 'observation';
  tool: string;
  toolCallId: string;
  content: string;
  isError: boolean;
  exitCode?: number;
  /** Images the tool showed the model (`file_editor view` of an image): references only. */
  images?: ImageRef[];
}

/** Something went wrong in the conversation (a failed model call, a limit reached, …). */
export interface ErrorEvent extends EventBase {
  kind: 'error';
  message: string;
}

/** The conversation was paused (`now`: the running command was interrupted too). */
export interface PauseEvent extends EventBase {
  kind: 'pause';
  now: boolean;
  reason?: string;
}

/** The conversation was set running again. */
export interface ResumeEvent extends EventBase {
  kind: 'resume';
}

/** The conversation was closed by someone acting through the team API (`by` says who; other closes record no event). */
export interface CloseEvent extends EventBase {
  kind: 'close';
}

/** The conversation's status changed. */
export interface StatusEvent extends EventBase {
  kind: 'status';
  status: ConversationStatus;
  reason?: string;
}

/** Events [forgottenFrom, forgottenTo) are replaced, in the model's prompt, by `summary`. */
export interface CondensationEvent extends EventBase {
  kind: 'condensation';
  summary: string;
  forgottenFrom: number;
  forgottenTo: number;
}

/** The repository's instructions (AGENTS.md) the agent was given, shown so users see them. */
export interface InstructionsEvent extends EventBase {
  kind: 'instructions';
  path: string;
  text: string;
  truncated: boolean;
}

/** The workspace host's queue has had no worker for a while (available false), or has one again. */
export interface HostEvent extends EventBase {
  kind: 'host';
  queue: string;
  available: boolean;
}

/**
 * A pooled conversation moved to another host of its pool: its workspace there was restored from
 * the checkpoint shipped after step `restoredFromStep` (null: nothing was shipped yet).
 */
export interface HostChangedEvent extends EventBase {
  kind: 'host_changed';
  /** The host that held it (lost), or null for the first host. */
  from: string | null;
  to: string;
  restoredFromStep: number | null;
  /** Why it moved, in words. */
  reason: string;
}

/** A sub-agent started by a delegate call, or one that ended. */
export interface ChildEvent extends EventBase {
  kind: 'child';
  childId: string;
  toolCallId: string;
  task: string;
  status: ConversationStatus | 'started';
}

/**
 * A step's checkpoint: the workspace as it was after step `step` (0: before the first), a commit in
 * the workspace host's shadow repository. Steps that ran no host tool reuse the previous commit.
 */
export interface CheckpointEvent extends EventBase {
  kind: 'checkpoint';
  step: number;
  /** Absent when the snapshot failed (an error event says why): this step cannot be rewound to. */
  commit?: string;
  added: number;
  changed: number;
  deleted: number;
}

/**
 * The conversation was rewound to step `toStep`: events [dropFrom, dropTo) leave the model's prompt
 * (they stay readable, marked rewound) and the workspace is as checkpoint `commit` holds it.
 */
export interface RewindEvent extends EventBase {
  kind: 'rewind';
  toStep: number;
  commit: string;
  /** The workspace just before the rewind, kept as a checkpoint: restore it to undo the rewind. */
  before: string;
  dropFrom: number;
  dropTo: number;
  /** What a rewind cannot undo, said so the user knows. */
  notUndone: string;
}

/**
 * One delivery of a stop to the conversation's webhook, once it is over: delivered (a 2xx answer)
 * or failed for good (a 4xx other than 408/429, a refused address, or retries ran out).
 */
export interface WebhookEvent extends EventBase {
  kind: 'webhook';
  /** The index of the stop's `status` event that was sent. */
  eventIndex: number;
  /** The conversation's status that was sent. */
  status: ConversationStatus;
  delivered: boolean;
  /** Attempts made (1 when the first answer was final). */
  attempts: number;
  /** The receiver's HTTP status of the last attempt, when it answered. */
  statusCode?: number;
  /** Why it failed (absent when delivered). */
  reason?: string;
}

/**
 * A model call moved along its fallback chain: the models in `skipped` were unavailable (or cooling
 * down after being so), and `model` answered.
 */
export interface FallbackEvent extends EventBase {
  kind: 'fallback';
  /** The model of the chain that answered, as the chain names it (`anthropic/claude-sonnet-4-6`). */
  model: string;
  /** The models passed over before it, in chain order, each with why. */
  skipped: SkippedModel[];
  /** Which call: a step's reply or a condensation. */
  call: 'step' | 'condense';
}

/** One record of a conversation's event log, told apart by `kind`. */
/** The skills the agent was offered at setup (names and descriptions only), and skill files skipped. */
export interface SkillsEvent extends EventBase {
  kind: 'skills';
  skills: { name: string; description: string; path: string }[];
  warnings: string[];
}

/** A UserPromptSubmit hook refused user message `messageIndex`: the model never sees it. */
export interface RefusedEvent extends EventBase {
  kind: 'refused';
  messageIndex: number;
  reason: string;
}

export type ConversationEvent =
  | SkillsEvent
  | RefusedEvent
  | CheckpointEvent
  | RewindEvent
  | HostEvent
  | HostChangedEvent
  | ChildEvent
  | InstructionsEvent
  | MessageEvent
  | ActionEvent
  | ObservationEvent
  | ErrorEvent
  | PauseEvent
  | ResumeEvent
  | CloseEvent
  | StatusEvent
  | CondensationEvent
  | WebhookEvent
  | FallbackEvent;

/** What the `state` query returns, and what `faheem status --json` prints. */
export interface ConversationState {
  id: string;
  status: ConversationStatus;
  /** Model calls in the current run (the limit counts these). */
  iterations: number;
  /** Increments each time the conversation is set running; lets a client wait for "this" run. */
  runNumber: number;
  events: number;
  pendingMessages: number;
  metrics: Metrics;
  lastError: string | null;
  workspace: string;
  /** When actions wait for approval (absent in answers of workflows from before it was told). */
  confirmationPolicy?: ConfirmationPolicy;
  model: string;
  terminal: TerminalState;
  closed: boolean;
  /** Tool calls waiting for approve / reject. */
  pendingActions: { toolCallId: string; tool: string; arguments: unknown }[];
  /** Cost of the current run, for the per-run budget. */
  runCost: number;
  /** Sub-agents started by delegate calls (their costs are in metrics.accumulatedCost). */
  children: ChildSummary[];
  /** A pooled conversation's pool (absent for others). */
  pool?: string;
  /** The host of the pool holding it now (null until one claims it); `workspace` is its path there. */
  host?: string | null;
  /** The agent's last answer (its reply without tool calls, or finish's message). */
  finalMessage: string | null;
  /** With an output schema: the last answer's JSON value, checked against it (absent until one matched). */
  output?: unknown;
  /** Set for a sub-agent: its parent conversation. */
  parentId?: string;
  /** The tenant it belongs to (absent: none). */
  tenant?: string;
  /** The workspace host's task queue, while no worker there picks up the conversation's next call. */
  waitingForHost?: string | null;
  /** While the agent waits (the `wait` tool): until when, and why. */
  waitingUntil?: { until: string; reason: string } | null;
  /** Steps so far over the whole conversation (a rewind goes back to its step). */
  steps?: number;
  /** For a fork: the conversation and step it was forked from. */
  forkedFrom?: ForkOrigin | null;
  /** A fork whose workspace is still being made (nothing runs before it is). */
  forkPending?: boolean;
}
