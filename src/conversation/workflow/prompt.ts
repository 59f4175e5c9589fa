// Turns the event log into chat-completions messages. Pure and deterministic: the workflow calls it.
import { skillsPromptSection, type SkillListing } from '../../skills/prompt.js';
import { liveEvents } from '../../time-travel/workflow/rewind-rules.js';
import type { ChatMessage, CondensationEvent, ConversationEvent, RepositoryInstructions } from '../../core/types.js';

export const DEFAULT_SYSTEM_PROMPT = `You are a careful software engineer working in a terminal and a file editor.
Work inside the workspace. Use the tools to inspect before you change things, keep changes small,
and check your work. When the task is done, call the finish tool with a short summary.`;

export const SECURITY_RISK_NOTE = `Actions may need the user's approval. With every terminal and file_editor call, set
"security_risk" to LOW (reads, harmless), MEDIUM (changes inside the workspace) or HIGH (deletes data,
touches the network, installs software, or anything hard to undo).`;

/** The system prompt with the skills section (names, descriptions, paths; never a body) after it. */
export function withSkills(systemPrompt: string, skills: readonly SkillListing[] | undefined): string {
  const section = skillsPromptSection(skills ?? []);
  return section ? `${systemPrompt}\n\n${section}` : systemPrompt;
}

/** The system prompt with the repository's instructions (AGENTS.md) after it. */
export function withInstructions(systemPrompt: string, instructions: RepositoryInstructions | undefined): string {
  if (!instructions) return systemPrompt;
  return (
    `${systemPrompt}\n\nThe repository's instructions for agents (${instructions.path}${instructions.truncated ? ', cut short' : ''}); follow them:\n` +
    `<repository_instructions>\n${instructions.text.trimEnd()}\n</repository_instructions>`
  );
}

/**
 * Builds the prompt. A user message that arrived while tool calls were still open (the user wrote
 * while a command ran) is placed after their results, so the transcript stays valid for the API
 * while the event log stays in true time order.
 */
export function buildMessages(allEvents: readonly ConversationEvent[], systemPrompt: string): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  const events = promptEvents(allEvents);
  const open = new Set<string>();
  let deferred: ChatMessage[] = [];
  let replyId: string | undefined;

  const flush = () => {
    messages.push(...deferred);
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
        // A hook's context (source environment) reads as a user turn, like the user's own words.
        if (event.source !== 'agent') {
          // Images as references: the model call reads their bytes from the object store.
          const user: ChatMessage = { role: 'user', content: event.text, ...(event.images?.length ? { images: [...event.images] } : {}) };
          if (open.size > 0) deferred.push(user);
          else messages.push(user);
        } else {
          closeOpenCalls();
          replyId = undefined;
          messages.push({ role: 'assistant', content: event.text });
          if (event.truncated) messages.push({ role: 'user', content: TRUNCATED_NOTE });
        }
        break;
      case 'action': {
        if (event.replyId !== replyId) {
          closeOpenCalls();
          replyId = event.replyId;
          messages.push({
            role: 'assistant',
            content: event.thought ?? null,
            tool_calls: [],
            ...(event.reasoning?.length ? { reasoning: event.reasoning } : {}),
          });
          // Told after this reply's results (a user turn may not come between a call and its result).
          if (event.truncated) deferred.push({ role: 'user', content: TRUNCATED_NOTE });
        }
        const last = messages[messages.length - 1];
        if (last?.role === 'assistant' && last.tool_calls) {
          const args = typeof event.arguments === 'string' ? event.arguments : JSON.stringify(event.arguments ?? {});
          last.tool_calls.push({
            id: event.toolCallId,
            type: 'function',
            function: { name: event.tool, arguments: args },
            ...(event.itemId ? { item_id: event.itemId } : {}),
          });
          open.add(event.toolCallId);
        }
        break;
      }
      case 'observation':
        if (open.delete(event.toolCallId)) {
          messages.push({
            role: 'tool',
            tool_call_id: event.toolCallId,
            content: event.content,
            ...(event.images?.length ? { images: [...event.images] } : {}),
          });
          if (open.size === 0) flush();
        }
        break;
      case 'condensation':
        closeOpenCalls();
        replyId = undefined;
        messages.push({ role: 'user', content: `${SUMMARY_PREFIX}\n${event.summary}` });
        break;
      default:
        // pause, resume, status and error events are for people, not the model.
        break;
    }
  }
  closeOpenCalls();
  return messages;
}

/** What the model is told after a reply the output-token cap cut short. */
export const TRUNCATED_NOTE =
  'Your previous reply was cut off: it reached the maximum number of output tokens. Tool calls in it may have incomplete arguments. Continue with shorter steps (for a large file, write it in parts).';

export const SUMMARY_PREFIX = 'Summary of the earlier part of this conversation (older events were condensed):';

/**
 * The events the model sees: with a condensation, the events it replaced give way to its summary,
 * placed where they were.
 */
export function promptEvents(all: readonly ConversationEvent[]): ConversationEvent[] {
  // What rewinds left behind is not on the conversation's line any more (a condensation among it neither).
  const events = liveEvents(all);
  let latest: CondensationEvent | undefined;
  for (const e of events) if (e.kind === 'condensation') latest = e;
  if (!latest) return [...events];
  const c = latest;
  const out: ConversationEvent[] = [];
  // The summary goes where its range began (that event itself may no longer be held: see EventLog).
  let placed = false;
  for (const e of events) {
    if (!placed && e.index >= c.forgottenFrom) {
      out.push(c);
      placed = true;
    }
    if (e.kind === 'condensation') continue;
    if (e.index >= c.forgottenFrom && e.index < c.forgottenTo) continue;
    out.push(e);
  }
  return out;
}

/** Events that matter to the model (what the condenser counts). */
export function isModelEvent(e: ConversationEvent): boolean {
  return e.kind === 'message' || e.kind === 'action' || e.kind === 'observation' || e.kind === 'condensation';
}

/**
 * Where to condense: keep `keepFirst` model events at the start and about the newer half; never cut
 * between a tool call and its result. Returns [from, to) event indices, and the earlier condensation
 * the new one folds in (the range then starts where that one did), or null when too short.
 */
export function condensationRange(
  events: readonly ConversationEvent[],
  keepFirst: number,
): { from: number; to: number; folds?: CondensationEvent } | null {
  const visible = promptEvents(events).filter(isModelEvent);
  if (visible.length < keepFirst + 4) return null;
  const head = visible[keepFirst];
  const target = visible[Math.floor((keepFirst + visible.length) / 2)];
  if (!head || !target) return null;
  // Cut points: a message, or the first call of a reply, with no tool call waiting for its result.
  const cuts: number[] = [];
  const open = new Set<string>();
  for (const e of liveEvents(events)) {
    if (open.size === 0 && (e.kind === 'message' || e.kind === 'action')) cuts.push(e.index);
    if (e.kind === 'action') open.add(e.toolCallId);
    if (e.kind === 'observation') open.delete(e.toolCallId);
  }
  const previous = visible.find((e): e is CondensationEvent => e.kind === 'condensation');
  // The range starts after the kept head, or at the old summary (which is folded into the new one).
  const from = previous ? previous.forgottenFrom : cuts.find((i) => i >= head.index);
  const to = cuts.find((i) => i >= target.index);
  if (from === undefined || to === undefined || to <= from) return null;
  return previous ? { from, to, folds: previous } : { from, to };
}
