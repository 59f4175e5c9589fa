// What the console reads from Temporal: conversations listed a page at a time through visibility
// (one request per page, however many there are), their sub-agents, and each one's cost.
import type { Client } from '@temporalio/client';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';
import type { temporal } from '@temporalio/proto';
import { Conversation } from '../client.js';
import { ConversationModelKey, ConversationStatusKey } from '../workflows/messages.js';
import type { ConversationStatus } from '../types.js';
import type { ChildNode, ConversationPage, ConversationRow } from './rows.js';

export type { ChildNode, ConversationPage, ConversationRow } from './rows.js';

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The visibility query for conversations, optionally of one status or of one parent's sub-agents. */
export function listQueryText(options: { status?: ConversationStatus; parentId?: string }): string {
  let q = `WorkflowType = 'conversation'`;
  if (options.status) q += ` AND ConversationStatus = ${quote(options.status)}`;
  if (options.parentId) q += ` AND ParentWorkflowId = ${quote(options.parentId)}`;
  return q;
}

const toIso = (t: temporal.api.workflow.v1.IWorkflowExecutionInfo['startTime']): string | undefined => {
  if (!t?.seconds) return undefined;
  const ms = Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
  return new Date(ms).toISOString();
};

/**
 * Cost comes from the conversation's state (a query, answered by a worker); visibility does not hold
 * it. Asked in the background for the rows a page shows, at most a few at a time, and kept until the
 * workflow's history grows, so a closed conversation is asked once and an idle one not again.
 */
export class CostCache {
  private readonly known = new Map<string, { version: string; cost: number }>();
  private readonly asking = new Set<string>();
  private queue: { id: string; version: string }[] = [];
  private active = 0;

  constructor(
    private readonly client: Client,
    private readonly concurrency = 4,
    private readonly timeoutMs = 3_000,
  ) {}

  /** The cost known for this version of the workflow (or the last one known), asking for it when stale. */
  get(id: string, version: string): number | null {
    const k = this.known.get(id);
    if (k?.version !== version && !this.asking.has(id)) {
      this.asking.add(id);
      this.queue.push({ id, version });
      this.pump();
    }
    return k?.cost ?? null;
  }

  /** Records a cost seen elsewhere (a conversation's detail). */
  set(id: string, version: string, cost: number): void {
    this.known.set(id, { version, cost });
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0) {
      const next = this.queue.shift()!;
      this.active++;
      void this.ask(next.id, next.version).finally(() => {
        this.active--;
        this.asking.delete(next.id);
        this.pump();
      });
    }
  }

  private async ask(id: string, version: string): Promise<void> {
    try {
      const handle = this.client.workflow.getHandle(id);
      const state = await this.client.withDeadline(Date.now() + this.timeoutMs, () =>
        handle.query<{ metrics: { accumulatedCost: number } }>('state'),
      );
      this.known.set(id, { version, cost: state.metrics.accumulatedCost });
    } catch {
      // No worker answered (or the query failed): the row shows no cost; asked again next time.
    }
  }
}

/** One page of conversations, newest first: one visibility request. */
export async function listConversations(
  client: Client,
  options: { status?: ConversationStatus; parentId?: string; pageSize: number; pageToken?: string; costs?: CostCache },
): Promise<ConversationPage> {
  const response = await client.workflowService.listWorkflowExecutions({
    namespace: client.options.namespace,
    query: listQueryText(options),
    pageSize: options.pageSize,
    nextPageToken: options.pageToken ? Buffer.from(options.pageToken, 'base64url') : Buffer.alloc(0),
  });
  const conversations = response.executions.map((raw) => rowOf(raw, options.costs));
  const token =
    response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64url') : null;
  return { conversations, nextPageToken: token };
}

function rowOf(raw: temporal.api.workflow.v1.IWorkflowExecutionInfo, costs?: CostCache): ConversationRow {
  const attrs = decodeTypedSearchAttributes(raw.searchAttributes?.indexedFields);
  const status = attrs.get(ConversationStatusKey);
  const model = attrs.get(ConversationModelKey);
  const id = raw.execution?.workflowId ?? '';
  const startTime = toIso(raw.startTime) ?? new Date(0).toISOString();
  const closed = raw.status !== 1; // WORKFLOW_EXECUTION_STATUS_RUNNING
  const version = `${raw.execution?.runId ?? ''}:${String(raw.historyLength ?? '')}`;
  return {
    id,
    status: status === undefined ? null : String(status),
    closed,
    model: model === undefined ? null : String(model),
    cost: costs ? costs.get(id, version) : null,
    startTime,
    lastActivity: toIso(raw.closeTime) ?? toIso(raw.executionTime) ?? startTime,
    parentId: raw.parentExecution?.workflowId ?? null,
  };
}

/**
 * The sub-agent tree under `id`: its child workflows (ParentWorkflowId in visibility), and theirs,
 * `depth` levels down (sub-agents nest at most a few deep).
 */
export async function childTree(client: Client, id: string, depth = 3, costs?: CostCache): Promise<ChildNode[]> {
  if (depth <= 0) return [];
  const page = await listConversations(client, { parentId: id, pageSize: 100, ...(costs ? { costs } : {}) });
  return Promise.all(page.conversations.map(async (row) => ({ ...row, children: await childTree(client, row.id, depth - 1, costs) })));
}

/** Attaches to a conversation (ConversationNotFoundError when there is none). */
export function attach(client: Client, id: string): Promise<Conversation> {
  return Conversation.attach(client, id);
}
