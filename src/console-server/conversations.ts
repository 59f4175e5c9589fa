// What the console reads from Temporal: conversations listed a page at a time through visibility
// (one request per page, however many there are), their sub-agents, and each one's cost.
import type { Client } from '@temporalio/client';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import type { temporal } from '@temporalio/proto';
import { Conversation } from '../client/client.js';
import { ConversationModelKey, ConversationStatusKey, TenantKey } from '../conversation/workflow/messages.js';
import type { ConversationStatus } from '../core/types.js';
import type { ChildNode, ConversationPage, ConversationRow } from './rows.js';
import { listQueryText } from '../conversation/list-query.js';

export type { ChildNode, ConversationPage, ConversationRow } from './rows.js';

export { listQueryText, type ListFilter } from '../conversation/list-query.js';

const toIso = (t: temporal.api.workflow.v1.IWorkflowExecutionInfo['startTime']): string | undefined => {
  if (!t?.seconds) return undefined;
  const ms = Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
  return new Date(ms).toISOString();
};

/** What the list shows from a conversation's state: its cost and the model its calls used. */
export interface StateFacts {
  cost: number;
  /** The model named at start, else the one its last call used (empty before any call). */
  model: string;
}

/**
 * Cost and the model actually used come from the conversation's state (a query, answered by a
 * worker); visibility holds neither (its model attribute says "default" for the worker's model).
 * Asked in the background for the rows a page shows, at most a few at a time, and kept until the
 * workflow's history grows, so a closed conversation is asked once and an idle one not again.
 */
export class StateCache {
  private readonly known = new Map<string, { version: string; facts: StateFacts }>();
  private readonly asking = new Set<string>();
  private queue: { id: string; version: string }[] = [];
  private active = 0;

  constructor(
    private readonly client: Client,
    private readonly concurrency = 4,
    private readonly timeoutMs = 3_000,
  ) {}

  /** What is known for this version of the workflow (or the last one known), asking for it when stale. */
  get(id: string, version: string): StateFacts | null {
    const k = this.known.get(id);
    if (k?.version !== version && !this.asking.has(id)) {
      this.asking.add(id);
      this.queue.push({ id, version });
      this.pump();
    }
    return k?.facts ?? null;
  }

  /** Records facts seen elsewhere (a conversation's detail). */
  set(id: string, version: string, facts: StateFacts): void {
    this.known.set(id, { version, facts });
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
        handle.query<{ metrics: { accumulatedCost: number }; model?: string }>('state'),
      );
      this.known.set(id, { version, facts: { cost: state.metrics.accumulatedCost, model: state.model ?? '' } });
    } catch {
      // No worker answered (or the query failed): the row shows no cost; asked again next time.
    }
  }
}

/**
 * Whether a row matches what was typed in the search box: every word appears (case-insensitive)
 * in its title, id or workspace.
 */
export function matchesSearch(row: Pick<ConversationRow, 'id' | 'title' | 'workspace'>, search: string): boolean {
  const haystack = [row.id, row.title ?? '', row.workspace ?? ''].join('\n').toLowerCase();
  return search
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => haystack.includes(word));
}

/** How many rows a search reads through at most per request (visibility cannot match a memo). */
export const SEARCH_SCAN_ROWS = 2_000;

/**
 * One page of conversations, newest first: one visibility request. With `search`, pages are read
 * until `pageSize` rows match (or SEARCH_SCAN_ROWS were read): the answer's token goes on from there.
 */
export async function listConversations(
  client: Client,
  options: {
    status?: ConversationStatus;
    parentId?: string;
    /** Only this tenant's conversations. */
    tenant?: string;
    pageSize: number;
    pageToken?: string;
    search?: string;
    states?: StateCache;
  },
): Promise<ConversationPage> {
  const search = options.search?.trim();
  let token = options.pageToken;
  const found: Listed[] = [];
  let scanned = 0;
  do {
    const page = await listPage(client, { ...options, pageSize: search ? 200 : options.pageSize, ...(token ? { pageToken: token } : {}) });
    scanned += page.rows.length;
    found.push(...(search ? page.rows.filter((r) => matchesSearch(r.row, search)) : page.rows));
    token = page.nextPageToken ?? undefined;
  } while (search && token && found.length < options.pageSize && scanned < SEARCH_SCAN_ROWS);
  // Only the rows shown ask for their state.
  const conversations = found.map(({ row, version, modelAttribute }) => withState(row, version, modelAttribute, options.states));
  return { conversations, nextPageToken: token ?? null };
}

interface Listed {
  row: ConversationRow;
  /** The run and history length: the state cache asks again when it changes. */
  version: string;
  modelAttribute: string | null;
}

async function listPage(
  client: Client,
  options: { status?: ConversationStatus; parentId?: string; tenant?: string; pageSize: number; pageToken?: string },
): Promise<{ rows: Listed[]; nextPageToken: string | null }> {
  const response = await client.workflowService.listWorkflowExecutions({
    namespace: client.options.namespace,
    query: listQueryText(options),
    pageSize: options.pageSize,
    nextPageToken: options.pageToken ? Buffer.from(options.pageToken, 'base64url') : Buffer.alloc(0),
  });
  const rows = await Promise.all(response.executions.map((raw) => rowOf(client, raw)));
  const token =
    response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64url') : null;
  return { rows, nextPageToken: token };
}

/**
 * The memo's title and workspace (set at start; decoded with the client's codec). Conversations
 * started before the memo held a title, or whose memo this process cannot decrypt, have none.
 */
async function memoOf(
  client: Client,
  raw: temporal.api.workflow.v1.IWorkflowExecutionInfo,
): Promise<{ title: string | null; workspace: string | null }> {
  try {
    const memo = (await decodeMapFromPayloads(client.options.loadedDataConverter, raw.memo?.fields ?? undefined)) ?? {};
    return {
      title: typeof memo.title === 'string' && memo.title !== '' ? memo.title : null,
      workspace: typeof memo.workspace === 'string' ? memo.workspace : null,
    };
  } catch {
    return { title: null, workspace: null };
  }
}

async function rowOf(client: Client, raw: temporal.api.workflow.v1.IWorkflowExecutionInfo): Promise<Listed> {
  const attrs = decodeTypedSearchAttributes(raw.searchAttributes?.indexedFields);
  const status = attrs.get(ConversationStatusKey);
  const model = attrs.get(ConversationModelKey);
  const tenant = attrs.get(TenantKey);
  const id = raw.execution?.workflowId ?? '';
  const startTime = toIso(raw.startTime) ?? new Date(0).toISOString();
  const closed = raw.status !== 1; // WORKFLOW_EXECUTION_STATUS_RUNNING
  const modelAttribute = model === undefined ? null : String(model);
  return {
    row: {
      id,
      ...(await memoOf(client, raw)),
      status: status === undefined ? null : String(status),
      closed,
      model: shownModel(modelAttribute, undefined),
      cost: null,
      startTime,
      lastActivity: toIso(raw.closeTime) ?? toIso(raw.executionTime) ?? startTime,
      parentId: raw.parentExecution?.workflowId ?? null,
      tenant: tenant === undefined ? null : String(tenant),
    },
    version: `${raw.execution?.runId ?? ''}:${String(raw.historyLength ?? '')}`,
    modelAttribute,
  };
}

/**
 * The model a row shows: the one the conversation's state names (its calls' own), else the search
 * attribute unless that only says "default" (the worker's model, not known before a call).
 */
export function shownModel(attribute: string | null, fromState: string | undefined): string | null {
  if (fromState) return fromState;
  return attribute && attribute !== 'default' ? attribute : null;
}

function withState(row: ConversationRow, version: string, modelAttribute: string | null, states?: StateCache): ConversationRow {
  const facts = states?.get(row.id, version);
  return facts ? { ...row, cost: facts.cost, model: shownModel(modelAttribute, facts.model) } : row;
}

/**
 * The sub-agent tree under `id`: its child workflows (ParentWorkflowId in visibility), and theirs,
 * `depth` levels down (sub-agents nest at most a few deep).
 */
export async function childTree(client: Client, id: string, depth = 3, states?: StateCache): Promise<ChildNode[]> {
  if (depth <= 0) return [];
  const page = await listConversations(client, { parentId: id, pageSize: 100, ...(states ? { states } : {}) });
  return Promise.all(page.conversations.map(async (row) => ({ ...row, children: await childTree(client, row.id, depth - 1, states) })));
}

/** Attaches to a conversation (ConversationNotFoundError when there is none). */
export function attach(client: Client, id: string): Promise<Conversation> {
  return Conversation.attach(client, id);
}
