// What a model reply and a tool result become in the conversation: parsed arguments, observation
// events, usage added to the metrics, failure texts. Pure.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import type { ActionEvent, Metrics, ModelCallResult, SkippedModel, ToolResult } from '../../core/types.js';
import type { NewEvent } from './conversation-log.js';

/** A tool call's arguments: an object, or the raw text when it is not JSON (runTool reports it). */
export function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    // A JSON string is not an arguments object either; keep it apart from unparsable text.
    return typeof parsed === 'string' ? [parsed] : parsed;
  } catch {
    return raw;
  }
}

export function observation(action: ActionEvent, result: ToolResult): NewEvent {
  return {
    kind: 'observation',
    source: 'environment',
    tool: action.tool,
    toolCallId: action.toolCallId,
    content: result.content,
    isError: result.isError,
    ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
    // References only: the tool put the bytes in the object store.
    ...(result.images?.length ? { images: result.images } : {}),
  };
}

/** The metrics after one more model call (the last 100 calls are itemised, each with the model that answered). */
export function addUsage(
  m: Metrics,
  r: Pick<ModelCallResult, 'cost' | 'usage' | 'latencyMs'> & { model?: string; truncated?: boolean; fallbacks?: SkippedModel[] },
  step: number,
  kind: 'step' | 'condense',
): Metrics {
  const write = r.usage.cacheWriteTokens ?? 0;
  return {
    accumulatedCost: m.accumulatedCost + r.cost,
    promptTokens: m.promptTokens + r.usage.promptTokens,
    completionTokens: m.completionTokens + r.usage.completionTokens,
    cacheReadTokens: m.cacheReadTokens + r.usage.cacheReadTokens,
    // Metrics carried from before cache writes were counted have none.
    cacheWriteTokens: (m.cacheWriteTokens ?? 0) + write,
    llmCalls: m.llmCalls + 1,
    calls: [
      ...(m.calls ?? []),
      {
        step,
        kind,
        ...r.usage,
        cacheWriteTokens: write,
        cost: r.cost,
        latencyMs: r.latencyMs,
        ...(r.model ? { model: r.model } : {}),
        ...(r.truncated ? { truncated: true } : {}),
        ...(r.fallbacks?.length ? { fallbacks: r.fallbacks.map((s) => s.model) } : {}),
      },
    ].slice(-100),
  };
}

/** The event of a call that moved along its fallback chain (undefined: it did not move). */
export function fallbackEvent(r: { answeredBy?: string; fallbacks?: SkippedModel[] }, call: 'step' | 'condense'): NewEvent | undefined {
  if (!r.fallbacks?.length || !r.answeredBy) return undefined;
  return { kind: 'fallback', source: 'environment', model: r.answeredBy, skipped: r.fallbacks, call };
}

/** An activity's failure as one line: the real cause, not the wrapper. */
export function failureMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof TimeoutFailure) return `timed out (${e.timeoutType})`;
  if (e instanceof ApplicationFailure || e instanceof Error) return e.message;
  return String(e);
}
