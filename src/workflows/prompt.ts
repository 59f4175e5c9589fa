// Turns the event log into chat-completions messages. Pure and deterministic: the workflow calls it.
import type { ChatMessage, ConversationEvent } from '../types.js';

export const DEFAULT_SYSTEM_PROMPT = `You are a careful software engineer working in a terminal and a file editor.
Work inside the workspace. Use the tools to inspect before you change things, keep changes small,
and check your work. When the task is done, call the finish tool with a short summary.`;

export const SECURITY_RISK_NOTE = `Actions may need the user's approval. With every terminal and file_editor call, set
"security_risk" to LOW (reads, harmless), MEDIUM (changes inside the workspace) or HIGH (deletes data,
touches the network, installs software, or anything hard to undo).`;

/**
 * Builds the prompt. A user message that arrived while tool calls were still open (the user wrote
 * while a command ran) is placed after their results, so the transcript stays valid for the API
 * while the event log stays in true time order.
 */
export function buildMessages(events: readonly ConversationEvent[], systemPrompt: string): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  const open = new Set<string>();
  let deferred: string[] = [];
  let replyId: string | undefined;

  const flush = () => {
    for (const text of deferred) messages.push({ role: 'user', content: text });
    deferred = [];
  };
  const closeOpenCalls = () => {
    for (const id of open) {
      messages.push({ role: 'tool', tool_call_id: id, content: 'No result was recorded for this call.' });
    }
    open.clear();
    flush();
  };

  for (const event of events) {
    switch (event.kind) {
      case 'message':
        if (event.source === 'user') {
          if (open.size > 0) deferred.push(event.text);
          else messages.push({ role: 'user', content: event.text });
        } else {
          closeOpenCalls();
          replyId = undefined;
          messages.push({ role: 'assistant', content: event.text });
        }
        break;
      case 'action': {
        if (event.replyId !== replyId) {
          closeOpenCalls();
          replyId = event.replyId;
          messages.push({ role: 'assistant', content: event.thought ?? null, tool_calls: [] });
        }
        const last = messages[messages.length - 1];
        if (last?.role === 'assistant' && last.tool_calls) {
          const args = typeof event.arguments === 'string' ? event.arguments : JSON.stringify(event.arguments ?? {});
          last.tool_calls.push({ id: event.toolCallId, type: 'function', function: { name: event.tool, arguments: args } });
          open.add(event.toolCallId);
        }
        break;
      }
      case 'observation':
        if (open.delete(event.toolCallId)) {
          messages.push({ role: 'tool', tool_call_id: event.toolCallId, content: event.content });
          if (open.size === 0) flush();
        }
        break;
      default:
        // pause, resume, status and error events are for people, not the model.
        break;
    }
  }
  closeOpenCalls();
  return messages;
}
