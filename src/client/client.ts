// The TypeScript SDK, mirroring the seed: LLM, Agent, Conversation. A Conversation is a handle on a
// workflow; every call goes through Temporal, so any process can attach to the same conversation.
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { FaheemError } from '../core/errors.js';
import { checkTenant } from './tenants.js';
import { checkConversationId } from '../conversation/conversation-id.js';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { readEvents } from '../conversation/read-events.js';
import { parseHooks, type HooksConfig } from '../hooks/config.js';
import { markRewound, rewoundRanges, type RewindAnswer } from '../time-travel/workflow/rewind-rules.js';
import { ConversationClosedError, ConversationNotFoundError, InvalidRequestError, WaitTimeoutError } from '../core/errors.js';
import {
  clientChildEnv,
  clientSettings,
  clientStoreSettings,
  taskQueue as defaultTaskQueue,
  toolTaskQueue as defaultToolTaskQueue,
} from '../connection.js';
import { POOL_NAME, poolQueueName } from '../pool/workflow/pool-rules.js';
import { MAX_CHAIN } from '../models/workflow/model-chain.js';
import { parseMcpServers } from '../mcp/config.js';
import { explainUnreadable } from '../security/codec.js';
import { oneLine } from '../core/text.js';
import { lastPauseReason, stopReason, type RunResult } from '../conversation/stop-reason.js';
import { LiveReader } from '../live/subscribe.js';
import { ChangeWaiter, FALLBACK_MS, moreThan, stopped, type NewsTest } from '../live/change-waiter.js';
import { followLive, type FollowSource } from '../live/follow.js';
import type { LiveDelta } from '../live/types.js';
import { TOOL_NAME } from '../tools/define.js';
import { fileEditorTool, terminalTool } from '../tools/builtin.js';
import { checkWebhookUrl } from '../webhooks/target.js';
import { webhookTaskQueue } from '../webhooks/queue.js';
import { PAUSABLE } from '../conversation/workflow/status.js';
import { toOutputSchema } from '../models/structured-output.js';
import type { ZodType } from 'zod';
import { storeImages, type ImageInput } from '../images/inputs.js';
import {
  ConversationModelKey,
  ConversationStatusKey,
  TenantKey,
  addMessageUpdate,
  approveUpdate,
  closeSignal,
  rejectUpdate,
  setConfirmationPolicyUpdate,
  pauseSignal,
  pauseUpdate,
  runUpdate,
  stateQuery,
  rewindUpdate,
  checkpointsQuery,
  checkMessageText,
  type PauseRequest,
} from '../conversation/workflow/messages.js';
import {
  DEFAULTS,
  type AgentSpec,
  type CheckpointEntry,
  type CondenserOptions,
  type ConfirmationPolicy,
  type ConversationEvent,
  type ConversationInput,
  type ConversationStatus,
  type ConversationState,
  type ImageRef,
  type LLMSpec,
  type McpServersSpec,
  type Metrics,
  type ReasoningEffort,
  type WireApi,
} from '../core/types.js';

export { DelegateTool, FinishTool, TaskTrackerTool, ThinkTool, WaitTool } from '../tools/builtin.js';

// The SDK's edge gives these two this process's environment (read at their first call, not at
// import), for a program that runs them itself. A worker given them runs its own, made from its own.
/** Runs bash commands in the workspace (cwd and exported variables carry over between calls). */
export const TerminalTool = terminalTool({ env: clientChildEnv() });
/** Views and edits files inside the workspace. */
export const FileEditorTool = fileEditorTool({ env: clientChildEnv() });
export { ConversationNotFoundError };
export type { RunResult, ImageInput };

/** A tool for `Agent`: a tool made with `defineTool` (or a built-in like `TerminalTool`), or its name. */
export type AgentTool = { readonly name: string } | string;

/** A reasoning effort checked: low, medium or high. */
function reasoningEffort(value: unknown): ReasoningEffort {
  if (value === 'low' || value === 'medium' || value === 'high') return value;
  throw new FaheemError('invalid_request', `LLM: reasoningEffort must be low, medium or high, not ${JSON.stringify(value)}`);
}

/** A wire API checked: responses or chat. */
function wireApi(value: unknown): WireApi {
  if (value === 'responses' || value === 'chat') return value;
  throw new FaheemError('invalid_request', `LLM: wireApi must be responses or chat, not ${JSON.stringify(value)}`);
}

/** Fallback models checked: names (`provider/model`), at most MAX_CHAIN - 1 of them. */
function fallbackModels(value: unknown): string[] {
  if (!Array.isArray(value) || value.some((m) => typeof m !== 'string' || m.trim() === '' || m.length > 200 || m.includes(',')))
    throw new InvalidRequestError(`LLM: fallbacks must be model names such as "anthropic/claude-sonnet-4-6", not ${JSON.stringify(value)}`);
  if (value.length > MAX_CHAIN - 1) throw new InvalidRequestError(`LLM: at most ${MAX_CHAIN - 1} fallbacks`);
  return (value as string[]).map((m) => m.trim());
}

/**
 * The model an agent uses: its name (`openai/gpt-4o`, `anthropic/…`; default the worker's LLM_MODEL),
 * endpoint and temperature. The API key is never here: the worker reads it from its environment.
 */
export class LLM {
  /** The model as the conversation keeps it (plain data). */
  readonly spec: LLMSpec;
  /**
   * @param options.reasoningEffort - Reason before answering (Anthropic extended thinking, OpenAI
   *   `reasoning_effort`); default the worker's LLM_REASONING_EFFORT, else off.
   * @param options.wireApi - How an OpenAI-compatible model is called: `responses` (the Responses
   *   API, reasoning kept across tool calls) or `chat` (chat completions); default the worker's
   *   LLM_WIRE_API, else `responses` on OpenAI's own endpoint and `chat` elsewhere.
   * @param options.fallbacks - Models to move to, in order, when the model is unavailable (429, 5xx,
   *   529, unreachable), e.g. `['anthropic/claude-sonnet-4-6']`; each uses its own provider's
   *   endpoint and key on the worker (see docs/models.md, "Fallback chains").
   */
  constructor(options: {
    usageId?: string;
    model?: string;
    baseUrl?: string;
    temperature?: number;
    reasoningEffort?: ReasoningEffort;
    wireApi?: WireApi;
    fallbacks?: string[];
    apiKey?: unknown;
  }) {
    if (options.apiKey !== undefined) {
      // Keys would be written into workflow history; the worker reads them from its environment.
      throw new InvalidRequestError("LLM: pass no apiKey here. Set LLM_API_KEY (or the provider's key variable) where the worker runs.");
    }
    this.spec = {
      usageId: options.usageId ?? 'agent',
      ...(options.model ? { model: options.model } : {}),
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.reasoningEffort ? { reasoningEffort: reasoningEffort(options.reasoningEffort) } : {}),
      ...(options.wireApi !== undefined ? { wireApi: wireApi(options.wireApi) } : {}),
      ...(options.fallbacks?.length ? { fallbacks: fallbackModels(options.fallbacks) } : {}),
    };
  }
}

/**
 * What the agent is: its model, the tools it may call and, optionally, its own system prompt.
 * Tools are named here; the worker on the workspace's host runs them (built-ins always, yours when
 * given to `createWorker({ tools })`), so no code or key travels through Temporal.
 */
export class Agent {
  /** The agent as the conversation keeps it (plain data). */
  readonly spec: AgentSpec;
  constructor(options: {
    llm: LLM;
    /** Default: terminal and file_editor. think and finish are always added. */
    tools?: AgentTool[];
    systemPrompt?: string;
    /** Also every tool the workspace host's worker was given (as `faheem start` does). */
    hostTools?: boolean;
  }) {
    const names = (options.tools ?? ['terminal', 'file_editor']).map((t) => (typeof t === 'string' ? t : t.name));
    for (const n of names) {
      if (typeof n !== 'string' || !TOOL_NAME.test(n))
        throw new InvalidRequestError(`Agent: "${String(n)}" is not a tool name (letters, digits, _ and -, at most 64 characters)`);
    }
    // think and finish are always there: the model needs a way to reason and to stop.
    const tools = [...new Set<string>([...names, 'think', 'finish'])];
    this.spec = {
      llm: options.llm.spec,
      tools,
      ...(options.hostTools ? { hostTools: true } : {}),
      ...(options.systemPrompt ? { systemPrompt: options.systemPrompt } : {}),
    };
  }
}

/**
 * `text` when the conversation would accept it as a user message (the workflow's own rule: not empty,
 * within DEFAULTS.maxMessageChars); otherwise an InvalidRequestError "message not sent: …".
 */
export function checkMessage(text: unknown): string {
  try {
    return checkMessageText(text);
  } catch (err) {
    throw new InvalidRequestError(`message not sent: ${(err as Error).message}`);
  }
}

/** What `Conversation.create` takes: the agent, the workspace (on the worker's host), and the conversation's limits. */
export interface CreateOptions {
  agent: Agent;
  /** The workspace folder on the tool host; with `pool`, not given (the pool's host has it). */
  workspace?: string;
  /**
   * A pool of hosts (workers started with `--pool NAME`): the workspace lives in the object store
   * (FAHEEM_OBJECT_STORE) and on one live host of the pool at a time, and moves when that host is lost.
   */
  pool?: string;
  /** With `pool`: the workspace starts from this folder's files, uploaded at start (default: empty). */
  workspaceFrom?: string;
  /** With `pool`: idle this long, it releases its host folder (hibernates; default 10 minutes; paused: at once). */
  poolIdleReleaseMs?: number;
  /**
   * The conversation's id (default: generated, `conv-…`): 1–128 letters, digits, `.`, `_`, `:` and
   * `-`, starting with a letter or digit, never `..`; others are an InvalidRequestError.
   */
  id?: string;
  firstMessage?: string;
  /**
   * Images sent with the first message: file paths, or bytes with a MIME type (see ImageInput).
   * Their bytes go to the object store before the conversation starts; history holds references.
   */
  images?: ImageInput[];
  /** Start running at once (with firstMessage). */
  run?: boolean;
  maxIterations?: number;
  confirmationPolicy?: ConfirmationPolicy;
  idleTimeoutMs?: number;
  continueAsNewEverySteps?: number;
  /** With confirmation, reject actions nobody answered within this time (default: wait for ever). */
  confirmationTimeoutMs?: number;
  /** A run that has cost this much pauses with the reason "budget". */
  maxBudgetPerRunUsd?: number;
  /** When to summarise older events (default: over 240 events or 120k prompt tokens); false: never. */
  condenser?: CondenserOptions | false;
  taskQueue?: string;
  toolTaskQueue?: string;
  /**
   * MCP servers whose tools the agent gets, as editors keep them:
   * `{ name: { command, args, env } | { url, headers } }`. They run on the workspace host; write
   * secrets as `${VAR}` (filled in from the worker's environment), never literally: this config is
   * part of the conversation's history.
   */
  mcpServers?: McpServersSpec;
  /** How deep sub-agents (the delegate tool) may nest (default 2). */
  maxDepth?: number;
  /**
   * Claude Code's hooks JSON (`{ hooks: { PreToolUse: [{ matcher, hooks: [{ type: 'command', command, timeout }] }], … } }`):
   * commands run on the workspace host with the event as JSON on stdin; exit code 2 blocks. Kept with
   * the conversation (in its history): no secrets in it.
   */
  hooks?: HooksConfig;
  /** A checkpoint of the workspace after every step, for rewind and fork (default true). */
  checkpoints?: boolean;
  /** After this long with no worker picking up a call on the workspace host, the conversation says it waits for that host (default 30 s). */
  hostWaitMs?: number;
  /**
   * The team API's tenant it belongs to (checkTenant's rule; others are an InvalidRequestError): set
   * as its FaheemTenant search attribute (`faheem list --tenant`) and as Temporal's fairness key,
   * so when model calls are scarce each tenant gets its share. Its sub-agents carry it too.
   */
  tenant?: string;
  /**
   * POST each stop (finished, paused, waiting for approval, error, stuck) to this URL, signed with
   * the secret the webhook worker on `taskQueue` (default `<task queue>-webhooks`) keeps for this
   * conversation's id (see src/webhooks: `prepareWebhook`, `createWebhookWorker`). Only the URL and
   * the queue enter the conversation: never pass the secret here.
   */
  webhook?: { url: string; taskQueue?: string };
  /**
   * The final answer's shape: a JSON Schema, or a zod schema. The answer is asked in the provider's
   * structured mode, checked on the worker, sent back with what is wrong when it does not match (at
   * most 3 times), and its JSON value is `output` in `run()`'s result and `state()`. A schema that
   * is not one is an InvalidRequestError.
   */
  outputSchema?: Record<string, unknown> | ZodType;
}

/** The search attributes a conversation starts with (status, model, and its tenant when it has one). */
export type StartSearchAttribute = { key: typeof ConversationStatusKey | typeof ConversationModelKey | typeof TenantKey; value: string };

/**
 * The start options that place a conversation of `tenant` (none: none): its FaheemTenant search
 * attribute and its fairness key. Activities and child workflows inherit the priority; the search
 * attribute is set on each start (sub-agents: src/sub-agents/workflow/sub-agents.ts).
 */
export function tenantStart(tenant: string | undefined): {
  typedSearchAttributes: StartSearchAttribute[];
  priority?: { fairnessKey: string };
} {
  if (tenant === undefined) return { typedSearchAttributes: [] };
  return { typedSearchAttributes: [{ key: TenantKey, value: tenant }], priority: { fairnessKey: tenant } };
}

/** The longest title (the first message on one line) a conversation's memo and Web UI summary hold. */
const TITLE_CHARS = 120;

function checkedOutputSchema(schema: unknown): Record<string, unknown> {
  try {
    return toOutputSchema(schema);
  } catch (err) {
    throw new InvalidRequestError((err as Error).message);
  }
}

function checkPoolName(pool: string): string {
  if (!POOL_NAME.test(pool))
    throw new InvalidRequestError(
      `pool ${JSON.stringify(pool)}: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  return pool;
}

/**
 * How a conversation workflow is started for these options: its id, and the workflow's input, task
 * queue, search attributes and Web UI texts. `Conversation.create` starts it; schedules start the
 * same on every run (with an id Temporal derives from the schedule).
 */
export function conversationStart(
  options: CreateOptions,
  /** The first message's images, already stored (Conversation.create stores `options.images`). */
  firstImages: readonly ImageRef[] = [],
): {
  id: string;
  workflow: {
    taskQueue: string;
    args: [ConversationInput];
    typedSearchAttributes: StartSearchAttribute[];
    /** The tenant's fairness key (absent without a tenant). */
    priority?: { fairnessKey: string };
    /** The workspace and the title (the first message on one line): listings show them from one visibility request. */
    memo: { workspace: string; title?: string };
    staticSummary: string;
    staticDetails: string;
  };
} {
  const id = options.id !== undefined ? checkConversationId(options.id, 'new') : `conv-${randomUUID().slice(0, 13)}`;
  if (options.firstMessage !== undefined) checkMessage(options.firstMessage);
  const pool = options.pool !== undefined ? checkPoolName(options.pool) : undefined;
  if (pool === undefined && options.workspace === undefined) throw new InvalidRequestError('a conversation needs a workspace (or a pool)');
  if (pool !== undefined && options.workspace !== undefined)
    throw new InvalidRequestError('a pooled conversation has no workspace folder of its own: pass workspaceFrom to start from one');
  if (pool === undefined && options.workspaceFrom !== undefined) throw new InvalidRequestError('workspaceFrom goes with pool');
  const tenant = options.tenant !== undefined ? checkTenant(options.tenant) : undefined;
  const outputSchema = options.outputSchema !== undefined ? checkedOutputSchema(options.outputSchema) : undefined;
  const placed = tenantStart(tenant);
  const settings = clientSettings();
  const taskQueue = options.taskQueue ?? defaultTaskQueue(settings);
  const input: ConversationInput = {
    options: {
      // Pooled: a stand-in until a host of the pool claims it (the workflow then sets the host's path and queue).
      workspace: pool !== undefined ? `/faheem-pool/${pool}/${id}` : path.resolve(options.workspace!),
      agent: options.agent.spec,
      ...(outputSchema ? { outputSchema } : {}),
      toolTaskQueue: pool !== undefined ? poolQueueName(taskQueue, pool) : (options.toolTaskQueue ?? defaultToolTaskQueue(settings)),
      ...(pool !== undefined ? { pool } : {}),
      ...(pool !== undefined && options.poolIdleReleaseMs !== undefined ? { poolIdleReleaseMs: options.poolIdleReleaseMs } : {}),
      maxIterations: options.maxIterations ?? DEFAULTS.maxIterations,
      confirmationPolicy: options.confirmationPolicy ?? 'never',
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs,
      ...(options.continueAsNewEverySteps ? { continueAsNewEverySteps: options.continueAsNewEverySteps } : {}),
      ...(options.confirmationTimeoutMs !== undefined ? { confirmationTimeoutMs: options.confirmationTimeoutMs } : {}),
      ...(options.maxBudgetPerRunUsd !== undefined ? { maxBudgetPerRunUsd: options.maxBudgetPerRunUsd } : {}),
      ...(options.condenser !== undefined ? { condenser: options.condenser } : {}),
      ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
      ...(options.hostWaitMs !== undefined ? { hostWaitMs: options.hostWaitMs } : {}),
      ...(options.hooks !== undefined ? { hooks: parseHooks(options.hooks) } : {}),
      ...(options.checkpoints === false ? { checkpoints: false } : {}),
      ...(options.webhook !== undefined
        ? {
            webhook: {
              url: checkWebhookUrl(options.webhook.url).href,
              taskQueue: options.webhook.taskQueue ?? webhookTaskQueue(taskQueue),
            },
          }
        : {}),
      ...(tenant !== undefined ? { tenant } : {}),
      ...(options.mcpServers && Object.keys(options.mcpServers).length > 0
        ? { mcpServers: parseMcpServers(options.mcpServers, 'mcpServers') }
        : {}),
    },
    ...(options.firstMessage !== undefined ? { firstMessage: options.firstMessage } : {}),
    ...(firstImages.length ? { firstImages: [...firstImages] } : {}),
    ...(options.run ? { run: true } : {}),
  };
  const model = options.agent.spec.llm.model ?? "the worker's LLM_MODEL";
  return {
    id,
    workflow: {
      taskQueue,
      args: [input],
      // Visible (faheem list, faheem status without a worker) before any worker has picked it up.
      typedSearchAttributes: [
        { key: ConversationStatusKey, value: options.run ? 'running' : 'idle' },
        { key: ConversationModelKey, value: options.agent.spec.llm.model || 'default' },
        ...placed.typedSearchAttributes,
      ],
      ...(placed.priority ? { priority: placed.priority } : {}),
      // The workspace and the title in the memo too: listings (the console's, `session/list` of
      // `faheem acp`) show and filter them without a query per row.
      memo: {
        workspace: input.options.workspace,
        ...(options.firstMessage !== undefined ? { title: oneLine(options.firstMessage, TITLE_CHARS) } : {}),
      },
      staticSummary: options.firstMessage ? oneLine(options.firstMessage, TITLE_CHARS) : `Conversation in ${input.options.workspace}`,
      staticDetails: [
        `**Model:** ${model}`,
        `**Workspace:** \`${input.options.workspace}\``,
        `**Tools:** ${options.agent.spec.tools.join(', ')}${options.agent.spec.hostTools ? " and the workspace host's own" : ''}`,
        ...(input.options.mcpServers ? [`**MCP servers:** ${Object.keys(input.options.mcpServers).join(', ')}`] : []),
        `**Max iterations per run:** ${input.options.maxIterations} · **Confirmation:** ${input.options.confirmationPolicy}`,
        ...(tenant !== undefined ? [`**Tenant:** ${tenant}`] : []),
        ...(outputSchema ? ['**Output:** JSON checked against the output schema'] : []),
      ].join('\n\n'),
    },
  };
}

/**
 * A handle on one conversation (one Temporal workflow): every call goes through Temporal, so any
 * process can attach to it (`Conversation.attach`). Errors are FaheemErrors: ConversationNotFoundError,
 * ConversationClosedError, InvalidRequestError (the conversation refused, and says why).
 */
export class Conversation {
  private constructor(
    readonly client: Client,
    readonly id: string,
    private readonly handle: WorkflowHandle,
  ) {}

  /** Starts a conversation workflow; it waits in `idle` (or runs at once with `run: true`). */
  static async create(client: Client, options: CreateOptions): Promise<Conversation> {
    let images: ImageRef[] = [];
    if (options.images?.length) {
      if (options.firstMessage === undefined) throw new InvalidRequestError('images go with a first message: give firstMessage too');
      conversationStart(options); // the options checked before any image is stored
      images = await storeImages(clientStoreSettings(), options.images);
    }
    const start = conversationStart(options, images);
    // Its files go up before it starts: the first host to claim it restores them.
    if (options.workspaceFrom !== undefined)
      await (await import('../pool/seed.js')).seedWorkspace(start.id, options.workspaceFrom, clientStoreSettings(), clientChildEnv());
    const handle = await client.workflow.start('conversation', { workflowId: start.id, ...start.workflow });
    return new Conversation(client, start.id, handle);
  }

  /** The same object for an existing conversation, from any process (InvalidRequestError for an id that is not valid). */
  static async attach(client: Client, id: string): Promise<Conversation> {
    checkConversationId(id);
    const handle = client.workflow.getHandle(id);
    let described: Awaited<ReturnType<WorkflowHandle['describe']>>;
    try {
      described = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(id);
      // The memo (the workspace) is encrypted too: without the key, describe() cannot decode it.
      const raw = await client.workflowService
        .describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId: id } })
        .catch(() => undefined);
      const memo = Object.values(raw?.workflowExecutionInfo?.memo?.fields ?? {})[0];
      throw explainUnreadable(err, memo as Parameters<typeof explainUnreadable>[1]);
    }
    // Encrypted conversations: a process without the right key stops here with a clear error,
    // before it sends a query, signal or update that the worker (or this process) could not read.
    await described.staticSummary().catch((err: unknown) => {
      throw explainUnreadable(err, described.raw.executionConfig?.userMetadata?.summary);
    });
    return new Conversation(client, id, handle);
  }

  /**
   * Adds a user message (checked first: InvalidRequestError when empty or too long) and answers with
   * its event index. While running, it is read before the next model call; otherwise it waits for run.
   * `{ text, images }` sends images with it (file paths, or bytes with a MIME type: PNG, JPEG, GIF or
   * WebP, at most 5 MB each and 10 a message): their bytes go to the object store first, and the
   * conversation keeps only their references (hash, type, size).
   */
  async sendMessage(message: string | { text: string; images?: ImageInput[] }): Promise<number> {
    const { text, images } = typeof message === 'string' ? { text: message, images: undefined } : message;
    checkMessage(text);
    const refs = await storeImages(clientStoreSettings(), images);
    await this.afterRunStarts();
    const args: [string] | [string, ImageRef[]] = refs.length ? [text, refs] : [text];
    const { index } = await this.update(() => this.handle.executeUpdate(addMessageUpdate, { args }));
    return index;
  }

  /** Sets the conversation running without waiting; answers with the run number. */
  async resume(): Promise<{ runNumber: number; status: string }> {
    await this.afterRunStarts();
    return this.update(() => this.handle.executeUpdate(runUpdate));
  }

  /**
   * Runs (or resumes) and resolves when the run stops, with its status (finished, paused, error,
   * stuck, waiting_for_confirmation) and why (`reason`: the last error, who paused it; null for a
   * finish); the rest is in `state()`. The run is under way before any later call on this object
   * reaches the workflow: `conversation.run(); await conversation.state()` reads `running`.
   */
  async run(options: { pollMs?: number } = {}): Promise<RunResult> {
    const starting = this.update(() => this.handle.executeUpdate(runUpdate));
    this.runStarting = starting.catch(() => undefined);
    const { runNumber } = await starting;
    const s = await this.waitUntilStopped({ afterRun: runNumber, ...(options.pollMs ? { pollMs: options.pollMs } : {}) });
    const pauseReason = s.status === 'paused' ? lastPauseReason(await this.events(Math.max(0, s.events - 50))) : undefined;
    return {
      status: s.status,
      reason: stopReason(s, pauseReason),
      ...(s.status === 'finished' && s.output !== undefined ? { output: s.output } : {}),
    };
  }

  /** The run update of the latest `run()` while it is on its way: later calls go after it, in order. */
  private runStarting: Promise<unknown> | undefined;

  /** Waits until the latest `run()` has set the conversation running (at once when none is on its way). */
  private async afterRunStarts(): Promise<void> {
    if (this.runStarting) await this.runStarting;
  }

  /**
   * Resolves with the state once the conversation is not running (or, with `afterRun`, once a later
   * run has begun). It waits on the conversation's change notices (see waitUntil), never writing
   * its history.
   */
  async waitUntilStopped(options: { afterRun?: number; pollMs?: number; timeoutMs?: number } = {}): Promise<ConversationState> {
    const { afterRun } = options;
    const done = (s: ConversationState) => s.status !== 'running' || (afterRun !== undefined && s.runNumber > afterRun);
    // The notices say the status: the state is asked again only once one says the run stopped.
    return this.waitState(done, options.timeoutMs ?? Infinity, (s) => stopped(s.events, afterRun), 'stops');
  }

  /**
   * Pause now. With `now`, the running command is interrupted too. A signal: it reaches the
   * conversation even while no worker runs, and resolves once the server has it. With `wait`, it
   * resolves once the conversation has handled it, with the status after it (`paused`; a
   * conversation that was not running, idle or finished, stays as it was): one round trip instead
   * of a signal and then queries, and a worker must answer. A worker of a build before the answer
   * gets the signal, and the state is read until the pause shows.
   */
  async pause(request?: PauseRequest & { wait?: false }): Promise<void>;
  async pause(request: PauseRequest & { wait: true }): Promise<{ status: ConversationStatus }>;
  async pause(request: PauseRequest & { wait?: boolean } = {}): Promise<{ status: ConversationStatus } | void> {
    await this.afterRunStarts();
    const { wait, ...pauseRequest } = request;
    if (!wait) {
      await this.handle.signal(pauseSignal, pauseRequest).catch((err: unknown) => this.rethrow(err));
      return;
    }
    try {
      const { status } = await this.handle.executeUpdate(pauseUpdate, { args: [pauseRequest] });
      return { status: status as ConversationStatus };
    } catch (err) {
      if (!(err instanceof WorkflowUpdateFailedError && /no registered handler for update/i.test(err.cause?.message ?? ''))) {
        return this.rethrow(err);
      }
    }
    const before = await this.state();
    await this.handle.signal(pauseSignal, pauseRequest).catch((err: unknown) => this.rethrow(err));
    if (!PAUSABLE.includes(before.status)) return { status: before.status };
    return { status: (await this.waitUntil((s) => s.status !== before.status)).status };
  }

  /** Runs the actions waiting for confirmation. */
  async approve(): Promise<number> {
    await this.afterRunStarts();
    return (await this.update(() => this.handle.executeUpdate(approveUpdate))).approved;
  }

  /** Refuses the actions waiting for confirmation; the model sees `reason` and goes on. */
  async reject(reason = ''): Promise<number> {
    await this.afterRunStarts();
    return (await this.update(() => this.handle.executeUpdate(rejectUpdate, { args: [reason] }))).rejected;
  }

  /**
   * Sets when actions wait for approval (`never`, `risky`, `always`) from the model's next reply on;
   * actions already waiting stay waiting. InvalidRequestError for any other value.
   */
  async setConfirmationPolicy(policy: ConfirmationPolicy): Promise<ConfirmationPolicy> {
    return (await this.update(() => this.handle.executeUpdate(setConfirmationPolicyUpdate, { args: [policy] }))).confirmationPolicy;
  }

  /** Ends the conversation workflow cleanly (its history stays readable). */
  async close(): Promise<void> {
    await this.afterRunStarts();
    await this.handle.signal(closeSignal).catch((err: unknown) => this.rethrow(err));
  }

  /**
   * Sends an update and waits for its answer. A refusal by the workflow's validator becomes an
   * InvalidRequestError with the workflow's reason; an ended or missing workflow, a
   * ConversationClosedError or ConversationNotFoundError.
   */
  private async update<Ret>(send: () => Promise<Ret>): Promise<Ret> {
    try {
      return await send();
    } catch (err) {
      return this.rethrow(err);
    }
  }

  /** Throws `err` as one of ours when it says the request was refused or the conversation is gone. */
  private async rethrow(err: unknown): Promise<never> {
    if (err instanceof WorkflowUpdateFailedError) {
      throw new InvalidRequestError(err.cause?.message ?? err.message, { cause: err });
    }
    if (err instanceof WorkflowNotFoundError) {
      // The server says the same for a workflow that has completed and one that never was.
      const ended = await this.handle.describe().then(
        (d) => d.status.name !== 'RUNNING',
        () => false,
      );
      if (ended) throw new ConversationClosedError(this.id, undefined, { cause: err });
      throw new ConversationNotFoundError(this.id, { cause: err });
    }
    throw err;
  }

  /** The current state (status, iterations, metrics, last error, …); `executionStatus` is `status`, as the seed calls it. */
  async state(): Promise<ConversationState & { executionStatus: ConversationState['status'] }> {
    await this.afterRunStarts();
    const s = await this.handle.query(stateQuery);
    return { ...s, executionStatus: s.status };
  }

  /** Cost, tokens and model calls so far. */
  async metrics(): Promise<Metrics> {
    return (await this.state()).metrics;
  }

  /** The event log from `fromIndex` (read in pages, so any length is fine). */
  /** The event log from `fromIndex`; events a rewind left behind carry `rewound: true`. */
  async events(fromIndex = 0): Promise<ConversationEvent[]> {
    const events = await readEvents(this.handle, fromIndex);
    return markRewound(events, rewoundRanges(events));
  }

  /**
   * Rewinds the conversation and its workspace to as they were after step `step` (0: before the
   * first): what runs stops, later steps leave the prompt (still readable), the conversation is
   * paused. The answer names the checkpoint kept of the workspace just before (to undo it).
   */
  async rewind(step: number): Promise<RewindAnswer> {
    return this.handle.executeUpdate(rewindUpdate, { args: [{ to: step }] });
  }

  /** The workspace's checkpoints, one per step (those a rewind left behind are marked `rewound`). */
  async checkpoints(): Promise<CheckpointEntry[]> {
    return this.handle.query(checkpointsQuery);
  }

  /**
   * Waits until the state satisfies `done`, tolerating a worker that is briefly away. It waits for
   * the change notices the worker publishes on the conversation's live stream (nothing is written
   * to the conversation's history), asking the state after each; with no notice it asks again after
   * a delay that grows from 1 s to 10 s (a conversation closed, or run by an older worker). `pollMs`
   * is kept for callers; the notices set the pace.
   */
  async waitUntil(done: (s: ConversationState) => boolean, _pollMs = 100, timeoutMs = Infinity): Promise<ConversationState> {
    return this.waitState(done, timeoutMs, (s) => moreThan(s.events));
  }

  /** waitUntil, asking the state again when a change notice passes `news(state seen)` (or with none, after a while). */
  private async waitState(
    done: (s: ConversationState) => boolean,
    timeoutMs: number,
    news: (s: ConversationState) => NewsTest,
    notices: 'events' | 'stops' = 'events',
  ): Promise<ConversationState> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    let s: ConversationState | undefined;
    // Reading starts at once: the stream is then running (and its worker knows) when news comes.
    const changes = this.watchChanges(notices);
    try {
      for (;;) {
        if (s && done(s)) return s;
        if (Date.now() > deadline) {
          throw new WaitTimeoutError(
            this.id,
            `timed out waiting for conversation ${this.id}${lastError ? `: ${(lastError as Error).message}` : ''}`,
            { cause: lastError },
          );
        }
        if (s) await changes.waiter.wait(news(s), deadline);
        try {
          s = await this.state();
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(this.id);
          lastError = err;
          if (!s) await sleep(FALLBACK_MS); // no state yet: not in a tight loop
        }
      }
    } finally {
      changes.stop();
    }
  }

  /**
   * Yields events as they are recorded, until `until` says stop (checked whenever there is news) or
   * `signal` aborts. With `live: true` it also yields live lines (LiveDelta: the reply as it
   * streams, a command's output as it comes) as they happen, each before the event that records
   * its step; resume a follow with `fromIndex` (the next event's index) and `liveFrom` (the last
   * live line's `offset` + 1).
   *
   * ```ts
   * for await (const item of conversation.follow({ live: true })) {
   *   if ('live' in item) process.stdout.write(item.text);
   *   else console.log(item.kind);
   * }
   * ```
   */
  follow(options?: FollowOptions & { live?: false }): AsyncGenerator<ConversationEvent>;
  follow(options: FollowOptions & { live: true }): AsyncGenerator<ConversationEvent | LiveDelta>;
  follow(options?: FollowOptions): AsyncGenerator<ConversationEvent | LiveDelta>;
  async *follow(options: FollowOptions = {}): AsyncGenerator<ConversationEvent | LiveDelta> {
    const signal = options.signal;
    // News comes as change notices on the live stream (one reader for the lines and the notices);
    // the wait left behind when the follow ends is let go, not left pending.
    const waiter = new ChangeWaiter();
    const waiting = new AbortController();
    const source: FollowSource = {
      events: (from) => this.events(from),
      state: () => this.state(),
      news: async (after) => {
        await waiter.wait(moreThan(after), Infinity, waiting.signal);
        return this.events(after);
      },
    };
    const reader = options.live
      ? new LiveReader(this.client, this.id, options.liveFrom ?? 0, { onChange: waiter.notice })
      : new LiveReader(this.client, this.id, 0, { lines: false, onChange: waiter.notice });
    try {
      if (options.live) {
        yield* followLive(source, reader, options);
        return;
      }
      let next = options.fromIndex ?? 0;
      let batch = await source.events(next);
      for (;;) {
        yield* batch;
        next += batch.length;
        if (signal?.aborted) return;
        if (options.until) {
          const s = await this.state();
          if (options.until(s) && s.events <= next) return;
        }
        const stop = abortedWith(signal, [] as ConversationEvent[]);
        try {
          batch = await Promise.race([source.news(next), stop.promise]);
        } finally {
          stop.cancel();
        }
        if (signal?.aborted) return;
      }
    } finally {
      waiting.abort();
      reader.stop();
    }
  }

  /** Starts reading the conversation's change notices (for one wait; `stop()` when done); `news`: see LiveReaderOptions. */
  private watchChanges(news: 'events' | 'stops'): ChangeWatch {
    const waiter = new ChangeWaiter();
    const reader = new LiveReader(this.client, this.id, 0, { lines: false, onChange: waiter.notice, news });
    return { waiter, stop: () => reader.stop() };
  }

  /** Whether the workflow itself has completed (closed or idle timeout). */
  async isClosed(): Promise<boolean> {
    const d = await this.handle.describe();
    return d.status.name !== 'RUNNING';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A promise that resolves with `value` when `signal` aborts (never without one); `cancel` lets go of the signal. */
function abortedWith<T>(signal: AbortSignal | undefined, value: T): { promise: Promise<T>; cancel(): void } {
  let cancel = () => undefined as void;
  const promise = new Promise<T>((resolve) => {
    if (!signal) return;
    if (signal.aborted) return resolve(value);
    const onAbort = () => resolve(value);
    signal.addEventListener('abort', onAbort, { once: true });
    cancel = () => signal.removeEventListener('abort', onAbort);
  });
  return { promise, cancel };
}

/** A reader of change notices and the waiter it feeds. */
interface ChangeWatch {
  waiter: ChangeWaiter;
  stop(): void;
}

/** What `Conversation.follow` takes. */
export interface FollowOptions {
  /** The first event's index (default 0). */
  fromIndex?: number;
  /** Kept for callers: change notices set the pace now (with a fallback of 1 s growing to 10 s). */
  pollMs?: number;
  /** Stop once this holds and every event has been yielded (checked whenever there is news). */
  until?: (s: ConversationState) => boolean;
  /** Also yield live lines (LiveDelta) as they happen. */
  live?: boolean;
  /** The first live line's offset (resume after line `o` with `o + 1`; default: the oldest kept). */
  liveFrom?: number;
  /** Ends the follow (the generator returns). */
  signal?: AbortSignal;
}
