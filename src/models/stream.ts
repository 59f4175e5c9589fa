// Assembling a streamed reply: Anthropic's Messages events or OpenAI's chat-completion chunks in,
// one reply out (text, tool calls whose arguments came in fragments, thinking with signatures,
// usage, whether the output cap cut it). The partial reply is handed to a listener as it grows, for
// a live view. Pure: no I/O.
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import type OpenAI from 'openai';
import type { ReasoningBlock } from '../core/types.js';

/** A tool call as the model sent it (arguments as raw JSON text). */
export interface StreamedToolCall {
  id: string;
  name: string;
  arguments: string;
  /** The Responses API's id of the function_call item (`fc_…`). */
  itemId?: string;
}

/** The reply so far, as it grows. */
export interface PartialReply {
  text: string;
  /** Reasoning text so far (Anthropic thinking, or an OpenAI-compatible server's reasoning_content). */
  thinking: string;
  toolCalls: StreamedToolCall[];
}

/** Called each time the partial reply grows; it must not throw (a throw is ignored). */
export type PartialListener = (partial: Readonly<PartialReply>) => void;

/** A whole reply, assembled. */
export interface AssembledReply extends PartialReply {
  id: string;
  model: string;
  reasoning: ReasoningBlock[];
  /** Input tokens not read from or written to the cache. */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** Cut by the output-token cap. */
  truncated: boolean;
  /** The provider sent its end-of-reply event (a stream that ended early is an error). */
  complete: boolean;
}

function notify(listener: PartialListener | undefined, partial: PartialReply): void {
  if (!listener) return;
  try {
    listener(partial);
  } catch {
    // A broken live view must not break the call.
  }
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; call: StreamedToolCall }
  | { type: 'other' };

/** A reply with nothing in it yet, as every assembler (Chat, Messages, Responses) starts. */
export function emptyReply(): AssembledReply {
  return {
    id: '',
    model: '',
    text: '',
    thinking: '',
    toolCalls: [],
    reasoning: [],
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    truncated: false,
    complete: false,
  };
}

/** Assembles Anthropic's Messages stream (message_start … message_stop). */
export class AnthropicAssembler {
  private readonly blocks: Block[] = [];
  private readonly reply: AssembledReply = emptyReply();

  constructor(private readonly listener?: PartialListener) {}

  push(event: RawMessageStreamEvent): void {
    const r = this.reply;
    switch (event.type) {
      case 'message_start': {
        r.id = event.message.id;
        r.model = event.message.model;
        const u = event.message.usage;
        r.inputTokens = u.input_tokens ?? 0;
        r.cacheReadTokens = u.cache_read_input_tokens ?? 0;
        r.cacheWriteTokens = u.cache_creation_input_tokens ?? 0;
        r.outputTokens = u.output_tokens ?? 0;
        break;
      }
      case 'content_block_start': {
        const b = event.content_block;
        let block: Block;
        if (b.type === 'text') block = { type: 'text', text: b.text ?? '' };
        else if (b.type === 'thinking') block = { type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' };
        else if (b.type === 'redacted_thinking') block = { type: 'redacted_thinking', data: b.data };
        else if (b.type === 'tool_use') {
          const call = { id: b.id, name: b.name, arguments: '' };
          r.toolCalls.push(call);
          block = { type: 'tool_use', call };
        } else block = { type: 'other' };
        this.blocks[event.index] = block;
        this.refresh();
        break;
      }
      case 'content_block_delta': {
        const block = this.blocks[event.index];
        const d = event.delta;
        if (!block) break;
        if (d.type === 'text_delta' && block.type === 'text') block.text += d.text;
        else if (d.type === 'thinking_delta' && block.type === 'thinking') block.thinking += d.thinking;
        else if (d.type === 'signature_delta' && block.type === 'thinking') block.signature += d.signature;
        else if (d.type === 'input_json_delta' && block.type === 'tool_use') block.call.arguments += d.partial_json;
        this.refresh();
        break;
      }
      case 'message_delta': {
        // Counts here are cumulative.
        const u = event.usage;
        if (u.output_tokens != null) r.outputTokens = u.output_tokens;
        if (u.input_tokens != null) r.inputTokens = u.input_tokens;
        if (u.cache_read_input_tokens != null) r.cacheReadTokens = u.cache_read_input_tokens;
        if (u.cache_creation_input_tokens != null) r.cacheWriteTokens = u.cache_creation_input_tokens;
        if (event.delta.stop_reason === 'max_tokens') r.truncated = true;
        break;
      }
      case 'message_stop':
        r.complete = true;
        break;
      default:
        break;
    }
  }

  private refresh(): void {
    const r = this.reply;
    r.text = this.blocks.flatMap((b) => (b?.type === 'text' ? [b.text] : [])).join('');
    r.thinking = this.blocks.flatMap((b) => (b?.type === 'thinking' ? [b.thinking] : [])).join('\n');
    notify(this.listener, { text: r.text, thinking: r.thinking, toolCalls: r.toolCalls.map((c) => ({ ...c })) });
  }

  result(): AssembledReply {
    const reasoning: ReasoningBlock[] = [];
    for (const b of this.blocks) {
      if (b?.type === 'thinking') reasoning.push({ type: 'thinking', thinking: b.thinking, signature: b.signature });
      if (b?.type === 'redacted_thinking') reasoning.push({ type: 'redacted_thinking', data: b.data });
    }
    return { ...this.reply, toolCalls: this.reply.toolCalls.map((c) => ({ ...c })), reasoning };
  }
}

/** Assembles an OpenAI (or OpenAI-compatible) chat-completion stream. */
export class OpenAIAssembler {
  private readonly calls: (StreamedToolCall | undefined)[] = [];
  private readonly reply: AssembledReply = emptyReply();

  constructor(private readonly listener?: PartialListener) {}

  push(chunk: OpenAI.Chat.Completions.ChatCompletionChunk): void {
    const r = this.reply;
    if (chunk.id) r.id ||= chunk.id;
    if (chunk.model) r.model ||= chunk.model;
    if (chunk.usage) {
      // prompt_tokens includes the cached ones; keep only the uncached part here.
      const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      r.cacheReadTokens = cached;
      r.inputTokens = Math.max(0, (chunk.usage.prompt_tokens ?? 0) - cached);
      r.outputTokens = chunk.usage.completion_tokens ?? 0;
    }
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    let grew = false;
    if (delta.content) {
      r.text += delta.content;
      grew = true;
    }
    // Some OpenAI-compatible servers (DeepSeek, vLLM, llama.cpp) stream reasoning beside the content.
    const reasoning = (delta as { reasoning_content?: string | null }).reasoning_content;
    if (reasoning) {
      r.thinking += reasoning;
      grew = true;
    }
    for (const d of delta.tool_calls ?? []) {
      const at = d.index ?? this.calls.length;
      let call = this.calls[at];
      if (!call) {
        call = { id: d.id ?? '', name: '', arguments: '' };
        this.calls[at] = call;
      }
      if (d.id) call.id = d.id;
      if (d.function?.name) call.name += d.function.name;
      if (d.function?.arguments) call.arguments += d.function.arguments;
      grew = true;
    }
    if (choice.finish_reason) {
      r.complete = true;
      if (choice.finish_reason === 'length') r.truncated = true;
    }
    if (grew) notify(this.listener, { text: r.text, thinking: r.thinking, toolCalls: this.toolCalls() });
  }

  private toolCalls(): StreamedToolCall[] {
    return this.calls.flatMap((c) => (c ? [{ ...c }] : []));
  }

  result(): AssembledReply {
    return { ...this.reply, toolCalls: this.toolCalls() };
  }
}
