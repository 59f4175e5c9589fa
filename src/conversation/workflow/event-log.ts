// The events a workflow run holds. Every event keeps its index for ever, but a run holds only what
// the model still needs: once older events are condensed, the next run (after continue-as-new)
// starts from the kept head, the latest condensation and what follows it, so the state a long
// conversation carries stays bounded. The events it dropped are still answered by the run that
// recorded them (a query on that closed run); `runs` says which run recorded which indices.
// Pure and deterministic.
import { droppedRanges, inRanges } from '../../time-travel/workflow/rewind-rules.js';
import { DEFAULTS, type CondensationEvent, type ConversationEvent, type RecentEvents } from '../../core/types.js';

/** A run of the conversation's workflow and the first event index it recorded. */
export interface EventRun {
  runId: string;
  from: number;
}

export class EventLog {
  /** Held events older than `tail`, in index order, with gaps (the kept head). */
  private readonly head: ConversationEvent[];
  /** Held events from `tailStart` on, contiguous, up to the newest. */
  private readonly tail: ConversationEvent[];
  private readonly tailStart: number;

  constructor(carried: readonly ConversationEvent[] = []) {
    // The newest events are contiguous; whatever comes before the last gap is the kept head.
    let split = carried.length;
    while (split > 0) {
      const e = carried[split - 1] as ConversationEvent;
      const next = carried[split];
      if (next && next.index !== e.index + 1) break;
      split--;
    }
    this.head = carried.slice(0, split);
    this.tail = carried.slice(split);
    this.tailStart = this.tail[0]?.index ?? (carried.length ? (carried[carried.length - 1] as ConversationEvent).index + 1 : 0);
  }

  /** How many events the conversation has recorded (the next index). */
  get count(): number {
    return this.tailStart + this.tail.length;
  }

  /** The event with this index, if this run holds it. */
  get(index: number): ConversationEvent | undefined {
    if (index >= this.tailStart) return this.tail[index - this.tailStart];
    return this.head.find((e) => e.index === index);
  }

  append(event: ConversationEvent): void {
    if (event.index !== this.count) throw new Error(`event ${event.index} appended at ${this.count}`);
    this.tail.push(event);
  }

  /** Every held event in index order (no copy while nothing was dropped). */
  held(): readonly ConversationEvent[] {
    return this.head.length === 0 ? this.tail : [...this.head, ...this.tail];
  }

  /** Held events, newest first (stop early: it is a generator). */
  *newestFirst(): Generator<ConversationEvent> {
    for (let i = this.tail.length - 1; i >= 0; i--) yield this.tail[i] as ConversationEvent;
    for (let i = this.head.length - 1; i >= 0; i--) yield this.head[i] as ConversationEvent;
  }

  /** Held events with index >= `from`, in order. */
  *from(from: number): Generator<ConversationEvent> {
    for (const e of this.head) if (e.index >= from) yield e;
    for (let i = Math.max(0, from - this.tailStart); i < this.tail.length; i++) yield this.tail[i] as ConversationEvent;
  }

  /** What the next run needs to hold (see compactEvents). */
  compact(): ConversationEvent[] {
    return compactEvents(this.held());
  }
}

/**
 * The events the model still needs: with a condensation, the events before its range, and from the
 * end of its range on (the condensation itself among them); without one, all of them.
 */
export function compactEvents(events: readonly ConversationEvent[]): ConversationEvent[] {
  // What a rewind left behind is dropped too (earlier runs answer for it); rewind events stay.
  const ranges = droppedRanges(events);
  let latest: CondensationEvent | undefined;
  for (const e of events) if (e.kind === 'condensation' && !inRanges(e.index, ranges)) latest = e;
  if (!latest && ranges.length === 0) return [...events];
  const c = latest;
  // Rewind and refusal events say what leaves the prompt: they stay whatever range they are in.
  return events.filter(
    (e) =>
      e.kind === 'rewind' ||
      e.kind === 'refused' ||
      (!inRanges(e.index, ranges) && (!c || e.index < c.forgottenFrom || e.index >= c.forgottenTo)),
  );
}

/** Up to this much JSON of new events travels with a model call; more is read with the events query. */
export const RECENT_EVENTS_MAX_CHARS = 16_000;

/**
 * The held events [from, to) and the one before them (the anchor a worker checks its cache against),
 * if this run holds them all and they are small; otherwise undefined and the worker queries.
 */
export function recentEvents(
  log: Pick<EventLog, 'get'>,
  from: number,
  to: number,
  maxChars = RECENT_EVENTS_MAX_CHARS,
): RecentEvents | undefined {
  if (from < 0 || from > to) return undefined;
  const anchor = from > 0 ? log.get(from - 1) : undefined;
  if (from > 0 && !anchor) return undefined;
  const events: ConversationEvent[] = [];
  let chars = 0;
  for (let i = from; i < to; i++) {
    const e = log.get(i);
    if (!e) return undefined;
    chars += JSON.stringify(e).length;
    if (chars > maxChars) return undefined;
    events.push(e);
  }
  return anchor ? { from, anchor: { index: anchor.index, timestamp: anchor.timestamp }, events } : { from, events };
}

/**
 * At most `limit` held events from `fromIndex`, and about DEFAULTS.eventsPageChars characters (at
 * least one): the `events` query's page. Indices may jump where the run dropped condensed events;
 * `eventRuns` says who has them.
 */
export function eventsPage(events: Iterable<ConversationEvent>, limit: number): ConversationEvent[] {
  const page: ConversationEvent[] = [];
  let size = 0;
  for (const event of events) {
    if (page.length >= limit) break;
    size += JSON.stringify(event).length;
    if (page.length > 0 && size > DEFAULTS.eventsPageChars) break;
    page.push(event);
  }
  return page;
}
