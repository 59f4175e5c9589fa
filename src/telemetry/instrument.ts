// The agent in the operator's tools: each model call and each host tool call, wrapped inside its
// activity, becomes a GenAI span (`chat <model>`, `execute_tool <tool>`, the OpenTelemetry GenAI
// semantic conventions) and counts in our metrics. With no tracer provider registered (no OTLP
// endpoint configured) the API's tracer is a no-op, so a span costs nothing worth measuring.
import { chainOf } from '../models/workflow/model-chain.js';
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { ModelCallInput, ModelCallResult, RunToolInput, RunToolResult } from '../core/types.js';
import type { FaheemMetrics } from './metrics.js';
import type { TelemetrySettings } from '../settings/telemetry.js';

/** The tracer our spans come from (the global provider's; a no-op until one is registered). */
const tracer = () => trace.getTracer('faheem');

/** `openai/gpt-4o` → provider `openai`, model `gpt-4o`; a bare name is an OpenAI-compatible model. */
export function splitModel(spec: string): { provider: string; model: string } {
  const slash = spec.indexOf('/');
  return slash > 0 ? { provider: spec.slice(0, slash), model: spec.slice(slash + 1) } : { provider: 'openai', model: spec };
}

/** Why the model stopped, as `gen_ai.response.finish_reasons` names it. */
export function finishReason(reply: Pick<ModelCallResult, 'toolCalls' | 'truncated'>): string {
  if (reply.truncated) return 'length';
  return reply.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** The GenAI attributes of a finished model call (no content). */
export function chatAttributes(requested: { provider: string; model: string }, conversationId: string, reply: ModelCallResult): Attributes {
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': requested.provider,
    'gen_ai.request.model': requested.model,
    'gen_ai.response.model': splitModel(reply.model).model,
    'gen_ai.response.id': reply.id,
    'gen_ai.response.finish_reasons': [finishReason(reply)],
    'gen_ai.usage.input_tokens': reply.usage.promptTokens,
    'gen_ai.usage.output_tokens': reply.usage.completionTokens,
    'gen_ai.usage.cache_read.input_tokens': reply.usage.cacheReadTokens,
    'gen_ai.usage.cache_creation.input_tokens': reply.usage.cacheWriteTokens ?? 0,
    'gen_ai.conversation.id': conversationId,
  };
}

/** What the wrappers need from the worker. */
export interface InstrumentOptions {
  /** Whether spans may carry message content (`captureContent`). */
  telemetry: Pick<TelemetrySettings, 'captureContent'>;
  /** The worker's model (LLM_MODEL), for a call that names none. */
  workerModel: string | undefined;
  metrics: FaheemMetrics;
}

function activityConversationId(fallback: string): string {
  try {
    return Context.current().info.workflowExecution?.workflowId ?? fallback;
  } catch {
    return fallback; // called outside an activity (a unit test)
  }
}

async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      span.setAttribute('error.type', (err as Error).name || 'Error');
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The model-call activity, with its `chat <model>` span and the model metrics. */
export function instrumentCallModel(
  callModel: (input: ModelCallInput) => Promise<ModelCallResult>,
  options: InstrumentOptions,
): (input: ModelCallInput) => Promise<ModelCallResult> {
  const content = options.telemetry.captureContent;
  return async (input) => {
    // A fallback chain's span names its first model; the response's model says which answered.
    const requested = splitModel(chainOf(input.llm, options.workerModel)[0] ?? 'openai/gpt-4o-mini');
    const conversationId = activityConversationId(input.conversationId);
    return inSpan(
      `chat ${requested.model}`,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': requested.provider,
        'gen_ai.request.model': requested.model,
        'gen_ai.conversation.id': conversationId,
      },
      async (span) => {
        const reply = await callModel(input);
        span.setAttributes(chatAttributes(requested, conversationId, reply));
        if (content) {
          span.setAttribute(
            'gen_ai.output.messages',
            JSON.stringify([
              {
                role: 'assistant',
                parts: [
                  ...(reply.content ? [{ type: 'text', content: reply.content }] : []),
                  ...reply.toolCalls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments })),
                ],
                finish_reason: finishReason(reply),
              },
            ]),
          );
        }
        options.metrics.modelCall(reply.model || requested.model, reply.usage, reply.cost);
        return reply;
      },
    );
  };
}

/** The tool activity, with its `execute_tool <tool>` span and the tool metrics. */
export function instrumentRunTool(
  runTool: (input: RunToolInput) => Promise<RunToolResult>,
  options: InstrumentOptions,
): (input: RunToolInput) => Promise<RunToolResult> {
  const content = options.telemetry.captureContent;
  return async (input) => {
    const conversationId = activityConversationId(input.conversationId);
    return inSpan(
      `execute_tool ${input.tool}`,
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': input.tool,
        'gen_ai.tool.call.id': input.toolCallId,
        'gen_ai.tool.type': input.mcp ? 'extension' : 'function',
        'gen_ai.conversation.id': conversationId,
        ...(content ? { 'gen_ai.tool.call.arguments': JSON.stringify(input.arguments) } : {}),
      },
      async (span) => {
        let result: RunToolResult;
        try {
          result = await runTool(input);
        } catch (err) {
          options.metrics.toolCall(input.tool, 'error');
          throw err;
        }
        options.metrics.toolCall(input.tool, result.isError ? 'error' : 'ok');
        if (result.isError) span.setAttribute('error.type', 'tool_error');
        if (result.exitCode !== undefined) span.setAttribute('process.exit.code', result.exitCode);
        if (content) span.setAttribute('gen_ai.tool.call.result', result.content);
        return result;
      },
    );
  };
}
