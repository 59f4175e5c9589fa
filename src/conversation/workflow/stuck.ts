// Stuck detection over the events since the user's last message (pure, deterministic). The same
// patterns as the seed SDK: a loop the model will not get out of by itself.
import { cut } from '../../core/text.js';
import type { ActionEvent, ConversationEvent, ObservationEvent } from '../../core/types.js';

interface Pair {
  action: string;
  observation: string;
  isError: boolean;
}

/** The most pairs any pattern looks at. */
const WINDOW = 12;

/**
 * Keeps what stuck detection needs as events are added (the last few action/observation pairs since
 * the user's last message, agent messages since the last result), so a check costs the same at step
 * 10,000 as at step 10. Equal to detectStuck over the same events (a unit test checks).
 */
export class StuckWatch {
  private actions = new Map<string, ActionEvent>();
  private pairs: Pair[] = [];
  private agentMessages = 0;

  constructor(events: readonly ConversationEvent[] = []) {
    for (const e of events) this.add(e);
  }

  add(e: ConversationEvent): void {
    // A user's message or a rewind starts afresh.
    if ((e.kind === 'message' && e.source === 'user') || e.kind === 'rewind') {
      this.actions = new Map();
      this.pairs = [];
      this.agentMessages = 0;
      return;
    }
    if (e.kind === 'action') this.actions.set(e.toolCallId, e);
    if (e.kind === 'message' && e.source === 'agent') this.agentMessages++;
    if (e.kind === 'observation') {
      const a = this.actions.get(e.toolCallId);
      if (!a) return;
      this.agentMessages = 0;
      this.pairs.push({
        action: `${a.tool} ${JSON.stringify(a.arguments)}`,
        observation: (e as ObservationEvent).content,
        isError: e.isError,
      });
      if (this.pairs.length > WINDOW) this.pairs.shift();
    }
  }

  /** Why the conversation is stuck, or null. */
  check(): string | null {
    return stuckReason(this.pairs, this.agentMessages);
  }
}

/** Returns why the conversation is stuck, or null. */
export function detectStuck(events: readonly ConversationEvent[]): string | null {
  return new StuckWatch(events).check();
}

function stuckReason(pairs: readonly Pair[], agentMessages: number): string | null {
  const last = (n: number) => (pairs.length >= n ? pairs.slice(-n) : null);

  const four = last(4);
  if (four && four.every((p) => p.action === four[0]!.action && p.observation === four[0]!.observation)) {
    return `stuck: the agent repeated the same action with the same result 4 times (${cut(four[0]!.action, 100)})`;
  }
  const three = last(3);
  if (three && three.every((p) => p.action === three[0]!.action && p.isError)) {
    return `stuck: the same action failed 3 times in a row (${cut(three[0]!.action, 100)})`;
  }
  if (agentMessages >= 3) return 'stuck: the agent talked to itself 3 times without acting';
  const twelve = last(12);
  if (twelve) {
    const [a, b] = twelve;
    const alternating =
      a!.action !== b!.action &&
      twelve.every((p, i) => {
        const ref = i % 2 === 0 ? a! : b!;
        return p.action === ref.action && p.observation === ref.observation;
      });
    if (alternating) return `stuck: the agent alternated between two actions 6 times (${cut(a!.action, 100)} / ${cut(b!.action, 100)})`;
  }
  return null;
}
