// Our own Prometheus counters and histogram, made through the Temporal runtime's metric meter so that
// the runtime's one endpoint (`--metrics-port`, `/metrics`) serves them beside Temporal's worker
// metrics. Nothing here talks to Prometheus: a meter without an exporter records nothing.
import type { MetricMeter } from '@temporalio/common';

/** Token counts of one model call, as the model-call activity reports them. */
export interface CallUsage {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
}

/** What the worker counts. */
export interface FaheemMetrics {
  /** One model call: its tokens and its cost in USD. */
  modelCall(model: string, usage: CallUsage, costUsd: number): void;
  /** One tool call and how it ended. */
  toolCall(tool: string, outcome: ToolOutcome): void;
}

/** How a tool call ended, as the `outcome` label says it. */
export type ToolOutcome = 'ok' | 'error';

/** Metric names (the contract's). */
export const METRIC_NAMES = {
  modelCalls: 'faheem_model_calls_total',
  tokens: 'faheem_tokens_total',
  cost: 'faheem_cost_usd_total',
  toolCalls: 'faheem_tool_calls_total',
  stepDuration: 'faheem_step_duration_seconds',
} as const;

/**
 * The input tokens of a call without the cached ones: `promptTokens` counts every prompt token
 * (cache reads and writes among them), `faheem_tokens_total{type="input"}` only the uncached rest.
 */
export function tokenCounts(usage: CallUsage): { input: number; output: number; cache_read: number; cache_write: number } {
  const cacheRead = Math.max(0, Math.round(usage.cacheReadTokens ?? 0));
  const cacheWrite = Math.max(0, Math.round(usage.cacheWriteTokens ?? 0));
  return {
    input: Math.max(0, Math.round(usage.promptTokens) - cacheRead - cacheWrite),
    output: Math.max(0, Math.round(usage.completionTokens)),
    cache_read: cacheRead,
    cache_write: cacheWrite,
  };
}

/**
 * Our metrics on `meter` (the runtime's). Counters count whole numbers, so the running cost is a
 * float gauge that this process only ever raises: `faheem_cost_usd_total` per model, since the worker started.
 */
export function createMetrics(meter: MetricMeter): FaheemMetrics {
  const calls = meter.createCounter(METRIC_NAMES.modelCalls, undefined, 'Model calls made by this worker');
  const tokens = meter.createCounter(
    METRIC_NAMES.tokens,
    undefined,
    'Tokens of the model calls, by type (input, output, cache_read, cache_write)',
  );
  const cost = meter.createGauge(METRIC_NAMES.cost, 'float', undefined, 'Cost of the model calls in USD since the worker started');
  const tools = meter.createCounter(METRIC_NAMES.toolCalls, undefined, 'Tool calls run by this worker, by tool and outcome');
  const costs = new Map<string, number>();
  return {
    modelCall(model, usage, costUsd) {
      calls.add(1, { model });
      for (const [type, n] of Object.entries(tokenCounts(usage))) if (n > 0) tokens.add(n, { type });
      const total = (costs.get(model) ?? 0) + (Number.isFinite(costUsd) && costUsd > 0 ? costUsd : 0);
      costs.set(model, total);
      cost.set(total, { model });
    },
    toolCall(tool, outcome) {
      tools.add(1, { tool, outcome });
    },
  };
}

/** Counts nothing (no runtime meter, e.g. in a test that builds activities alone). */
export const NO_METRICS: FaheemMetrics = { modelCall: () => undefined, toolCall: () => undefined };
