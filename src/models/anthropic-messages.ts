// The prompt in Anthropic's Messages format, made from the chat-completions messages the prompt
// builder makes: system apart, tool calls as tool_use blocks, results as tool_result blocks in user
// turns, consecutive turns of one role merged, thinking blocks sent back before the tool calls they
// led to. Cache breakpoints go on the stable head (tools, system) and the newest two user turns, so
// each call reads the previous call's prefix. Pure: no I/O, the same input gives the same bytes.
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { ChatMessage, PromptImage, ToolSpec } from '../core/types.js';
import { missingImageText } from '../images/prompt-images.js';

/** What the Messages API is sent, besides the model and the limits. */
export interface AnthropicPrompt {
  system: TextBlockParam[];
  messages: MessageParam[];
  tools: Tool[];
}

/** The API allows at most this many cache breakpoints per request. */
export const MAX_CACHE_BREAKPOINTS = 4;

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * A JSON Schema with its keys in one order (property order kept: the model reads it), so a tool
 * listed twice in different key orders is the same bytes and the cached prefix stays valid.
 */
export function stableSchema(value: unknown, inProperties = false): unknown {
  if (Array.isArray(value)) return value.map((v) => stableSchema(v));
  if (!value || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (!inProperties) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, stableSchema(v, !inProperties && k === 'properties')]));
}

/** Tool arguments as Anthropic wants them: an object (what was not one is kept as text). */
function toolInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // not JSON: fall through
  }
  return { raw_arguments: args };
}

/** Images as the Messages API takes them: `image` blocks with a base64 source (in words when unread). */
function imageBlocks(images: readonly PromptImage[] | undefined): (ImageBlockParam | TextBlockParam)[] {
  return (images ?? []).map((img) =>
    img.data === undefined
      ? text(missingImageText(img))
      : { type: 'image', source: { type: 'base64', media_type: img.mimeType, data: img.data } },
  );
}

/** The API refuses empty text blocks. */
const text = (t: string): TextBlockParam => ({ type: 'text', text: t === '' ? '(empty)' : t });

/** Chat-completions messages (system first) and tools → the Messages API's system, messages and tools, with cache breakpoints. */
export function anthropicPrompt(
  chat: readonly ChatMessage[],
  specs: readonly ToolSpec[],
  options: { cache?: boolean } = {},
): AnthropicPrompt {
  const cache = options.cache ?? true;
  const system: TextBlockParam[] = [];
  const messages: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    // Consecutive turns of one role are one turn for the API.
    if (last?.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  for (const m of chat) {
    switch (m.role) {
      case 'system':
        system.push(text(m.content));
        break;
      case 'user':
        push('user', [text(m.content), ...imageBlocks(m.images)]);
        break;
      case 'tool': {
        const output = m.content === '' ? '(no output)' : m.content;
        // A tool_result may hold image blocks beside its text (file_editor view of an image).
        const result: ToolResultBlockParam = {
          type: 'tool_result',
          tool_use_id: m.tool_call_id,
          content: m.images?.length ? [text(output), ...imageBlocks(m.images)] : output,
        };
        push('user', [result]);
        break;
      }
      case 'assistant': {
        const blocks: ContentBlockParam[] = [];
        // Thinking first: the API checks that a tool-use turn starts with the thinking that led to it.
        // (Another provider's reasoning, OpenAI's items, cannot go to this API.)
        for (const r of m.reasoning ?? []) {
          if (r.type === 'thinking') blocks.push({ type: 'thinking', thinking: r.thinking, signature: r.signature });
          else if (r.type === 'redacted_thinking') blocks.push({ type: 'redacted_thinking', data: r.data });
        }
        if (m.content) blocks.push(text(m.content));
        for (const call of m.tool_calls ?? []) {
          blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
        }
        if (!m.content && !m.tool_calls?.length) blocks.push(text(''));
        push('assistant', blocks);
        break;
      }
    }
  }
  // The API wants a user turn first and last (a final assistant turn would be taken as a prefill).
  if (messages[0]?.role !== 'user') messages.unshift({ role: 'user', content: [text('(The conversation begins.)')] });
  if (messages[messages.length - 1]?.role !== 'user') push('user', [text('Continue.')]);

  const tools: Tool[] = specs.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: stableSchema(t.parameters) as Tool['input_schema'],
  }));
  if (cache) placeBreakpoints(tools, system, messages);
  return { system, messages, tools };
}

/**
 * Breakpoints: the last tool, the system prompt, the newest user turn and the one before it (where
 * the previous call put its newest). At most four, the API's limit.
 */
function placeBreakpoints(tools: Tool[], system: TextBlockParam[], messages: MessageParam[]): void {
  let left = MAX_CACHE_BREAKPOINTS;
  const lastTool = tools[tools.length - 1];
  if (lastTool) {
    lastTool.cache_control = EPHEMERAL;
    left--;
  }
  const lastSystem = system[system.length - 1];
  if (lastSystem) {
    lastSystem.cache_control = EPHEMERAL;
    left--;
  }
  const users = messages.filter((m) => m.role === 'user').slice(-Math.max(0, left));
  for (const m of users) {
    const blocks = m.content as ContentBlockParam[];
    const last = blocks[blocks.length - 1];
    if (last && last.type !== 'thinking' && last.type !== 'redacted_thinking') {
      (last as { cache_control?: typeof EPHEMERAL }).cache_control = EPHEMERAL;
    }
  }
}

/**
 * Whether thinking may be asked for: not when the turn being continued is a tool use without the
 * thinking that led to it (the API refuses that; it happens when reasoning was switched on mid-turn).
 */
export function thinkingAllowed(messages: readonly MessageParam[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || m.role !== 'assistant') continue;
    const blocks = m.content as ContentBlockParam[];
    if (!blocks.some((b) => b.type === 'tool_use')) return true;
    return blocks[0]?.type === 'thinking' || blocks[0]?.type === 'redacted_thinking';
  }
  return true;
}
