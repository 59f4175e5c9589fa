// How many events the model's prompt holds (what the condenser compares with its limit), kept as
// events are added instead of rebuilding the prompt every step. Pure; equal to
// `promptEvents(events).filter(isModelEvent).length` at every point (a unit test checks).
import type { ConversationEvent } from '../../core/types.js';
import { isModelEvent, promptEvents } from './prompt.js';

export class PromptCount {
  private model = 0;
  private forgotten = 0;
  private condensed = false;
  /** Since a rewind the count is taken again over the held events at each condensation or rewind (both are rare). */
  private rewound = false;

  constructor(events: readonly ConversationEvent[] = []) {
    const byIndex = new Map(events.map((e) => [e.index, e]));
    events.forEach((e, i) =>
      this.add(
        e,
        (k) => byIndex.get(k),
        () => events.slice(0, i + 1),
      ),
    );
  }

  /**
   * Call after `event` was appended; `get` finds a held event by index (dropped ones count as absent),
   * `held` gives every held event (for a rewind, which changes what the prompt holds as a whole).
   */
  add(event: ConversationEvent, get: (index: number) => ConversationEvent | undefined, held?: () => readonly ConversationEvent[]): void {
    if (event.kind === 'rewind' || event.kind === 'refused' || (this.rewound && event.kind === 'condensation')) {
      this.rewound = true;
      this.recount(held ? held() : []);
      return;
    }
    if (event.kind !== 'condensation') {
      if (isModelEvent(event)) this.model++;
      return;
    }
    // The latest condensation replaces [forgottenFrom, forgottenTo) with itself: count what it hides, once.
    this.condensed = true;
    this.forgotten = 0;
    for (let i = event.forgottenFrom; i < event.forgottenTo; i++) {
      const e = get(i);
      if (e && e.kind !== 'condensation' && isModelEvent(e)) this.forgotten++;
    }
  }

  private recount(events: readonly ConversationEvent[]): void {
    this.model = promptEvents(events).filter(isModelEvent).length;
    this.forgotten = 0;
    this.condensed = false;
  }

  get visible(): number {
    return this.model - this.forgotten + (this.condensed ? 1 : 0);
  }
}
