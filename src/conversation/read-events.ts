// Reads a conversation's event log through the `events` query, page by page.
import { CONFIG_DEFAULTS } from '../worker/config.js';
import type { WorkflowHandle } from '@temporalio/client';
import { isDeepStrictEqual } from 'node:util';
import type { ConversationEvent, RecentEvents } from '../core/types.js';
import { compactEvents, type EventRun } from './workflow/event-log.js';
import { lacksPromptEvents } from '../time-travel/workflow/rewind-rules.js';
import { eventRunsQuery, eventsQuery } from './workflow/messages.js';

/**
 * The events [fromIndex, toIndex) that the conversation's current run holds, in order; `toIndex`
 * undefined reads to the end. Indices jump where the run dropped condensed events (see readEvents).
 */
export async function readHeldEvents(handle: WorkflowHandle, fromIndex = 0, toIndex?: number): Promise<ConversationEvent[]> {
  const out: ConversationEvent[] = [];
  let next = fromIndex;
  for (;;) {
    const limit = toIndex === undefined ? 10_000 : toIndex - next;
    if (limit <= 0) return out;
    const page = await handle.query(eventsQuery, next, limit);
    const within = toIndex === undefined ? page : page.filter((e) => e.index < toIndex);
    if (within.length === 0) return out;
    out.push(...within);
    next = (within[within.length - 1] as ConversationEvent).index + 1;
    if (within.length < page.length) return out;
  }
}

/**
 * Every event [fromIndex, toIndex), in order with no gaps: what the current run holds, and the
 * condensed events it no longer holds from the earlier run that recorded them (a query on that
 * closed run, answered by any worker).
 */
export async function readEvents(handle: WorkflowHandle, fromIndex = 0, toIndex?: number): Promise<ConversationEvent[]> {
  const held = await readHeldEvents(handle, fromIndex, toIndex);
  const out: ConversationEvent[] = [];
  let next = fromIndex;
  let runs: EventRun[] | undefined;
  for (const e of held) {
    if (e.index > next) {
      runs ??= await handle.query(eventRunsQuery);
      out.push(...(await fromEarlierRuns(handle, runs, next, e.index)));
    }
    out.push(e);
    next = e.index + 1;
  }
  return out;
}

async function fromEarlierRuns(handle: WorkflowHandle, runs: readonly EventRun[], from: number, to: number): Promise<ConversationEvent[]> {
  const out: ConversationEvent[] = [];
  let i = from;
  while (i < to) {
    let k = -1;
    for (let j = 0; j < runs.length; j++) if ((runs[j] as EventRun).from <= i) k = j;
    const run = runs[k];
    if (!run) throw new Error(`event ${i} of ${handle.workflowId} is in no run's record`);
    const end = Math.min(to, runs[k + 1]?.from ?? to);
    const got = await readHeldEvents(handle.client.getHandle(handle.workflowId, run.runId), i, end);
    if (got[0]?.index !== i) throw new Error(`events ${i}–${end - 1} of ${handle.workflowId} could not be read from run ${run.runId}`);
    out.push(...got);
    i = (got[got.length - 1] as ConversationEvent).index + 1;
  }
  return out;
}

/**
 * Keeps the transcripts of recent conversations in the worker's memory, so each model call reads
 * only the events added since the last one. Events are append-only; the last cached event is read
 * again and compared, and any difference (a reset workflow) drops the cache. Bounded by bytes (the
 * least recently used conversations go first), so hundreds of conversations fit whatever their
 * length. Not a store: a miss just reads everything through the query again.
 */
export class TranscriptCache {
  private readonly cache = new Map<string, { events: ConversationEvent[]; bytes: number }>();
  private bytes = 0;
  /** `maxBytes`: the worker's FAHEEM_TRANSCRIPT_CACHE_MB (see config.ts; default 512 MB). */
  constructor(private readonly maxBytes = CONFIG_DEFAULTS.transcriptCacheMb * 1024 * 1024) {}

  /**
   * The events the model needs of [0, eventCount): what the conversation's run holds, less what a
   * condensation has replaced. `attempt` > 1 means an earlier attempt of the asking activity failed,
   * often with its worker. `recent` (the events since the previous call, sent with this one) saves
   * the query when this worker holds what they follow.
   */
  async read(handle: WorkflowHandle, eventCount: number, attempt = 1, recent?: RecentEvents): Promise<ConversationEvent[]> {
    const id = handle.workflowId;
    const entry = this.take(id);
    const joined = recent && recent.from + recent.events.length === eventCount ? follow(entry?.events ?? [], recent) : undefined;
    let { events, bytes } =
      recent && joined
        ? {
            events: joined,
            // Usually the new events follow the whole cache; if they replace a cached tail, count again.
            bytes:
              entry && joined.length - recent.events.length === entry.events.length ? entry.bytes + sizeOf(recent.events) : sizeOf(joined),
          }
        : await this.query(handle, entry, eventCount, attempt);
    // A rewind to before a condensation brings back events this run may no longer hold: read them from earlier runs.
    if (lacksPromptEvents(events, eventCount)) {
      events = await readEvents(handle, 0, eventCount);
      bytes = sizeOf(events);
    }
    // What a condensation replaced is never asked for again: keep the cache as small as the prompt.
    const compacted = compactEvents(events);
    if (compacted.length !== events.length) {
      events = compacted;
      bytes = sizeOf(events);
    }
    this.put(id, { events, bytes });
    return events;
  }

  /** The events through the `events` query: only those after the cached tail when the cache still matches. */
  private async query(
    handle: WorkflowHandle,
    entry: { events: ConversationEvent[]; bytes: number } | undefined,
    eventCount: number,
    attempt: number,
  ): Promise<{ events: ConversationEvent[]; bytes: number }> {
    let cached = entry?.events ?? [];
    let bytes = entry?.bytes ?? 0;
    const last = cached[cached.length - 1];
    if (last && last.index >= eventCount) {
      cached = cached.filter((e) => e.index < eventCount);
      bytes = sizeOf(cached);
    }
    const tail = cached[cached.length - 1];
    if (!tail) {
      const events = attempt > 1 ? await readAfterRetry(handle, eventCount) : await readHeldEvents(handle, 0, eventCount);
      return { events, bytes: sizeOf(events) };
    }
    const fresh = await readHeldEvents(handle, tail.index, eventCount);
    if (isDeepStrictEqual(fresh[0], tail)) {
      const added = fresh.slice(1);
      return { events: [...cached, ...added], bytes: bytes + sizeOf(added) };
    }
    const events = await readHeldEvents(handle, 0, eventCount);
    return { events, bytes: sizeOf(events) };
  }

  /** How many conversations and bytes it holds (for the benchmarks). */
  get size(): { conversations: number; bytes: number } {
    return { conversations: this.cache.size, bytes: this.bytes };
  }

  private take(id: string) {
    const entry = this.cache.get(id);
    if (entry) {
      this.cache.delete(id);
      this.bytes -= entry.bytes;
    }
    return entry;
  }

  private put(id: string, entry: { events: ConversationEvent[]; bytes: number }): void {
    this.cache.set(id, entry);
    this.bytes += entry.bytes;
    // Least recently used first; the one just read stays even if it alone is over the limit.
    for (const [key, old] of this.cache) {
      if (this.bytes <= this.maxBytes || key === id) break;
      this.cache.delete(key);
      this.bytes -= old.bytes;
    }
  }
}

/**
 * The cached events before `recent` followed by it, or undefined when the cache does not end where
 * `recent` begins (another worker made the last calls, the cache was evicted, the workflow was reset).
 */
export function follow(cached: readonly ConversationEvent[], recent: RecentEvents): ConversationEvent[] | undefined {
  if (recent.from === 0) return [...recent.events];
  const anchor = recent.anchor;
  if (!anchor || anchor.index !== recent.from - 1) return undefined;
  let end = cached.length;
  while (end > 0 && (cached[end - 1] as ConversationEvent).index >= recent.from) end--;
  const last = cached[end - 1];
  if (!last || last.index !== anchor.index || last.timestamp !== anchor.timestamp) return undefined;
  return [...cached.slice(0, end), ...recent.events];
}

/** Roughly the memory an event takes: its JSON size. */
function sizeOf(events: readonly ConversationEvent[]): number {
  let n = 0;
  for (const e of events) n += JSON.stringify(e).length * 2;
  return n;
}

/**
 * A retry on a worker new to the conversation usually follows the death of the worker that ran it
 * (a retry on the same worker finds the transcript in its cache). The conversation is still sticky
 * to that worker, and a query would wait out the sticky timeout (2 s) for it. So point the
 * conversation's queries and next workflow task at any worker first, then ask. If the sticky worker
 * was alive after all, it costs that worker one replay of the current run.
 */
async function readAfterRetry(handle: WorkflowHandle, eventCount: number): Promise<ConversationEvent[]> {
  await unstick(handle);
  return readHeldEvents(handle, 0, eventCount);
}

/**
 * Points the conversation's queries and next workflow task at any worker (see readAfterRetry). Best
 * effort: without it the query that follows only takes longer.
 */
export async function unstick(handle: WorkflowHandle): Promise<void> {
  const { client } = handle;
  await client.workflowService
    .resetStickyTaskQueue({ namespace: client.options.namespace, execution: { workflowId: handle.workflowId } })
    .catch(() => undefined);
}
