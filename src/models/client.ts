// What the model-calling activities share: resolving the model, one client per endpoint, one
// streamed call for both APIs (Anthropic's Messages API natively, OpenAI and OpenAI-compatible
// chat completions), usage and cost, output caps, reasoning, and failures in Temporal's terms.
import type Anthropic from '@anthropic-ai/sdk';
import type { Stream } from '@anthropic-ai/sdk/streaming';
import { ApplicationFailure, CancelledFailure, msToNumber } from '@temporalio/common';
import { FAILURE, failure } from '../core/failure-types.js';
import OpenAI from 'openai';
import { redact } from '../security/redact.js';
import type { ChatMessage, LLMSpec, ReasoningBlock, ReasoningEffort, TokenUsage, ToolSpec } from '../core/types.js';
import { anthropicPrompt, thinkingAllowed } from './anthropic-messages.js';
import { chatCompletionsMessages } from './chat-messages.js';
import { chatRefusesTools, isReasoningModel, ResponsesAssembler, responsesPrompt, wireApiFor } from './openai-responses.js';
import { adaptiveThinkingModels, lifecycleWarning, modelLifecycle } from './lifecycle.js';
import { costOf, modelFacts, priceTable, type Price } from './prices.js';
import { SCRIPTED_DEMO } from './worker-model.js';
import { chainOf } from './workflow/model-chain.js';
import { callOrder, coolingReason, CoolDowns, movesOn, quickRetryDelay, reasonLine, type SkippedModel } from './fallback.js';
import { ModelConfigError, PROVIDERS, resolveModel, withheldKeyHint, type ResolvedModel } from './provider.js';
import { AnthropicAssembler, OpenAIAssembler, type AssembledReply, type PartialListener, type StreamedToolCall } from './stream.js';
import type { ModelSettings } from '../settings/models.js';
import { OUTPUT_TOOL, strictCompatible, wireSchema, type OutputSchema } from './structured-output.js';

// Client errors a retry cannot fix: the conversation goes to `error` with the reason.
const NOT_RETRYABLE = new Set([400, 401, 403, 404, 413, 422]);

// The failure type of a prompt longer than the model's context window: the workflow condenses and retries.

const CONTEXT_OVERFLOW =
  /prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|context window|exceeds the context|input is too long|too many (input )?tokens|reduce the length of the (messages|prompt)/i;

/** Whether a rejected request's message says the prompt does not fit the model's context. */
export function isContextOverflow(status: number | undefined, message: string): boolean {
  return (status === 400 || status === 413 || status === 422) && CONTEXT_OVERFLOW.test(message);
}

/** Anthropic thinking budgets per effort (each under the output cap, at least the API's 1,024). */
export const THINKING_BUDGET: Record<ReasoningEffort, number> = { low: 2_048, medium: 8_192, high: 16_384 };

/** The output cap when a model's limits are unknown (local servers have none of their own). */
export const UNKNOWN_MODEL_MAX_OUTPUT = 4_096;
/** The output cap of a known model: its context allows more, but no single reply needs more. */
export const KNOWN_MODEL_MAX_OUTPUT = 16_384;

/**
 * Max output tokens for a call: LLM_MAX_OUTPUT_TOKENS on the worker, else 16,384 for a model the
 * catalogue knows (capped at a quarter of its context window), else 4,096.
 */
export function maxOutputTokens(models: Pick<ModelSettings, 'maxOutputTokens'>, contextWindow: number | undefined): number {
  if (models.maxOutputTokens !== undefined) return models.maxOutputTokens;
  if (!contextWindow) return UNKNOWN_MODEL_MAX_OUTPUT;
  return Math.max(1_024, Math.min(KNOWN_MODEL_MAX_OUTPUT, Math.floor(contextWindow / 4)));
}

/** Anthropic's thinking parameters for a call: none when off or when it cannot fit under the cap. */
export type ThinkingParams =
  { thinking: { type: 'enabled'; budget_tokens: number } } | { thinking: { type: 'adaptive' }; output_config: { effort: ReasoningEffort } };

/**
 * Budgeted extended thinking under `maxTokens`; adaptive thinking with that effort for the models
 * the SDK says want it (budgets are deprecated there). Undefined when off or when it cannot fit.
 */
export function thinkingFor(effort: ReasoningEffort | undefined, maxTokens: number, model = ''): ThinkingParams | undefined {
  if (!effort) return undefined;
  if (adaptiveThinkingModels().includes(model)) return { thinking: { type: 'adaptive' }, output_config: { effort } };
  const budget = Math.min(THINKING_BUDGET[effort], maxTokens - 1_024);
  return budget >= 1_024 ? { thinking: { type: 'enabled', budget_tokens: budget } } : undefined;
}

/** One model call, in either API's terms. */
export interface ModelRequest {
  llm: LLMSpec;
  /** The prompt in chat-completions form, system first (converted for Anthropic). */
  messages: ChatMessage[];
  tools: readonly ToolSpec[];
  /** OpenAI's prompt_cache_key: calls of one conversation share a cache. */
  conversationId: string;
  /** Told each time the reply grows (text, thinking, tool-call arguments). */
  onPartial?: PartialListener;
  /** No reasoning whatever the settings (a condensation). */
  noReasoning?: boolean;
  /**
   * The conversation's output schema, carried in each API's structured mode (chat: `response_format`;
   * Responses: `text.format`; Anthropic: the {@link OUTPUT_TOOL} tool). `force`: the answer is due
   * (Anthropic's call is then that tool, forced, without thinking, which forced tools refuse).
   */
  output?: { schema: OutputSchema; force: boolean };
  /**
   * Told, in one line, before a fallback chain asks a model again or moves to the next one: any
   * partial reply shown so far is void (a live view starts over).
   */
  onRetry?: (note: string) => void;
}

/** A model call's outcome, whichever API answered. */
export interface ModelOutcome {
  id: string;
  model: string;
  content: string | null;
  toolCalls: StreamedToolCall[];
  reasoning: ReasoningBlock[];
  usage: TokenUsage;
  cost: number;
  truncated: boolean;
  latencyMs: number;
  /** With a fallback chain that moved: the chain's model that answered (`anthropic/…`). */
  answeredBy?: string;
  /** With a fallback chain that moved: the models passed over before it, and why. */
  fallbacks?: SkippedModel[];
}

type Clients = { kind: 'openai'; client: OpenAI } | { kind: 'anthropic'; client: Anthropic };

/**
 * Anthropic's SDK, loaded at a worker's first Anthropic call: most of a worker's start-up time when
 * loaded up front, and a worker serving OpenAI-compatible models never needs it.
 */
let anthropicSdk: typeof Anthropic | undefined;
async function loadAnthropic(): Promise<typeof Anthropic> {
  anthropicSdk ??= (await import('@anthropic-ai/sdk')).default;
  return anthropicSdk;
}

/** Worker-side model access: clients per endpoint, prices, one-time warnings; keys never leave it. */
export class ModelClients {
  private readonly clients = new Map<string, Clients>();
  private readonly secrets: string[];
  private readonly prices: Record<string, Price>;
  private readonly warned = new Set<string>();
  private readonly effort: ReasoningEffort | undefined;

  /**
   * @param models - The worker's model settings (keys, LLM_* settings, FAHEEM_PRICES), read once at its entry point.
   * @param warn - Where one-time warnings go (an unpriced or deprecated model); default stderr.
   */
  constructor(
    private readonly models: ModelSettings,
    private readonly warn: (line: string) => void = (line) => console.warn(`faheem worker: ${line}`),
    /** Fallback chains' cool-downs (one per worker). */
    private readonly coolDowns = new CoolDowns(),
  ) {
    this.secrets = [...models.secrets];
    this.prices = priceTable(models);
    this.effort = models.reasoningEffort;
    // The settings that are set but ignored (a reasoning effort or wire API it does not know, an entry of FAHEEM_ALLOWED_BASE_URLS that is no URL).
    for (const line of models.warnings) this.warn(line);
  }

  /** Resolves the conversation's model (the first of its chain); a configuration error is not retried. */
  resolve(llm: LLMSpec): ResolvedModel {
    try {
      return resolveModel(chainOf(llm, this.models.model)[0], llm.baseUrl, this.models);
    } catch (err) {
      if (err instanceof ModelConfigError) throw failure(FAILURE.ModelConfigError, err.message);
      throw err;
    }
  }

  /** The endpoint and an OpenAI-compatible client for a conversation's model (doctor's check uses it). */
  get(llm: LLMSpec): { resolved: ResolvedModel; client: OpenAI } {
    const resolved = this.resolve(llm);
    return { resolved, client: this.openai(resolved) };
  }

  private openai(resolved: ResolvedModel): OpenAI {
    const key = `openai\n${resolved.baseUrl}\n${resolved.apiKey}`;
    const found = this.clients.get(key);
    if (found?.kind === 'openai') return found.client;
    // Temporal retries (visible in the UI), not the client library.
    const client = new OpenAI({ apiKey: resolved.apiKey, baseURL: resolved.baseUrl, maxRetries: 0, timeout: 9 * 60_000 });
    this.clients.set(key, { kind: 'openai', client });
    return client;
  }

  private async anthropic(resolved: ResolvedModel): Promise<Anthropic> {
    const key = `anthropic\n${resolved.baseUrl}\n${resolved.apiKey}`;
    const found = this.clients.get(key);
    if (found?.kind === 'anthropic') return found.client;
    const Sdk = await loadAnthropic();
    const client = new Sdk({
      apiKey: resolved.apiKey,
      baseURL: anthropicBaseUrl(resolved.baseUrl),
      maxRetries: 0,
      timeout: 9 * 60_000,
    });
    this.clients.set(key, { kind: 'anthropic', client });
    return client;
  }

  /** The reasoning effort of a call: the conversation's, else the worker's LLM_REASONING_EFFORT. */
  effortFor(llm: LLMSpec): ReasoningEffort | undefined {
    return llm.reasoningEffort ?? this.effort;
  }

  /** Warns once per key (a model without a price, a deprecated model). */
  private once(key: string, line: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(line);
  }

  /**
   * One streamed model call: Anthropic models through the Messages API (prompt caching, thinking),
   * the others through the Responses API or chat completions (see {@link wireApiFor}). Aborts when `signal` does; failures are Temporal's.
   */
  async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelOutcome> {
    const chain = chainOf(request.llm, this.models.model);
    if (chain.length > 1) return this.completeChain(chain, request, signal);
    return this.completeWith(this.resolve(request.llm), request, signal);
  }

  /**
   * One call along a fallback chain: each model gets two quick tries (QUICK_TRIES), and a failure
   * that may pass (429, 5xx, 529, unreachable) moves the call to the next model; any other failure
   * ends it as for one model. Models that failed lately are passed over (their cool-down). The
   * conversation's base URL is the first model's; fallbacks resolve from the worker's settings.
   */
  private async completeChain(chain: readonly string[], request: ModelRequest, signal: AbortSignal): Promise<ModelOutcome> {
    const first = this.resolve(request.llm);
    const models = chain.map((name, i): ResolvedModel | { error: string } => {
      if (i === 0) return first;
      try {
        return resolveModel(name, undefined, this.models, { firstEndpoint: first.baseUrl });
      } catch (err) {
        if (err instanceof ModelConfigError) return { error: this.redact(err.message) };
        throw err;
      }
    });
    const keyOf = (m: ResolvedModel) => `${m.provider}\n${m.baseUrl}\n${m.apiModel}`;
    const cooling = models.map((m) => ('error' in m ? undefined : this.coolDowns.cooling(keyOf(m))));
    const reasons = new Map<number, string>();
    const order = callOrder(chain.length, (j) => cooling[j] !== undefined);
    for (const [at, i] of order.entries()) {
      const m = models[i]!;
      if ('error' in m) {
        reasons.set(i, reasonLine(m.error));
        continue;
      }
      for (let tries = 1; ; tries++) {
        try {
          const outcome = await this.completeWith(m, request, signal);
          this.coolDowns.clear(keyOf(m));
          if (i === 0) return outcome;
          const fallbacks = chain.slice(0, i).map((model, j): SkippedModel => {
            const c = cooling[j];
            return { model, reason: reasons.get(j) ?? (c ? coolingReason(c.until, c.reason) : 'passed over') };
          });
          return { ...outcome, answeredBy: chain[i]!, fallbacks };
        } catch (err) {
          if (signal.aborted || !(err instanceof ApplicationFailure) || !movesOn(err.type ?? undefined)) throw err;
          const reason = reasonLine(err.message);
          const wait = quickRetryDelay(tries, retryDelayMs(err));
          if (wait === undefined) {
            reasons.set(i, reason);
            this.coolDowns.mark(keyOf(m), reason);
            const next = order.slice(at + 1).find((k) => !('error' in models[k]!));
            if (next !== undefined) request.onRetry?.(`${chain[i]} is unavailable (${reason}): trying ${chain[next]}`);
            break;
          }
          request.onRetry?.(`${chain[i]} is unavailable (${reason}): asking it again in ${(wait / 1000).toFixed(1)} s`);
          await sleep(wait, signal);
        }
      }
    }
    const why = chain.map(
      (model, i) => `${model}: ${reasons.get(i) ?? (cooling[i] ? coolingReason(cooling[i].until, cooling[i].reason) : 'not tried')}`,
    );
    throw failure(FAILURE.ModelUnavailable, `every model of the fallback chain is unavailable: ${why.join('; ')}`);
  }

  /** One call to one resolved model. */
  private async completeWith(resolved: ResolvedModel, request: ModelRequest, signal: AbortSignal): Promise<ModelOutcome> {
    const lifecycle = resolved.provider === 'anthropic' ? modelLifecycle(resolved.apiModel) : undefined;
    if (lifecycle) this.once(`lifecycle:${resolved.apiModel}`, lifecycleWarning(lifecycle));
    const facts = modelFacts(resolved.apiModel, resolved.provider, this.prices);
    const maxTokens = maxOutputTokens(this.models, facts.contextWindow);
    const started = performance.now();
    try {
      const wire = wireApiFor(resolved, request.llm.wireApi, this.models);
      const reply =
        resolved.provider === 'anthropic'
          ? await this.streamAnthropic(resolved, request, maxTokens, signal, lifecycle !== undefined)
          : wire === 'responses'
            ? await this.streamResponses(resolved, request, maxTokens, signal)
            : await this.streamOpenAI(resolved, request, maxTokens, signal);
      if (!reply.complete) throw failure(FAILURE.ModelBadResponse, 'the model stream ended before the reply did');
      const usage: TokenUsage = {
        promptTokens: reply.inputTokens + reply.cacheReadTokens + reply.cacheWriteTokens,
        completionTokens: reply.outputTokens,
        cacheReadTokens: reply.cacheReadTokens,
        cacheWriteTokens: reply.cacheWriteTokens,
      };
      const model = reply.model || resolved.apiModel;
      return {
        id: reply.id,
        model,
        content: reply.text === '' ? null : reply.text,
        toolCalls: reply.toolCalls,
        reasoning: reply.reasoning,
        usage,
        cost: this.cost(resolved, usage),
        truncated: reply.truncated,
        latencyMs: Math.round(performance.now() - started),
      };
    } catch (err) {
      throw this.failure(err, resolved, signal);
    }
  }

  /** The call's cost at list prices; a model with no known price is said once and counts 0. */
  cost(resolved: ResolvedModel, usage: TokenUsage): number {
    if (resolved.apiModel === SCRIPTED_DEMO) return 0; // the offline stand-in is free: nothing to warn of
    const cost = costOf(resolved.apiModel, usage, this.prices, resolved.provider);
    if (cost === undefined) {
      this.once(
        `price:${resolved.apiModel}`,
        `no price known for model ${resolved.apiModel}: its calls count as $0 (set FAHEEM_PRICES='{"${resolved.apiModel}":{"input":…,"output":…}}' in USD per million tokens)`,
      );
      return 0;
    }
    return cost;
  }

  private async streamAnthropic(
    resolved: ResolvedModel,
    request: ModelRequest,
    maxTokens: number,
    signal: AbortSignal,
    deprecated: boolean,
  ): Promise<AssembledReply> {
    const output = request.output;
    const prompt = anthropicPrompt(request.messages, request.tools);
    // The answer tool goes last, so the cached prefix of the other tools stays the same.
    // A tool of the user's with the answer tool's name would be a second tool of one name (a 400): it stays out.
    const tools = output ? [...prompt.tools.filter((t) => t.name !== OUTPUT_TOOL), outputTool(output.schema)] : prompt.tools;
    const thinking =
      thinkingAllowed(prompt.messages) && !output?.force
        ? thinkingFor(request.noReasoning ? undefined : this.effortFor(request.llm), maxTokens, resolved.apiModel)
        : undefined;
    const body: Anthropic.Messages.MessageCreateParamsStreaming = {
      model: resolved.apiModel,
      max_tokens: maxTokens,
      system: prompt.system,
      messages: prompt.messages,
      ...(tools.length ? { tools } : {}),
      ...(output?.force ? { tool_choice: { type: 'tool', name: OUTPUT_TOOL } } : {}),
      // Thinking takes the default temperature only.
      ...(thinking ?? (request.llm.temperature !== undefined ? { temperature: request.llm.temperature } : {})),
      stream: true,
    };
    const client = await this.anthropic(resolved);
    // messages.create prints the SDK's deprecation warning on every call; a deprecated model was
    // warned about once already (complete()), so its calls are posted as create would post them.
    const stream = deprecated
      ? await client.post<Stream<Anthropic.Messages.RawMessageStreamEvent>>('/v1/messages', { body, stream: true, signal })
      : await client.messages.create(body, { signal });
    const assembler = new AnthropicAssembler(request.onPartial);
    for await (const event of stream) assembler.push(event);
    return output ? answerFromTool(assembler.result(), output.schema) : assembler.result();
  }

  /**
   * One call through the Responses API: `store: false` with the reasoning items' encrypted content
   * asked for and sent back, summaries streamed as thinking, one prompt cache per conversation.
   */
  private async streamResponses(
    resolved: ResolvedModel,
    request: ModelRequest,
    maxTokens: number,
    signal: AbortSignal,
  ): Promise<AssembledReply> {
    const effort = request.noReasoning ? undefined : this.effortFor(request.llm);
    const prompt = responsesPrompt(request.messages, request.tools);
    // Encrypted reasoning is refused for models that do not reason; they are sent none to send back.
    const reasons = isReasoningModel(resolved.apiModel) || effort !== undefined;
    const body: OpenAI.Responses.ResponseCreateParamsStreaming = {
      model: resolved.apiModel,
      ...(prompt.instructions ? { instructions: prompt.instructions } : {}),
      input: prompt.input,
      ...(prompt.tools.length ? { tools: prompt.tools, parallel_tool_calls: true } : {}),
      store: false,
      ...(reasons ? { include: ['reasoning.encrypted_content'] } : {}),
      ...(effort ? { reasoning: { effort, summary: 'auto' } } : {}),
      ...(request.llm.temperature !== undefined ? { temperature: request.llm.temperature } : {}),
      ...(request.output
        ? {
            text: {
              format: {
                type: 'json_schema',
                name: OUTPUT_TOOL,
                schema: wireSchema(request.output.schema),
                strict: strictCompatible(request.output.schema),
              },
            },
          }
        : {}),
      max_output_tokens: maxTokens,
      prompt_cache_key: request.conversationId,
      stream: true,
    };
    const stream = await this.openai(resolved).responses.create(body, { signal });
    const assembler = new ResponsesAssembler(request.onPartial);
    for await (const event of stream) assembler.push(event);
    if (assembler.failure) {
      const { code, message } = assembler.failure;
      const text = this.redact(`the model failed to answer (${code ?? 'no code'}): ${message}`);
      // The server's own trouble (or a rate limit) passes; what the request itself caused does not.
      if (!code || /server_error|rate_limit|overloaded|timeout/.test(code)) throw failure(FAILURE.ModelUnavailable, text);
      throw failure(FAILURE.ModelRequestRejected, text);
    }
    return assembler.result();
  }

  private async streamOpenAI(
    resolved: ResolvedModel,
    request: ModelRequest,
    maxTokens: number,
    signal: AbortSignal,
  ): Promise<AssembledReply> {
    const ownEndpoint = resolved.provider === 'openai' && resolved.baseUrl === PROVIDERS.openai?.baseUrl;
    const effort = request.noReasoning ? undefined : this.effortFor(request.llm);
    if (request.tools.length && chatRefusesTools(resolved.apiModel)) {
      this.once(
        `chat-tools:${resolved.apiModel}`,
        `${resolved.apiModel} reasons by default and chat completions refuses function tools for it (HTTP 400): set LLM_WIRE_API=responses (or new LLM({ wireApi: 'responses' })) to call it through the Responses API`,
      );
    }
    // Our reasoning field (and a function call's Responses item id) has no place in chat completions;
    // images become image_url parts.
    const messages = chatCompletionsMessages(request.messages);
    const stream = await this.openai(resolved).chat.completions.create(
      {
        model: resolved.apiModel,
        messages,
        ...(request.tools.length ? { tools: request.tools.map(functionTool) } : {}),
        ...(request.llm.temperature !== undefined ? { temperature: request.llm.temperature } : {}),
        // OpenAI's own endpoint wants max_completion_tokens (reasoning models refuse max_tokens); others know max_tokens.
        ...(ownEndpoint ? { max_completion_tokens: maxTokens, prompt_cache_key: request.conversationId } : { max_tokens: maxTokens }),
        ...(effort ? { reasoning_effort: effort } : {}),
        ...(request.output
          ? {
              response_format: {
                type: 'json_schema',
                json_schema: {
                  name: OUTPUT_TOOL,
                  schema: wireSchema(request.output.schema),
                  strict: strictCompatible(request.output.schema),
                },
              },
            }
          : {}),
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal },
    );
    const assembler = new OpenAIAssembler(request.onPartial);
    for await (const chunk of stream) assembler.push(chunk);
    return assembler.result();
  }

  /** The error to throw for a failed call: cancelled, context overflow, not retryable (4xx), or retryable; keys masked. */
  failure(err: unknown, resolved: ResolvedModel, signal: AbortSignal): Error {
    if (signal.aborted) return new CancelledFailure('model call cancelled');
    if (err instanceof ApplicationFailure) return err;
    const secrets = [...this.secrets, resolved.apiKey];
    if (
      (err instanceof OpenAI.APIError || (anthropicSdk !== undefined && err instanceof anthropicSdk.APIError)) &&
      err.status !== undefined
    ) {
      // Refused for want of the key the worker held back: say so, and how to allow the endpoint.
      const withheld = resolved.keyWithheld && (err.status === 401 || err.status === 403) ? ` (${withheldKeyHint(resolved.baseUrl)})` : '';
      const text = redact(`HTTP ${err.status} from ${resolved.baseUrl}: ${apiMessage(err)}${withheld}`, secrets);
      if (isContextOverflow(err.status, text)) return failure(FAILURE.ContextWindowExceeded, text);
      if (NOT_RETRYABLE.has(err.status)) return failure(FAILURE.ModelRequestRejected, text);
      const wait = retryAfterMs(err.headers as Headers | undefined);
      // A provider that says when to come back (with a 429, 503 or 529, usually) is asked again then.
      if (wait !== undefined) return failure(FAILURE.ModelUnavailable, text, { nextRetryDelay: wait });
      return failure(FAILURE.ModelUnavailable, text);
    }
    return failure(FAILURE.ModelUnavailable, redact(`could not reach ${resolved.baseUrl}: ${networkReason(err)}`, secrets));
  }

  /** Masks the worker's secrets in a text. */
  redact(text: string): string {
    return redact(text, this.secrets);
  }
}

/** What the network said, in words (the SDKs say only "Connection error."): `connection refused (ECONNREFUSED)`. */
export function networkReason(err: unknown): string {
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name lookup failed',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
    UND_ERR_SOCKET: 'connection closed',
  };
  // The code sits on the error or down its causes (the SDK's error, fetch's TypeError, the socket's).
  const chain: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && words[code]) return `${words[code]} (${code})`;
    if (e instanceof AggregateError) {
      const inner: unknown = e.errors.find((x: unknown) => typeof (x as NodeJS.ErrnoException | undefined)?.code === 'string');
      if (inner) return networkReason(inner);
    }
    const text = e.message.replace(/\.$/, '');
    if (text && !chain.includes(text)) chain.push(text);
  }
  // No code: the messages down the chain ("Connection error: fetch failed: bad port").
  return chain.length ? chain.join(': ') : String(err);
}

/** The API's own message (`error.message` in the body) rather than the SDK's status-prefixed one. */
function apiMessage(err: { message: string; error?: unknown }): string {
  const body = err.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const nested =
    typeof body?.error?.message === 'string' ? body.error.message : typeof body?.message === 'string' ? body.message : undefined;
  return nested ?? err.message;
}

/**
 * The SDK appends `/v1/messages` itself: a base URL ending in `/v1` (as the OpenAI-compatibility
 * endpoint's did) loses it.
 */
export function anthropicBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The tool an Anthropic model gives its final answer with: its input is the answer. */
function outputTool(schema: OutputSchema): Anthropic.Messages.Tool {
  const input = wireSchema(schema);
  // A tool's input is an object: an answer of another type is wrapped in `{ answer }` (answerFromTool unwraps it).
  const objectSchema = input.type === 'object';
  return {
    name: OUTPUT_TOOL,
    description: 'Give the final answer: its input is the answer, matching the output schema. Call it once the task is done.',
    input_schema: (objectSchema
      ? input
      : { type: 'object', properties: { answer: input }, required: ['answer'] }) as Anthropic.Messages.Tool.InputSchema,
  };
}

/**
 * A reply that called the answer tool is the answer: its input as JSON text, and no tool calls
 * (calls beside it are dropped: the model said it is done).
 */
export function answerFromTool(reply: AssembledReply, schema: OutputSchema): AssembledReply {
  const call = reply.toolCalls.find((c) => c.name === OUTPUT_TOOL);
  if (!call) return reply;
  let text = call.arguments;
  try {
    const input = JSON.parse(call.arguments) as { answer?: unknown };
    text = JSON.stringify(wireSchema(schema).type === 'object' ? input : input?.answer);
  } catch {
    // not JSON: the check says so
  }
  return { ...reply, text, toolCalls: [] };
}

const functionTools = new WeakMap<ToolSpec, OpenAI.Chat.Completions.ChatCompletionTool>();

/** A tool in the chat-completions `tools` format (made once per spec object). Not the registry's: the CLI loads this module and must not load every tool. */
function functionTool(spec: ToolSpec): OpenAI.Chat.Completions.ChatCompletionTool {
  let f = functionTools.get(spec);
  if (!f) {
    f = { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
    functionTools.set(spec, f);
  }
  return f;
}

/** A failure's own "come back in" (Retry-After), in ms. */
function retryDelayMs(err: ApplicationFailure): number | undefined {
  const delay = err.nextRetryDelay;
  return delay === undefined || delay === null ? undefined : msToNumber(delay);
}

/** Waits `ms`, or throws as the call is cancelled. */
async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new CancelledFailure('model call cancelled');
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
  if (signal.aborted) throw new CancelledFailure('model call cancelled');
}

/** The longest Retry-After we honour; a provider asking for more is asked again after this. */
const MAX_RETRY_AFTER_MS = 120_000;

/** `retry-after-ms`, or `retry-after` in seconds or as an HTTP date; undefined when absent or bad. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const header = (name: string) => headers?.get(name)?.trim() || undefined;
  const ms = Number(header('retry-after-ms') ?? NaN);
  let wait = Number.isFinite(ms) ? ms : undefined;
  const after = header('retry-after');
  if (wait === undefined && after) {
    const seconds = Number(after);
    wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - now;
  }
  if (wait === undefined || !Number.isFinite(wait) || wait < 0) return undefined;
  return Math.min(Math.max(wait, 100), MAX_RETRY_AFTER_MS);
}
