// How many events the model's prompt holds (what the condenser compares with its limit), kept as
// events are added instead of rebuilding the prompt every step. Pure; equal to
// `promptEvents(events).filter(isModelEvent).length` at every point (a unit test checks).
import type { ConversationEvent } from '../types.js';
import { isModelEvent } from './prompt.js';

export class PromptCount {
  private model = 0;
  private forgotten = 0;
  private condensed = false;

  constructor(events: readonly ConversationEvent[] = []) {
    const byIndex = new Map(events.map((e) => [e.index, e]));
    for (const e of events) this.add(e, (i) => byIndex.get(i));
  }

  /** Call after `event` was appended; `get` finds a held event by index (dropped ones count as absent). */
  add(event: ConversationEvent, get: (index: number) => ConversationEvent | undefined): void {
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

  get visible(): number {
    return this.model - this.forgotten + (this.condensed ? 1 : 0);
  }
}
