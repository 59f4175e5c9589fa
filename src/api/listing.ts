// A tenant's conversations through Temporal's visibility: the page a list answers, and how many are
// unfinished (for the tenant's maxRunning). Every query names the tenant, so no other tenant's row
// is ever read.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { ConversationStatus } from '../core/types.js';
import { ConversationStatusKey } from '../conversation/workflow/messages.js';
import { ApiProblem } from './problems.js';
import { owned, statusOf, type Caller, type ConversationsContext } from './conversations.js';

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The visibility query of a tenant's conversations (sub-agents included), optionally of one status. */
export function tenantQuery(tenant: string, status?: ConversationStatus): string {
  return `WorkflowType = 'conversation' AND FaheemTenant = ${quote(tenant)}${status ? ` AND ConversationStatus = ${quote(status)}` : ''}`;
}

/** Statuses of a conversation whose run is over: it waits for nobody until a new message. */
const DONE_STATUSES = ['finished', 'error', 'stuck'];
const DONE = DONE_STATUSES.map(quote).join(', ');

/**
 * How many of the tenant's conversations are unfinished (open, and running, paused, idle or waiting
 * for approval), counting those this process started lately that visibility may not list yet.
 * Reads at most `cap` ids.
 */
export async function runningOf(client: Client, tenant: string, cap: number, recent: string[]): Promise<number> {
  const ids = new Set<string>();
  for await (const wf of client.workflow.list({
    query: `${tenantQuery(tenant)} AND ExecutionStatus = 'Running' AND ConversationStatus NOT IN (${DONE})`,
    pageSize: Math.min(cap, 1000),
  })) {
    ids.add(wf.workflowId);
    if (ids.size >= cap) break;
  }
  // Visibility may not list a conversation started a moment ago: ask those directly (describe reads
  // the workflow's own record), counting each that is open and not done.
  const unseen = recent.filter((id) => !ids.has(id));
  const described = await Promise.all(
    unseen.map((id) =>
      client.workflow
        .getHandle(id)
        .describe()
        .then(
          (d) => d.status.name === 'RUNNING' && !DONE_STATUSES.includes(String(d.typedSearchAttributes.get(ConversationStatusKey))),
          () => false,
        ),
    ),
  );
  for (const [i, open] of described.entries()) if (open) ids.add(unseen[i]!);
  return ids.size;
}

/** One page of the caller's conversations, newest first, each as its status object. */
export async function listTenantConversations(
  ctx: ConversationsContext,
  caller: Caller,
  q: { status?: ConversationStatus; limit: number; cursor?: string },
  cursors: Cursors,
): Promise<{ data: Record<string, unknown>[]; next_cursor: string | null }> {
  const token = q.cursor ? cursors.open(caller.tenant, q.status, q.cursor) : Buffer.alloc(0);
  let response;
  try {
    response = await ctx.client.workflowService.listWorkflowExecutions({
      namespace: ctx.client.options.namespace,
      query: tenantQuery(caller.tenant, q.status),
      pageSize: q.limit,
      nextPageToken: token,
    });
  } catch (err) {
    // A token Temporal cannot read is the caller's mistake, not the server's.
    if (q.cursor && (err as { code?: number }).code === 3) throw new ApiProblem('bad_request', 'cursor: not one this API gave');
    throw err;
  }
  const ids = response.executions.map((e) => e.execution?.workflowId ?? '').filter(Boolean);
  const data = await Promise.all(
    ids.map(async (id) => {
      try {
        return await statusOf(ctx, caller, await owned(ctx, caller, id));
      } catch {
        return { id, status: 'unknown', tenant: caller.tenant, workspace: null, closed: true };
      }
    }),
  );
  const next =
    response.nextPageToken && response.nextPageToken.length > 0
      ? cursors.seal(caller.tenant, q.status, Buffer.from(response.nextPageToken))
      : null;
  return { data, next_cursor: next };
}

/**
 * Page cursors, sealed: Temporal's page token with an HMAC over the tenant, the status filter and
 * the token, so a cursor is only ever one this API gave for this tenant's same list. Anything else
 * is refused with 400 before it reaches Temporal (whose answer to a forged token can be slow or a
 * server error).
 */
export class Cursors {
  constructor(private readonly key: Uint8Array) {}

  private mac(tenant: string, status: string | undefined, token: Buffer): Buffer {
    return createHmac('sha256', this.key)
      .update(`${tenant}\n${status ?? ''}\n`)
      .update(token)
      .digest()
      .subarray(0, 16);
  }

  /** The cursor a caller gets for Temporal's `token`. */
  seal(tenant: string, status: string | undefined, token: Buffer): string {
    return `${token.toString('base64url')}.${this.mac(tenant, status, token).toString('base64url')}`;
  }

  /** Temporal's token in a cursor this API sealed for the same tenant and filter; 400 otherwise. */
  open(tenant: string, status: string | undefined, cursor: string): Buffer {
    const m = /^([A-Za-z0-9_-]{1,4000})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
    const refused = () => new ApiProblem('bad_request', 'cursor: not one this API gave for this list (list again from the start)');
    if (!m) throw refused();
    const token = Buffer.from(m[1]!, 'base64url');
    const mac = Buffer.from(m[2]!, 'base64url');
    const want = this.mac(tenant, status, token);
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) throw refused();
    return token;
  }
}
