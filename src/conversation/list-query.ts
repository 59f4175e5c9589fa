// The visibility query that lists conversations (the CLI's `list`, the console's list, the team
// API's): pure, so every list filters the same way.
import { checkTenant } from '../tenants.js';
import type { ConversationStatus } from '../types.js';

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
