// From the reply as it grows (the stream assemblers' partial reply) to the live lines that say what
// is new: more text, more thinking, more of a tool call's arguments. Pure.
import type { PartialReply } from '../models/stream.js';
import type { LiveItem } from './stream-id.js';

/** What changed from `before` to `after` (both partial replies of one call), as live items of `step`. */
export function replyDeltas(
  before: Readonly<PartialReply> | undefined,
  after: Readonly<PartialReply>,
  step: number,
  eventCount?: number,
): LiveItem[] {
  const out: LiveItem[] = [];
  const call = eventCount !== undefined ? { step, eventCount } : { step };
  // The assemblers only append: what is new is what lies past the old length (no O(n) compare a token).
  const more = (was: string, now: string) => (now.length > was.length ? now.slice(was.length) : '');
  const thinking = more(before?.thinking ?? '', after.thinking);
  if (thinking) out.push({ kind: 'thinking_delta', text: thinking, ...call });
  const text = more(before?.text ?? '', after.text);
  if (text) out.push({ kind: 'model_delta', text, ...call });
  after.toolCalls.forEach((tool, i) => {
    const was = before?.toolCalls[i];
    const args = more(was && was.id === tool.id ? was.arguments : '', tool.arguments);
    if (args) out.push({ kind: 'model_delta', text: args, ...call, toolCallId: tool.id, toolName: tool.name });
  });
  return out;
}
