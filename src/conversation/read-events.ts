// Reads a conversation's event log through the `events` query, page by page.
import type { WorkflowHandle } from '@temporalio/client';
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
