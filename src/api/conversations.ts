// What the team API does with conversations, for one caller: every read and change goes through the
// tenant check here (another tenant's conversation is "not found", never "forbidden", so its
// existence is not revealed), and a caller's workspace is a name under its tenant's own folder.
import { mkdir, lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { Conversation } from '../client/client.js';
import { stateJson } from '../cli/format.js';
import { CONVERSATION_ID_PATTERN } from '../conversation/conversation-id.js';
import { ConversationClosedError, ConversationNotFoundError, FaheemError, InvalidRequestError, UsageError } from '../core/errors.js';
import { startConversation } from '../conversation/start-conversation.js';
import type { Actor } from '../client/tenants.js';
import { actorProblem } from '../client/actors.js';
import type { ConversationEvent, ConversationState } from '../core/types.js';
import { ConversationModelKey, ConversationStatusKey, TenantKey } from '../conversation/workflow/messages.js';
import type { Scope } from './keys.js';
import { ApiProblem } from './problems.js';

/** Who is calling: the key's tenant, id (and name) and scope. */
export interface Caller {
  tenant: string;
  keyId: string;
  keyName?: string;
  scope: Scope;
}

/** The actor events record for a caller: the key's name when it has one, else its id (never the key). */
export function actorOf(caller: Caller): Actor {
  const named = { tenant: caller.tenant, key: caller.keyName ?? caller.keyId };
  // A name a person wrote into the keys file that events cannot carry: the key's id instead.
  return actorProblem(named) === undefined ? named : { tenant: caller.tenant, key: caller.keyId };
}

// One folder name: no separators, no `..`, not hidden.
const WORKSPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The host folder of a caller's workspace name: `<root>/<tenant>/<name>`. Absolute paths, `..`,
 * separators and hidden names are refused (400): a caller never names a host path.
 */
export function workspaceFolder(root: string, tenant: string, name: string): string {
  if (path.isAbsolute(name) || name.includes('/') || name.includes('\\'))
    throw new ApiProblem('bad_request', 'workspace is a name under your tenant\'s folder, not a path: no "/" and no absolute paths');
  if (!WORKSPACE_NAME.test(name) || name.includes('..'))
    throw new ApiProblem(
      'bad_request',
      "workspace: 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit, never '..'",
    );
  return path.join(root, tenant, name);
}

/** The workspace name a status shows for a host folder under the tenant's root (the folder's name; never the host path). */
export function workspaceName(root: string, tenant: string, folder: string): string | null {
  const base = path.join(root, tenant) + path.sep;
  return folder.startsWith(base) && !folder.slice(base.length).includes(path.sep) ? folder.slice(base.length) : null;
}

/**
 * Makes the workspace folder, refusing one that is (or whose tenant folder is) a symbolic link or
 * that resolves outside the root: a folder an agent could have made a link of is never followed.
 */
export async function prepareWorkspace(root: string, tenant: string, folder: string): Promise<void> {
  const tenantDir = path.join(root, tenant);
  await mkdir(tenantDir, { recursive: true, mode: 0o700 });
  await mkdir(folder, { recursive: true, mode: 0o700 });
  for (const p of [tenantDir, folder]) {
    const info = await lstat(p);
    if (info.isSymbolicLink() || !info.isDirectory()) throw new ApiProblem('bad_request', 'workspace: not a folder');
  }
  const real = await realpath(folder);
  const realRoot = await realpath(root);
  if (!real.startsWith(realRoot + path.sep)) throw new ApiProblem('bad_request', 'workspace: not a folder');
}

const OWN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The conversation id a caller's own `id` becomes: `<tenant>:<id>`, so tenants never collide or learn each other's ids. */
export function tenantConversationId(tenant: string, id: string): string {
  if (id.includes(':')) throw new ApiProblem('bad_request', 'id: no ":" (the API puts your tenant before it)');
  const full = `${tenant}:${id}`;
  if (!OWN_ID.test(id) || !CONVERSATION_ID_PATTERN.test(full) || id.includes('..'))
    throw new ApiProblem('bad_request', "id: up to 100 letters, digits, '.', '_' and '-', starting with a letter or digit, never '..'");
  return full;
}

/** What the API needs to act for callers. */
export interface ConversationsContext {
  client: Client;
  /** `--workspaces`: callers' workspaces are `<this>/<tenant>/<name>`. */
  workspacesDir: string;
}

/** A conversation of the caller's tenant: its description and a handle; 404 for anything else. */
export interface Owned {
  conversation: Conversation;
  description: WorkflowExecutionDescription;
}

/** The caller's conversation `id`, or 404 (unknown, malformed, or another tenant's: the same answer). */
export async function owned(ctx: ConversationsContext, caller: Caller, id: string): Promise<Owned> {
  const notFound = () => new ApiProblem('not_found', `no conversation ${JSON.stringify(id.slice(0, 140))}`);
  if (!CONVERSATION_ID_PATTERN.test(id) || id.includes('..')) throw notFound();
  let description: WorkflowExecutionDescription;
  try {
    description = await ctx.client.workflow.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw notFound();
    throw err;
  }
  if (description.type !== 'conversation' || description.typedSearchAttributes.get(TenantKey) !== caller.tenant) throw notFound();
  try {
    return { conversation: await Conversation.attach(ctx.client, id), description };
  } catch (err) {
    if (err instanceof ConversationNotFoundError) throw notFound();
    throw err;
  }
}

/** How long a state query may take before the status answers from what Temporal last recorded. */
const STATE_QUERY_MS = 10_000;

/**
 * The status object (`faheem status --json`) as the caller sees it: the workspace as its name, the
 * tenant; with no worker answering in time, what visibility last recorded (`lastKnown: true`).
 */
export async function statusOf(ctx: ConversationsContext, caller: Caller, o: Owned): Promise<Record<string, unknown>> {
  let state: ConversationState | undefined;
  try {
    state = await ctx.client.withDeadline(Date.now() + STATE_QUERY_MS, () => o.conversation.state());
  } catch {
    state = undefined;
  }
  const workspaceOf = (folder: string | undefined) => (folder ? workspaceName(ctx.workspacesDir, caller.tenant, folder) : null);
  if (!state) {
    const d = o.description;
    return {
      id: o.conversation.id,
      status: String(d.typedSearchAttributes.get(ConversationStatusKey) ?? 'unknown'),
      lastKnown: true,
      closed: d.status.name !== 'RUNNING',
      model: String(d.typedSearchAttributes.get(ConversationModelKey) ?? 'default'),
      tenant: caller.tenant,
      workspace: workspaceOf((d.memo as { workspace?: string } | undefined)?.workspace),
      startTime: d.startTime.toISOString(),
    };
  }
  const json = stateJson(state);
  return { ...json, tenant: caller.tenant, workspace: workspaceOf(state.workspace) };
}

/** Events as the API answers them: the workspace's host path is not shown to callers. */
export function apiEvent(e: ConversationEvent): ConversationEvent {
  return e;
}

/** Runs an SDK call for the API: a conversation's refusal is 409, a bad value 400, a vanished one 404. */
export async function act<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw problemOf(err);
  }
}

/** The problem a FaheemError stands for; anything else is left as it is. */
export function problemOf(err: unknown): unknown {
  if (err instanceof ApiProblem) return err;
  if (err instanceof ConversationNotFoundError) return new ApiProblem('not_found', `no conversation ${JSON.stringify(err.id)}`);
  if (err instanceof ConversationClosedError) return new ApiProblem('conflict', err.message);
  if (err instanceof InvalidRequestError) return new ApiProblem('conflict', err.message);
  if (err instanceof UsageError) return new ApiProblem('bad_request', err.message);
  if (err instanceof FaheemError && err.code === 'no_worker') return new ApiProblem('unavailable', err.message);
  return err;
}

export { startConversation };
