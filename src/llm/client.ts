// What the model-calling activities share: resolving the model, one OpenAI client per endpoint,
// usage and cost, and turning failures into Temporal's terms (retry or not, cancelled).
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { redact, secretValues } from '../security/redact.js';
import type { LLMSpec, TokenUsage } from '../types.js';
import { costOf, priceTable } from './prices.js';
import { ModelConfigError, resolveModel, type ResolvedModel } from './provider.js';

// Client errors a retry cannot fix: the conversation goes to `error` with the reason.
const NOT_RETRYABLE = new Set([400, 401, 403, 404, 422]);

/** Model activities heartbeat this often so that a pause (cancellation) reaches them quickly. */
export const HEARTBEAT_EVERY_MS = 50;

export class ModelClients {
  private readonly clients = new Map<string, OpenAI>();
  private readonly secrets: string[];
  private readonly prices: ReturnType<typeof priceTable>;

  constructor(private readonly env: NodeJS.ProcessEnv) {
    this.secrets = secretValues(env);
    this.prices = priceTable(env);
  }

  /** The endpoint and client for a conversation's model; a configuration error is not retried. */
  get(llm: LLMSpec): { resolved: ResolvedModel; client: OpenAI } {
    let resolved: ResolvedModel;
    try {
      resolved = resolveModel(llm.model, llm.baseUrl, this.env);
    } catch (err) {
      if (err instanceof ModelConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ModelConfigError');
      throw err;
    }
    const key = `${resolved.baseUrl}\n${resolved.apiKey}`;
    let client = this.clients.get(key);
    if (!client) {
      // Temporal retries (visible in the UI), not the client library.
      client = new OpenAI({ apiKey: resolved.apiKey, baseURL: resolved.baseUrl, maxRetries: 0, timeout: 9 * 60_000 });
      this.clients.set(key, client);
    }
    return { resolved, client };
  }

  usage(response: OpenAI.Chat.Completions.ChatCompletion, resolved: ResolvedModel): { usage: TokenUsage; cost: number } {
    const usage = {
      promptTokens: response.usage?.prompt_tokens ?? 0,
      completionTokens: response.usage?.completion_tokens ?? 0,
      cacheReadTokens: response.usage?.prompt_tokens_details?.cached_tokens ?? 0,
    };
    return { usage, cost: costOf(resolved.apiModel, usage, this.prices) };
  }

  /** The error to throw for a failed call: cancelled, not retryable (4xx), or retryable; keys masked. */
  failure(err: unknown, resolved: ResolvedModel, signal: AbortSignal): Error {
    if (signal.aborted) return new CancelledFailure('model call cancelled');
    if (err instanceof ApplicationFailure) return err;
    const secrets = [...this.secrets, resolved.apiKey];
    if (err instanceof OpenAI.APIError && err.status !== undefined) {
      const text = redact(`HTTP ${err.status} from ${resolved.baseUrl}: ${err.message}`, secrets);
      if (NOT_RETRYABLE.has(err.status)) return ApplicationFailure.nonRetryable(text, 'ModelRequestRejected');
      const wait = retryAfterMs(err.headers);
      // A provider that says when to come back (with a 429 or 503, usually) is asked again then.
      if (wait !== undefined) return ApplicationFailure.create({ message: text, type: 'ModelUnavailable', nextRetryDelay: wait });
      return ApplicationFailure.retryable(text, 'ModelUnavailable');
    }
    return ApplicationFailure.retryable(redact(`could not reach ${resolved.baseUrl}: ${(err as Error).message}`, secrets), 'ModelUnavailable');
  }

  redact(text: string): string {
    return redact(text, this.secrets);
  }
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
