// Activity: one chat-completions call. Heartbeats while waiting so that a pause (activity
// cancellation) aborts the HTTP request at once and a dead worker is noticed quickly.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TranscriptCache } from '../conversation/read-events.js';
import { HEARTBEAT_EVERY_MS, type ModelClients } from '../llm/client.js';
import { toolDefinitions } from '../tools/schemas.js';
import type { ModelCallInput, ModelCallResult } from '../types.js';
import { buildMessages } from '../workflows/prompt.js';

export function createCallModel(models: ModelClients, transcripts: TranscriptCache) {
  return async function callModel(input: ModelCallInput): Promise<ModelCallResult> {
    const ctx = Context.current();
    const { resolved, client } = models.get(input.llm);
    const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    ctx.heartbeat();
    try {
      // The transcript is read here, not passed in, so that history holds each event once.
      const events = await transcripts.read(ctx.client.workflow.getHandle(input.conversationId), input.eventCount, ctx.info.attempt);
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
      return {
        id: response.id || `reply_${input.step}`,
        model: response.model || resolved.apiModel,
        content: message.content ?? null,
        toolCalls,
        ...models.usage(response, resolved),
        latencyMs,
      };
    } catch (err) {
      throw models.failure(err, resolved, ctx.cancellationSignal);
    } finally {
      clearInterval(beat);
    }
  };
}
