// OpenAI's Responses API: the prompt in its terms (instructions and input items, made from the
// chat-completions messages the prompt builder makes), the stream assembled into one reply (text,
// function calls whose arguments come in fragments, reasoning items taken whole from
// `output_item.done`, usage with cached tokens, whether the output cap cut it), and which models
// want what. Reasoning items go back exactly as received, before the function calls they led to:
// with `store: false` the API keeps nothing, and refuses a function_call sent without its reasoning.
// Pure: no I/O, the same input gives the same bytes.
import type {
  FunctionTool,
  ResponseInputImage,
  ResponseInputItem,
  ResponseInputText,
  ResponseStreamEvent,
  ResponseUsage,
} from 'openai/resources/responses/responses';
import { z } from 'zod';
import type { ChatMessage, OpenAIReasoningItem, PromptImage, ToolSpec, WireApi } from '../core/types.js';
import { dataUrl, missingImageText } from '../images/prompt-images.js';
import { stableSchema } from './anthropic-messages.js';
import { PROVIDERS } from './provider.js';
import { emptyReply, type AssembledReply, type PartialListener, type StreamedToolCall } from './stream.js';
import type { ModelSettings } from '../settings/models.js';

/** What the Responses API is sent, besides the model, the limits and the settings. */
export interface ResponsesPrompt {
  instructions: string;
  input: ResponseInputItem[];
  tools: FunctionTool[];
}

/** Chat-completions messages (system first) and tools → the Responses API's instructions, input items and tools. */
export function responsesPrompt(chat: readonly ChatMessage[], specs: readonly ToolSpec[]): ResponsesPrompt {
  const system: string[] = [];
  const input: ResponseInputItem[] = [];
  for (const m of chat) {
    switch (m.role) {
      case 'system':
        // The leading system prompt is the instructions; a later one (none today) a developer turn.
        if (input.length === 0) system.push(m.content);
        else input.push({ role: 'developer', content: m.content });
        break;
      case 'user':
        input.push(
          m.images?.length
            ? { role: 'user', content: [{ type: 'input_text', text: m.content }, ...inputImages(m.images)] }
            : { role: 'user', content: m.content },
        );
        break;
      case 'tool': {
        const output = m.content === '' ? '(no output)' : m.content;
        // function_call_output takes a list of input_text / input_image items besides a string.
        input.push({
          type: 'function_call_output',
          call_id: m.tool_call_id,
          output: m.images?.length ? [{ type: 'input_text', text: output }, ...inputImages(m.images)] : output,
        });
        break;
      }
      case 'assistant': {
        // Reasoning exactly as received, in the reply's order: before the function call it came
        // right before, else first (other providers' thinking cannot go to this API).
        const reasoning = (m.reasoning ?? []).flatMap((r) => (r.type === 'openai_reasoning' ? [r] : []));
        const callIds = new Set((m.tool_calls ?? []).map((c) => c.id));
        const placed = (r: (typeof reasoning)[number]) => r.followedBy !== undefined && callIds.has(r.followedBy);
        for (const r of reasoning) if (!placed(r)) input.push({ ...r.item } as ResponseInputItem);
        if (m.content) input.push({ role: 'assistant', content: m.content });
        for (const call of m.tool_calls ?? []) {
          for (const r of reasoning) if (placed(r) && r.followedBy === call.id) input.push({ ...r.item } as ResponseInputItem);
          input.push({
            type: 'function_call',
            call_id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
            // The item's own id only beside its reasoning: the API pairs the two by id.
            ...(call.item_id && reasoning.length > 0 ? { id: call.item_id } : {}),
          });
        }
        break;
      }
    }
  }
  const tools: FunctionTool[] = specs.map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    parameters: stableSchema(t.parameters) as Record<string, unknown>,
    strict: false,
  }));
  return { instructions: system.join('\n\n'), input, tools };
}

/** Images as the Responses API takes them: `input_image` with a data URL (in words when unread). */
function inputImages(images: readonly PromptImage[]): (ResponseInputImage | ResponseInputText)[] {
  return images.map((img) =>
    img.data === undefined
      ? { type: 'input_text', text: missingImageText(img) }
      : { type: 'input_image', image_url: dataUrl({ ...img, data: img.data }), detail: 'auto' },
  );
}

/**
 * Whether a model reasons (and so returns reasoning items): the o-series, gpt-5 and later, codex
 * models; not gpt-5's chat variants. Asking a model that does not for encrypted reasoning is refused.
 */
export function isReasoningModel(model: string): boolean {
  const name = model.split('/').pop() ?? model;
  if (/chat/.test(name)) return false;
  return /^(o\d|gpt-[5-9]|gpt-\d{2,}|codex)/.test(name);
}

/**
 * Whether chat completions refuses function tools for this model (gpt-5.4 and later reason by
 * default, and the API then answers 400, "use /v1/responses").
 */
export function chatRefusesTools(model: string): boolean {
  const name = model.split('/').pop() ?? model;
  const m = /^gpt-(\d+)(?:\.(\d+))?/.exec(name);
  if (!m || /chat/.test(name)) return false;
  const major = Number(m[1]);
  const minor = Number(m[2] ?? 0);
  return major > 5 || (major === 5 && minor >= 4);
}

/**
 * The wire API of a call: the conversation's, else LLM_WIRE_API, else `responses` for OpenAI's own
 * endpoint and `chat` for any other base URL (llama.cpp, vLLM, Ollama, gateways). Undefined for
 * providers with an API of their own (Anthropic).
 */
export function wireApiFor(
  resolved: { provider: string; baseUrl: string },
  requested: WireApi | undefined,
  models: Pick<ModelSettings, 'wireApi'>,
): WireApi | undefined {
  if (resolved.provider === 'anthropic') return undefined;
  if (requested) return requested;
  if (models.wireApi) return models.wireApi;
  return resolved.provider === 'openai' && sameEndpoint(resolved.baseUrl, PROVIDERS.openai?.baseUrl ?? '') ? 'responses' : 'chat';
}

function sameEndpoint(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/** What a reasoning item must look like to be kept (it is the API's; checked, then kept as received). */
const ReasoningItemSchema = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().min(1),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })),
  encrypted_content: z.string().nullish(),
});

/** The thinking text of reasoning items: their summaries, one paragraph each. */
export function summaryText(items: readonly OpenAIReasoningItem[]): string {
  return items
    .flatMap((i) => i.summary.map((s) => s.text))
    .filter((t) => t !== '')
    .join('\n\n');
}

/** Assembles a Responses API stream (`response.created` … `response.completed` / `.incomplete`). */
export class ResponsesAssembler {
  private readonly reply: AssembledReply = emptyReply();
  /** Function calls by output index, as they grow. */
  private readonly calls = new Map<number, StreamedToolCall>();
  /** Summary texts as they stream, by `item_id` and summary index (before the item is done). */
  private readonly summaries = new Map<string, string[]>();
  /** Reasoning items as they were done, with their place in the output. */
  private readonly items: { item: OpenAIReasoningItem; index: number }[] = [];
  /** Text by output index (a reply may hold more than one message). */
  private readonly texts = new Map<number, string>();
  /** The failure the stream ended with (`response.failed` or `error`), if any. */
  failure: { code?: string | undefined; message: string } | undefined;

  constructor(private readonly listener?: PartialListener) {}

  push(event: ResponseStreamEvent): void {
    const r = this.reply;
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
        r.id = event.response.id;
        r.model = event.response.model;
        break;
      case 'response.output_item.added':
        if (event.item.type === 'function_call') {
          this.calls.set(event.output_index, {
            id: event.item.call_id,
            name: event.item.name,
            arguments: event.item.arguments ?? '',
            ...(event.item.id ? { itemId: event.item.id } : {}),
          });
          this.refresh();
        }
        break;
      case 'response.function_call_arguments.delta': {
        const call = this.calls.get(event.output_index);
        if (call) {
          call.arguments += event.delta;
          this.refresh();
        }
        break;
      }
      case 'response.output_text.delta':
        this.texts.set(event.output_index, (this.texts.get(event.output_index) ?? '') + event.delta);
        this.refresh();
        break;
      case 'response.reasoning_summary_text.delta': {
        const parts = this.summaries.get(event.item_id) ?? [];
        parts[event.summary_index] = (parts[event.summary_index] ?? '') + event.delta;
        this.summaries.set(event.item_id, parts);
        this.refresh();
        break;
      }
      case 'response.output_item.done': {
        const item = event.item;
        if (item.type === 'reasoning') {
          // The whole item, encrypted content complete, exactly as received.
          const checked = ReasoningItemSchema.safeParse(item);
          if (checked.success) this.items.push({ item: item as OpenAIReasoningItem, index: event.output_index });
          this.summaries.delete(item.id);
          this.refresh();
        } else if (item.type === 'function_call') {
          this.calls.set(event.output_index, {
            id: item.call_id,
            name: item.name,
            arguments: item.arguments,
            ...(item.id ? { itemId: item.id } : {}),
          });
          this.refresh();
        } else if (item.type === 'message') {
          const text = item.content.flatMap((c) => (c.type === 'output_text' ? [c.text] : [])).join('');
          if (text !== (this.texts.get(event.output_index) ?? '')) {
            this.texts.set(event.output_index, text);
            this.refresh();
          }
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        r.id = event.response.id || r.id;
        r.model = event.response.model || r.model;
        this.usage(event.response.usage);
        if (event.type === 'response.incomplete' && event.response.incomplete_details?.reason === 'max_output_tokens') r.truncated = true;
        r.complete = true;
        break;
      }
      case 'response.failed':
        this.usage(event.response.usage);
        this.failure = {
          code: event.response.error?.code,
          message: event.response.error?.message ?? 'the model failed to answer',
        };
        break;
      case 'error':
        this.failure = { code: event.code ?? undefined, message: event.message };
        break;
      default:
        break;
    }
  }

  private usage(u: ResponseUsage | null | undefined): void {
    if (!u) return;
    const r = this.reply;
    const cached = u.input_tokens_details?.cached_tokens ?? 0;
    const written = (u.input_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens ?? 0;
    // input_tokens includes the cached and written ones; keep only the fresh part here.
    r.cacheReadTokens = cached;
    r.cacheWriteTokens = written;
    r.inputTokens = Math.max(0, u.input_tokens - cached - written);
    // output_tokens includes the reasoning tokens.
    r.outputTokens = u.output_tokens;
  }

  private refresh(): void {
    const r = this.reply;
    r.text = [...this.texts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, t]) => t)
      .join('');
    const streaming = [...this.summaries.values()].flatMap((parts) => parts.filter((p): p is string => p !== undefined));
    r.thinking = [summaryText(this.items.map((i) => i.item)), ...streaming].filter((t) => t !== '').join('\n\n');
    r.toolCalls = this.toolCalls();
    if (!this.listener) return;
    try {
      this.listener({ text: r.text, thinking: r.thinking, toolCalls: this.toolCalls() });
    } catch {
      // A broken live view must not break the call.
    }
  }

  private toolCalls(): StreamedToolCall[] {
    return [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => ({ ...c }));
  }

  result(): AssembledReply {
    return {
      ...this.reply,
      toolCalls: this.toolCalls(),
      reasoning: this.items.map(({ item, index }) => {
        const next = this.calls.get(index + 1);
        return { type: 'openai_reasoning' as const, item, ...(next ? { followedBy: next.id } : {}) };
      }),
    };
  }
}
