// Starting a conversation as `faheem start` does. The CLI and the console's "New conversation" form
// share this one path, so a conversation started from either has the same agent and limits.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { Agent, Conversation, LLM, type ImageInput } from '../client/client.js';
import { UsageError } from '../core/errors.js';
import type { HooksConfig } from '../hooks/config.js';
import type { ConfirmationPolicy, McpServersSpec } from '../core/types.js';

/** What `faheem start` (and the console's form) asks for. */
export interface StartRequest {
  /** The first user message. */
  message: string;
  /** Images sent with it (file paths, or bytes with a MIME type): stored before the start. */
  images?: ImageInput[];
  /** The agent's working directory on the workspace host (not with `pool`). */
  workspace?: string;
  /** A pool of hosts whose workspace this conversation gets, instead of a folder on one host. */
  pool?: string;
  /** With `pool`: a folder whose files the workspace starts from (uploaded now). */
  workspaceFrom?: string;
  /** The conversation id (default: generated). */
  id?: string;
  /** e.g. `openai/gpt-4o` (default: the worker's LLM_MODEL). */
  model?: string;
  /** Models to move to, in order, when the one before is unavailable (`--fallback`). */
  fallbacks?: string[];
  reasoningEffort?: 'low' | 'medium' | 'high';
  confirm: ConfirmationPolicy;
  maxIterations: number;
  /** Pause a run once it has cost this much (USD). */
  budget?: number;
  /** Reject actions nobody approved within this many seconds. */
  confirmTimeoutSeconds?: number;
  mcpServers?: McpServersSpec;
  hooks?: HooksConfig;
  /** false: no checkpoint of the workspace per step. */
  checkpoints?: boolean;
  /** Give the agent the delegate tool. */
  delegate?: boolean;
  /** The team API's tenant it belongs to (search attribute and fairness key; see CreateOptions.tenant). */
  tenant?: string;
  /** Where its stops are posted (the secret is kept by the team API, never in history). */
  webhook?: { url: string };
  /** A JSON Schema the final answer must match (see CreateOptions.outputSchema). */
  outputSchema?: Record<string, unknown>;
}

/**
 * Starts a conversation with the built-in tools and whatever tools the workspace host's worker was
 * given, running at once on its first message. A taken id is a UsageError that says so.
 */
export async function startConversation(client: Client, r: StartRequest): Promise<Conversation> {
  const agent = new Agent({
    llm: new LLM({
      usageId: 'agent',
      ...(r.model ? { model: r.model } : {}),
      ...(r.fallbacks?.length ? { fallbacks: r.fallbacks } : {}),
      ...(r.reasoningEffort ? { reasoningEffort: r.reasoningEffort } : {}),
    }),
    tools: ['terminal', 'file_editor', 'task_tracker', 'wait', ...(r.delegate ? ['delegate'] : [])],
    hostTools: true,
  });
  return Conversation.create(client, {
    agent,
    ...(r.pool === undefined ? { workspace: r.workspace } : { pool: r.pool }),
    ...(r.workspaceFrom !== undefined ? { workspaceFrom: r.workspaceFrom } : {}),
    ...(r.id ? { id: r.id } : {}),
    firstMessage: r.message,
    ...(r.images?.length ? { images: r.images } : {}),
    run: true,
    maxIterations: r.maxIterations,
    confirmationPolicy: r.confirm,
    ...(r.budget !== undefined ? { maxBudgetPerRunUsd: r.budget } : {}),
    ...(r.confirmTimeoutSeconds !== undefined ? { confirmationTimeoutMs: r.confirmTimeoutSeconds * 1000 } : {}),
    ...(r.mcpServers ? { mcpServers: r.mcpServers } : {}),
    ...(r.hooks ? { hooks: r.hooks } : {}),
    ...(r.checkpoints === false ? { checkpoints: false } : {}),
    ...(r.tenant !== undefined ? { tenant: r.tenant } : {}),
    ...(r.webhook !== undefined ? { webhook: r.webhook } : {}),
    ...(r.outputSchema !== undefined ? { outputSchema: r.outputSchema } : {}),
  }).catch((err: unknown) => {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new UsageError(`a conversation with id "${r.id}" already exists`);
    throw err;
  });
}
