// From the reply as it grows (the stream assemblers' partial reply) to the live lines that say what
// is new: more text, more thinking, more of a tool call's arguments. Pure.
import type { PartialReply } from '../llm/stream.js';
import type { LiveItem } from './stream-id.js';

/** What changed from `before` to `after` (both partial replies of one call), as live items of `step`. */
export function replyDeltas(before: Readonly<PartialReply> | undefined, after: Readonly<PartialReply>, step: number): LiveItem[] {
  const out: LiveItem[] = [];
  const more = (was: string | undefined, now: string) => (was !== undefined && now.startsWith(was) ? now.slice(was.length) : now);
  const thinking = more(before?.thinking ?? '', after.thinking);
  if (thinking) out.push({ kind: 'thinking_delta', text: thinking, step });
  const text = more(before?.text ?? '', after.text);
  if (text) out.push({ kind: 'model_delta', text, step });
  after.toolCalls.forEach((call, i) => {
    const was = before?.toolCalls[i];
    const args = more(was && was.id === call.id ? was.arguments : '', call.arguments);
    if (args) out.push({ kind: 'model_delta', text: args, step, toolCallId: call.id, toolName: call.name });
  });
  return out;
}
