// Starting a conversation for an API caller: the one path POST /v1/conversations and
// POST /v1/responses share, so both keep the same rules: a model the operator allows, the
// tenant's maxRunning, a workspace under the tenant's own folder, the webhook's secret kept apart,
// and the change recorded as the caller's.
import { checkOutputSchema } from '../models/structured-output.js';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Conversation } from '../client/client.js';
import { randomUUID } from 'node:crypto';
import { actingAs } from '../client/acting.js';
import { UsageError } from '../core/errors.js';
import {
  act,
  actorOf,
  prepareWorkspace,
  startConversation,
  tenantConversationId,
  workspaceFolder,
  type Caller,
  type ConversationsContext,
} from './conversations.js';
import { limitsOf, type KeyRing } from './keys.js';
import type { KeyedLanes } from '../core/keyed-lanes.js';
import type { RecentStarts } from './limits.js';
import { runningOf } from './listing.js';
import { ApiProblem } from './problems.js';
import { splitChain } from '../models/workflow/model-chain.js';

/** What starting a conversation for a caller needs. */
export interface StartDeps {
  ctx: ConversationsContext;
  keys: KeyRing;
  /** Conversations this process started lately (visibility may not list them yet). */
  recent: RecentStarts;
  /** Models a caller may name (besides none: the worker's). */
  allowedModels: readonly string[];
  /** One start at a time per tenant. */
  lanes: KeyedLanes;
  /** Checks a webhook and keeps its secret under the conversation's id (ApiOptions.prepareWebhook). */
  prepareWebhook?: (id: string, webhook: { url: string; secret: string }) => Promise<{ url: string }>;
}

/** What a caller asks for (the body of POST /v1/conversations). */
export interface CallerStart {
  message: string;
  workspace?: string;
  /** A model the operator allows; undefined: the worker's. */
  model?: string;
  /** Models to move to when the one before is unavailable; each one the operator allows. */
  fallbacks?: string[];
  /** The caller's own id (the conversation id becomes `<tenant>:<id>`). */
  id?: string;
  confirm?: 'never' | 'risky' | 'always';
  maxIterations?: number;
  outputSchema?: Record<string, unknown>;
  pool?: string;
  webhook?: { url: string; secret: string };
}

/**
 * Starts a conversation for `caller`, running at once on its first message. 400 for a model the
 * operator does not allow or a webhook it cannot deliver, 429 (Retry-After) past the tenant's
 * maxRunning, 409 for a taken id.
 */
export async function startForCaller(deps: StartDeps, caller: Caller, body: CallerStart): Promise<Conversation> {
  if (body.model !== undefined && !modelAllowed(deps.allowedModels, body.model))
    throw new ApiProblem('bad_request', `model ${JSON.stringify(body.model)} is not one the operator allows`);
  // Every model of the chain is one the operator allows: a fallback is a model like any other.
  const refused = (body.fallbacks ?? []).find((m) => !modelAllowed(deps.allowedModels, m));
  if (refused !== undefined) throw new ApiProblem('bad_request', `fallback ${JSON.stringify(refused)} is not a model the operator allows`);
  if (body.webhook && !deps.prepareWebhook) throw new ApiProblem('bad_request', 'this API does not deliver webhooks');
  if (body.outputSchema !== undefined) {
    try {
      checkOutputSchema(body.outputSchema);
    } catch (err) {
      throw new ApiProblem('bad_request', `outputSchema: ${(err as Error).message}`);
    }
  }
  // The id is chosen here, not by the SDK: a webhook's secret is kept under it before the start.
  const id = body.id !== undefined ? tenantConversationId(caller.tenant, body.id) : `conv-${randomUUID().slice(0, 13)}`;
  // One start at a time per tenant: the count and the start that follows it are not raced.
  return deps.lanes.run(caller.tenant, () => startCounted(deps, caller, body, id));
}

async function startCounted(deps: StartDeps, caller: Caller, body: CallerStart, id: string): Promise<Conversation> {
  const { ctx } = deps;
  const limits = limitsOf(await deps.keys.current(), caller.tenant);
  const running = await runningOf(ctx.client, caller.tenant, limits.maxRunning + 1, deps.recent.of(caller.tenant));
  if (running >= limits.maxRunning)
    throw new ApiProblem('too_many_requests', `your tenant has ${running} unfinished conversations (at most ${limits.maxRunning})`, {
      'Retry-After': '30',
    });
  // A taken id is refused before anything is kept under it (a webhook's secret of the one running).
  if (await exists(ctx, id)) throw new ApiProblem('conflict', `a conversation with id "${id}" already exists`);
  const conversation = await actingAs(actorOf(caller), async () => {
    const workspace = body.pool === undefined ? await workspaceFor(ctx, caller, body.workspace ?? body.id ?? id) : undefined;
    const webhook = body.webhook
      ? await deps.prepareWebhook!(id, body.webhook).catch((err: unknown) => {
          throw new ApiProblem('bad_request', `webhook: ${(err as Error).message}`);
        })
      : undefined;
    return act(() =>
      startConversation(ctx.client, {
        message: body.message,
        ...(workspace !== undefined ? { workspace } : {}),
        ...(body.pool !== undefined ? { pool: body.pool } : {}),
        id,
        ...(body.model !== undefined ? { model: body.model } : {}),
        ...(body.fallbacks?.length ? { fallbacks: body.fallbacks } : {}),
        confirm: body.confirm ?? 'never',
        maxIterations: body.maxIterations ?? 50,
        ...(body.outputSchema !== undefined ? { outputSchema: body.outputSchema } : {}),
        tenant: caller.tenant,
        ...(webhook ? { webhook } : {}),
      }).catch((err: unknown) => {
        // The one refusal of a start that is the conversation's state, not the request's shape.
        if (err instanceof UsageError && /already exists/.test(err.message)) throw new ApiProblem('conflict', err.message);
        throw err;
      }),
    );
  });
  deps.recent.add(caller.tenant, conversation.id);
  return conversation;
}

/**
 * Whether the operator allows `model`: named as given to `--allow-model`, or a chain
 * (`a,b`) each of whose models is allowed (an allowed chain allows each of its models).
 */
export function modelAllowed(allowed: readonly string[], model: string): boolean {
  if (allowed.includes(model)) return true;
  const each = new Set(allowed.flatMap((m) => splitChain(m)));
  const chain = splitChain(model);
  return chain.length > 0 && chain.every((m) => each.has(m));
}

/** Whether a workflow with this id exists (running or closed). */
async function exists(ctx: ConversationsContext, id: string): Promise<boolean> {
  try {
    await ctx.client.workflow.getHandle(id).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** The host folder for a new conversation's workspace: the name given, else the caller's own id, else the conversation id. */
async function workspaceFor(ctx: ConversationsContext, caller: Caller, name: string): Promise<string> {
  const folder = workspaceFolder(ctx.workspacesDir, caller.tenant, name);
  await prepareWorkspace(ctx.workspacesDir, caller.tenant, folder);
  return folder;
}
