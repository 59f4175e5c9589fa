// Activity: one chat-completions call. Heartbeats while waiting so that a pause (activity
// cancellation) aborts the HTTP request at once and a dead worker is noticed quickly.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { costOf, priceTable } from '../llm/prices.js';
import { ModelConfigError, resolveModel } from '../llm/provider.js';
import { redact, secretValues } from '../security/redact.js';
import { toolDefinitions } from '../tools/schemas.js';
import { TranscriptCache } from '../conversation/read-events.js';
import { buildMessages } from '../workflows/prompt.js';
import type { ModelCallInput, ModelCallResult } from '../types.js';

const HEARTBEAT_EVERY_MS = 50;
// Client errors a retry cannot fix: the conversation goes to `error` with the reason.
const NOT_RETRYABLE = new Set([400, 401, 403, 404, 422]);

export function createCallModel(env: NodeJS.ProcessEnv) {
  const transcripts = new TranscriptCache();
  const clients = new Map<string, OpenAI>();
  const secrets = secretValues(env);
  const prices = priceTable(env);

  return async function callModel(input: ModelCallInput): Promise<ModelCallResult> {
    const ctx = Context.current();
    let resolved;
    try {
      resolved = resolveModel(input.llm.model, input.llm.baseUrl, env);
    } catch (err) {
      if (err instanceof ModelConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ModelConfigError');
      throw err;
    }
    const clientKey = `${resolved.baseUrl}\n${resolved.apiKey}`;
    let client = clients.get(clientKey);
    if (!client) {
      // Temporal retries (visible in the UI), not the client library.
      client = new OpenAI({ apiKey: resolved.apiKey, baseURL: resolved.baseUrl, maxRetries: 0, timeout: 9 * 60_000 });
      clients.set(clientKey, client);
    }
    const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    ctx.heartbeat();
    try {
      const events = await transcripts.read(ctx.client.workflow.getHandle(input.conversationId), input.conversationId, input.eventCount);
      const messages = buildMessages(events, input.systemPrompt);
      const started = performance.now();
      const response = await client.chat.completions.create(
        {
          model: resolved.apiModel,
          messages,
          ...(input.tools.length ? { tools: toolDefinitions(input.tools) } : {}),
          ...(input.llm.temperature !== undefined ? { temperature: input.llm.temperature } : {}),
        },
        { signal: ctx.cancellationSignal },
      );
      const latencyMs = Math.round(performance.now() - started);
      const message = response.choices?.[0]?.message;
      if (!message) throw ApplicationFailure.retryable('the model answered with no choices', 'ModelBadResponse');
      const toolCalls = (message.tool_calls ?? []).flatMap((call, i) =>
        call.type === 'function'
          ? [{ id: call.id || `call_${input.step}_${i}`, name: call.function.name, arguments: call.function.arguments ?? '' }]
          : [],
      );
      const usage = {
        promptTokens: response.usage?.prompt_tokens ?? 0,
        completionTokens: response.usage?.completion_tokens ?? 0,
        cacheReadTokens: response.usage?.prompt_tokens_details?.cached_tokens ?? 0,
      };
      return {
        id: response.id || `reply_${input.step}`,
        model: response.model || resolved.apiModel,
        content: message.content ?? null,
        toolCalls,
        usage,
        cost: costOf(resolved.apiModel, usage, prices),
        latencyMs,
      };
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('model call cancelled');
      if (err instanceof ApplicationFailure) throw err;
      if (err instanceof OpenAI.APIError && err.status !== undefined) {
        const text = redact(`HTTP ${err.status} from ${resolved.baseUrl}: ${err.message}`, [...secrets, resolved.apiKey]);
        if (NOT_RETRYABLE.has(err.status)) throw ApplicationFailure.nonRetryable(text, 'ModelRequestRejected');
        throw ApplicationFailure.retryable(text, 'ModelUnavailable');
      }
      const text = redact(`could not reach ${resolved.baseUrl}: ${(err as Error).message}`, [...secrets, resolved.apiKey]);
      throw ApplicationFailure.retryable(text, 'ModelUnavailable');
    } finally {
      clearInterval(beat);
    }
  };
}
