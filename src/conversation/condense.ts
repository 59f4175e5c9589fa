// Activity: summarise the older part of a conversation so the model's context stays bounded.
import { Context } from '@temporalio/activity';
import type { TranscriptCache } from './read-events.js';
import type { ModelClients } from '../models/client.js';
import type { CondenseInput, CondenseResult, ConversationEvent } from '../core/types.js';
import { streamModelCall } from '../models/call-model.js';

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

export function createCondense(models: ModelClients, transcripts: TranscriptCache, beatEveryMs?: number) {
  return async function condense(input: CondenseInput): Promise<CondenseResult> {
    const ctx = Context.current();
    const reply = await streamModelCall(
      models,
      async () => {
        const events = await transcripts.read(ctx.client.workflow.getHandle(input.conversationId), input.to, ctx.info.attempt);
        const body = events
          .filter((e) => e.index >= input.from && e.index < input.to)
          .map(render)
          .filter(Boolean)
          .join('\n');
        return {
          llm: input.llm,
          // A summary needs no reasoning: thinking stays off whatever the worker's default.
          noReasoning: true,
          messages: [
            { role: 'system', content: CONDENSER_PROMPT },
            {
              role: 'user',
              content: `${input.previousSummary ? `Earlier summary:\n${input.previousSummary}\n\n` : ''}Events to condense:\n${body}`,
            },
          ],
          tools: [],
          conversationId: input.conversationId,
        };
      },
      undefined,
      beatEveryMs,
    );
    return {
      summary: models.redact(reply.content ?? ''),
      usage: reply.usage,
      cost: reply.cost,
      latencyMs: reply.latencyMs,
      model: reply.model,
      ...(reply.fallbacks?.length ? { answeredBy: reply.answeredBy, fallbacks: reply.fallbacks } : {}),
    };
  };
}
