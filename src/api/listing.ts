// A tenant's conversations through Temporal's visibility: the page a list answers, and how many are
// unfinished (for the tenant's maxRunning). Every query names the tenant, so no other tenant's row
// is ever read.
import type { Client } from '@temporalio/client';
import type { ConversationStatus } from '../types.js';
import { ApiProblem } from './problems.js';
import { owned, statusOf, type Caller, type ConversationsContext } from './conversations.js';

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The visibility query of a tenant's conversations (sub-agents included), optionally of one status. */
export function tenantQuery(tenant: string, status?: ConversationStatus): string {
  return `WorkflowType = 'conversation' AND FaheemTenant = ${quote(tenant)}${status ? ` AND ConversationStatus = ${quote(status)}` : ''}`;
}

/**
 * How many of the tenant's conversations are unfinished (their workflow runs), counting those this
 * process started lately that visibility may not list yet. Reads at most `cap` ids.
 */
export async function runningOf(client: Client, tenant: string, cap: number, recent: string[]): Promise<number> {
  const ids = new Set<string>();
  for await (const wf of client.workflow.list({
    query: `${tenantQuery(tenant)} AND ExecutionStatus = 'Running'`,
    pageSize: Math.min(cap, 1000),
  })) {
    ids.add(wf.workflowId);
    if (ids.size >= cap) break;
  }
  for (const id of recent) ids.add(id);
  return ids.size;
}

/** One page of the caller's conversations, newest first, each as its status object. */
export async function listTenantConversations(
  ctx: ConversationsContext,
  caller: Caller,
  q: { status?: ConversationStatus; limit: number; cursor?: string },
): Promise<{ data: Record<string, unknown>[]; next_cursor: string | null }> {
  let token: Buffer;
  try {
    token = q.cursor ? Buffer.from(q.cursor, 'base64url') : Buffer.alloc(0);
  } catch {
    throw new ApiProblem('bad_request', 'cursor: not one this API gave');
  }
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
    response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64url') : null;
  return { data, next_cursor: next };
}
