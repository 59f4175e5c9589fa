// The conversation's event log as the workflow keeps it: the events this run holds, and what the
// loop asks of them every step, kept up to date as events are added (the condenser's count, stuck
// detection, the last action, pending user messages), so no step walks the log. Pure and
// deterministic: rebuilt from the carried events at the start of each run.
import type { ActionEvent, ConversationEvent } from '../../core/types.js';
import { EventLog, recentEvents } from './event-log.js';
import { PromptCount } from './prompt-count.js';
import { StuckWatch } from './stuck.js';

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as the loop makes it; the log gives it its index and time. */
export type NewEvent = DistributiveOmit<ConversationEvent, 'index' | 'timestamp'>;

export class ConversationLog {
  private readonly log: EventLog;
  private readonly prompt: PromptCount;
  private readonly stuck: StuckWatch;
  /** Indices of the held user messages, ascending. */
  private readonly userMessages: number[] = [];
  private last: ActionEvent | undefined;

  constructor(carried: readonly ConversationEvent[] = []) {
    this.log = new EventLog(carried);
    const held = this.log.held();
    this.prompt = new PromptCount(held);
    this.stuck = new StuckWatch(held);
    for (const e of held) this.note(e);
  }

  /** How many events the conversation has recorded (the next index). */
  get count(): number {
    return this.log.count;
  }

  get(index: number): ConversationEvent | undefined {
    return this.log.get(index);
  }

  append(event: NewEvent, timestamp: string): ConversationEvent {
    const recorded = { ...event, index: this.log.count, timestamp } as ConversationEvent;
    this.log.append(recorded);
    this.prompt.add(
      recorded,
      (i) => this.log.get(i),
      () => this.log.held(),
    );
    this.stuck.add(recorded);
    this.note(recorded);
    return recorded;
  }

  /** The newest tool call, for the Web UI's details. */
  get lastAction(): ActionEvent | undefined {
    return this.last;
  }

  /** User messages from index `seen` on (those the model has not seen yet). */
  pendingMessages(seen: number): number {
    let lo = 0;
    let hi = this.userMessages.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.userMessages[mid] as number) < seen) lo = mid + 1;
      else hi = mid;
    }
    return this.userMessages.length - lo;
  }

  /** How many events the model's prompt holds now (what the condenser compares with its limit). */
  get promptEvents(): number {
    return this.prompt.visible;
  }

  /** Why the conversation looks stuck since the user's last message, or null. */
  stuckReason(): string | null {
    return this.stuck.check();
  }

  /** Every held event in index order (for the rare condensation; not per step). */
  held(): readonly ConversationEvent[] {
    return this.log.held();
  }

  /** Held events with index >= `from`, in order. */
  from(from: number): Generator<ConversationEvent> {
    return this.log.from(from);
  }

  /** Held events [from, to) for a model call, if small (see recentEvents). */
  recent(from: number, to: number): ReturnType<typeof recentEvents> {
    return recentEvents(this.log, from, to);
  }

  /** What the next run needs to hold. */
  compact(): ConversationEvent[] {
    return this.log.compact();
  }

  private note(e: ConversationEvent): void {
    if (e.kind === 'action') this.last = e;
    if (e.kind === 'message' && e.source === 'user') this.userMessages.push(e.index);
    // Messages a rewind left behind are not pending any more.
    if (e.kind === 'rewind' || e.kind === 'refused') {
      const [from, to] = e.kind === 'rewind' ? [e.dropFrom, e.dropTo] : [e.messageIndex, e.messageIndex + 1];
      const kept = this.userMessages.filter((i) => i < from || i >= to);
      this.userMessages.splice(0, this.userMessages.length, ...kept);
    }
  }
}
