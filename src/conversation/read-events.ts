// Reads a conversation's event log through the `events` query, page by page.
import type { WorkflowHandle } from '@temporalio/client';
import { isDeepStrictEqual } from 'node:util';
import type { ConversationEvent } from '../types.js';
import { eventsQuery } from '../workflows/messages.js';

/** Events [fromIndex, toIndex); `toIndex` undefined reads to the end as of the last page. */
export async function readEvents(handle: WorkflowHandle, fromIndex = 0, toIndex?: number): Promise<ConversationEvent[]> {
  const out: ConversationEvent[] = [];
  let next = fromIndex;
  for (;;) {
    const limit = toIndex === undefined ? 10_000 : toIndex - next;
    if (limit <= 0) return out;
    const page = await handle.query(eventsQuery, next, limit);
    if (page.length === 0) return out;
    out.push(...page);
    next += page.length;
  }
}

/**
 * Keeps the transcripts of recent conversations in the worker's memory, so each model call reads
 * only the events added since the last one. Events are append-only; the last cached event is read
 * again and compared, and any difference (a reset workflow) drops the cache. Not a store: a miss
 * just reads everything through the query again.
 */
export class TranscriptCache {
  private readonly cache = new Map<string, ConversationEvent[]>();
  constructor(private readonly maxConversations = 20) {}

  /** `attempt` > 1 means an earlier attempt of the asking activity failed, often with its worker. */
  async read(handle: WorkflowHandle, eventCount: number, attempt = 1): Promise<ConversationEvent[]> {
    const id = handle.workflowId;
    let cached = this.cache.get(id) ?? [];
    this.cache.delete(id);
    if (cached.length > eventCount) cached = cached.slice(0, eventCount);
    let events: ConversationEvent[];
    if (cached.length === 0) {
      events = attempt > 1 ? await readAfterRetry(handle, eventCount) : await readEvents(handle, 0, eventCount);
    } else {
      const fresh = await readEvents(handle, cached.length - 1, eventCount);
      events = isDeepStrictEqual(fresh[0], cached[cached.length - 1])
        ? [...cached, ...fresh.slice(1)]
        : await readEvents(handle, 0, eventCount);
    }
    this.cache.set(id, events);
    while (this.cache.size > this.maxConversations) this.cache.delete(this.cache.keys().next().value as string);
    return events;
  }
}

/** How long a query may take before we suspect it waits for a dead worker. */
const STALL_MS = 250;

/**
 * A retry on a worker new to the conversation often follows the death of the worker that ran it.
 * The conversation is still sticky to that worker, and a query waits out the sticky timeout (2 s)
 * for it. So if the first query does not answer at once, point the conversation's queries and next
 * workflow task at any worker, and ask again. A live sticky worker is left alone.
 */
async function readAfterRetry(handle: WorkflowHandle, eventCount: number): Promise<ConversationEvent[]> {
  const { client } = handle;
  try {
    return await client.connection.withDeadline(Date.now() + STALL_MS, () => readEvents(handle, 0, eventCount));
  } catch {
    await client.workflowService
      .resetStickyTaskQueue({ namespace: client.options.namespace, execution: { workflowId: handle.workflowId } })
      .catch(() => undefined); // best effort: without it the query below only takes longer
    return readEvents(handle, 0, eventCount);
  }
}
