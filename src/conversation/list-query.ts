// The visibility query that lists conversations (the CLI's `list`, the console's list, the team
// API's): pure, so every list filters the same way.
import { checkTenant } from '../client/tenants.js';
import type { ConversationStatus } from '../core/types.js';

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** What a list of conversations may be narrowed to. */
export interface ListFilter {
  status?: ConversationStatus;
  /** Only the sub-agents of this conversation. */
  parentId?: string;
  /** Only this tenant's conversations (checked with checkTenant: an InvalidRequestError for a name that is not one). */
  tenant?: string;
}

/** The visibility query for conversations, optionally of one status, one parent's sub-agents, one tenant. */
export function listQueryText(options: ListFilter): string {
  let q = `WorkflowType = 'conversation'`;
  if (options.status) q += ` AND ConversationStatus = ${quote(options.status)}`;
  if (options.parentId) q += ` AND ParentWorkflowId = ${quote(options.parentId)}`;
  if (options.tenant !== undefined) q += ` AND FaheemTenant = ${quote(checkTenant(options.tenant))}`;
  return q;
}

/**
 * The order clause for newest first. A visibility store that cannot order (the dev server's SQLite)
 * refuses it (isOrderRefused); its own order puts open conversations first, then closed ones by
 * close time, so a list that must be newest first then sorts what it read (newestFirst).
 */
export const NEWEST_FIRST = 'ORDER BY StartTime DESC';

/** Whether a list failed because the server's visibility store cannot take an ORDER BY clause. */
export function isOrderRefused(err: unknown): boolean {
  // The SDK wraps the server's answer ("Failed to list workflows"), the reason in its cause.
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const message = e instanceof Error ? e.message : String(e);
    if (/ORDER BY/i.test(message) && /not supported|invalid query/i.test(message)) return true;
  }
  return false;
}

/** Rows by start time, newest first; the same start time by id, so the order is always the same. */
export function newestFirst<T extends { id: string; startTime: string }>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => (a.startTime === b.startTime ? a.id.localeCompare(b.id) : a.startTime < b.startTime ? 1 : -1));
}
