// Activity: summarise the older part of a conversation so the model's context stays bounded.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { TranscriptCache } from '../conversation/read-events.js';
import { costOf, priceTable } from '../llm/prices.js';
import { ModelConfigError, resolveModel } from '../llm/provider.js';
import { redact, secretValues } from '../security/redact.js';
import type { CondenseInput, CondenseResult, ConversationEvent } from '../types.js';

export const CONDENSER_PROMPT = `You condense the history of a coding agent's work so it can continue with less context.
Write a summary that keeps: the user's goals and constraints, what was done (files changed, commands
run and their important results), what failed and why, and what remains to do. Be concise and concrete.`;

function render(e: ConversationEvent): string {
  switch (e.kind) {
    case 'message':
      return `${e.source === 'user' ? 'USER' : 'AGENT'}: ${e.text}`;
    case 'action':
      return `ACTION ${e.tool} ${JSON.stringify(e.arguments)}${e.thought ? ` (thinking: ${e.thought})` : ''}`;
    case 'observation':
      return `RESULT of ${e.tool}${e.isError ? ' (error)' : ''}: ${e.content.slice(0, 4000)}`;
    default:
      return '';
  }
}

export function createCondense(env: NodeJS.ProcessEnv) {
  const transcripts = new TranscriptCache(5);
  const secrets = secretValues(env);
  const prices = priceTable(env);

  return async function condense(input: CondenseInput): Promise<CondenseResult> {
    const ctx = Context.current();
    let resolved;
    try {
      resolved = resolveModel(input.llm.model, input.llm.baseUrl, env);
    } catch (err) {
      if (err instanceof ModelConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ModelConfigError');
      throw err;
    }
    const beat = setInterval(() => ctx.heartbeat(), 50);
    try {
      const events = await transcripts.read(ctx.client.workflow.getHandle(input.conversationId), input.conversationId, input.to);
      const body = events
        .filter((e) => e.index >= input.from && e.index < input.to)
        .map(render)
        .filter(Boolean)
        .join('\n');
      const client = new OpenAI({ apiKey: resolved.apiKey, baseURL: resolved.baseUrl, maxRetries: 0, timeout: 9 * 60_000 });
      const started = performance.now();
      const response = await client.chat.completions.create(
        {
          model: resolved.apiModel,
          messages: [
            { role: 'system', content: CONDENSER_PROMPT },
            { role: 'user', content: `${input.previousSummary ? `Earlier summary:\n${input.previousSummary}\n\n` : ''}Events to condense:\n${body}` },
          ],
        },
        { signal: ctx.cancellationSignal },
      );
      const usage = {
        promptTokens: response.usage?.prompt_tokens ?? 0,
        completionTokens: response.usage?.completion_tokens ?? 0,
        cacheReadTokens: response.usage?.prompt_tokens_details?.cached_tokens ?? 0,
      };
      return {
        summary: redact(response.choices?.[0]?.message?.content ?? '', secrets),
        usage,
        cost: costOf(resolved.apiModel, usage, prices),
        latencyMs: Math.round(performance.now() - started),
      };
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('condensation cancelled');
      if (err instanceof OpenAI.APIError && err.status !== undefined) {
        const text = redact(`HTTP ${err.status} from ${resolved.baseUrl}: ${err.message}`, [...secrets, resolved.apiKey]);
        if ([400, 401, 403, 404, 422].includes(err.status)) throw ApplicationFailure.nonRetryable(text, 'ModelRequestRejected');
        throw ApplicationFailure.retryable(text, 'ModelUnavailable');
      }
      throw ApplicationFailure.retryable(redact(`condensation failed: ${(err as Error).message}`, secrets), 'ModelUnavailable');
    } finally {
      clearInterval(beat);
    }
  };
}
