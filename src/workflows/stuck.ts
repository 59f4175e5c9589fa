// Stuck detection over the events since the user's last message (pure, deterministic). The same
// patterns as the seed SDK: a loop the model will not get out of by itself.
import type { ActionEvent, ConversationEvent, ObservationEvent } from '../types.js';

interface Pair {
  action: string;
  observation: string;
  isError: boolean;
}

function pairsSinceUserMessage(events: readonly ConversationEvent[]): { pairs: Pair[]; agentMessages: number } {
  let start = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.kind === 'message' && e.source === 'user') {
      start = i + 1;
      break;
    }
  }
  const actions = new Map<string, ActionEvent>();
  const pairs: Pair[] = [];
  let agentMessages = 0;
  for (const e of events.slice(start)) {
    if (e.kind === 'action') actions.set(e.toolCallId, e);
    if (e.kind === 'message' && e.source === 'agent') agentMessages++;
    if (e.kind === 'observation') {
      const a = actions.get(e.toolCallId);
      if (!a) continue;
      agentMessages = 0;
      pairs.push({ action: `${a.tool} ${JSON.stringify(a.arguments)}`, observation: (e as ObservationEvent).content, isError: e.isError });
    }
  }
  return { pairs, agentMessages };
}

/** Returns why the conversation is stuck, or null. */
export function detectStuck(events: readonly ConversationEvent[]): string | null {
  const { pairs, agentMessages } = pairsSinceUserMessage(events);
  const last = (n: number) => (pairs.length >= n ? pairs.slice(-n) : null);

  const four = last(4);
  if (four && four.every((p) => p.action === four[0]!.action && p.observation === four[0]!.observation)) {
    return `stuck: the agent repeated the same action with the same result 4 times (${shorten(four[0]!.action)})`;
  }
  const three = last(3);
  if (three && three.every((p) => p.action === three[0]!.action && p.isError)) {
    return `stuck: the same action failed 3 times in a row (${shorten(three[0]!.action)})`;
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
    if (alternating) return `stuck: the agent alternated between two actions 6 times (${shorten(a!.action)} / ${shorten(b!.action)})`;
  }
  return null;
}

function shorten(s: string): string {
  return s.length > 100 ? `${s.slice(0, 99)}…` : s;
}
