// The pure parts of tracing and metrics: token counts by type, GenAI attributes, when tracing is on,
// and the span shape the workflow's spans are given for the exporter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatAttributes, finishReason, splitModel } from '../../../src/telemetry/instrument.js';
import { createMetrics, tokenCounts } from '../../../src/telemetry/metrics.js';
import { asCurrentSpan, withoutPrivateInfo } from '../../../src/telemetry/tracing.js';
import type { ModelCallResult } from '../../../src/core/types.js';

test('tokens by type: input is the uncached rest of the prompt; nothing negative', () => {
  assert.deepEqual(tokenCounts({ promptTokens: 1000, completionTokens: 50, cacheReadTokens: 700, cacheWriteTokens: 200 }), {
    input: 100,
    output: 50,
    cache_read: 700,
    cache_write: 200,
  });
  assert.deepEqual(tokenCounts({ promptTokens: 10, completionTokens: 0, cacheReadTokens: 30 }), {
    input: 0,
    output: 0,
    cache_read: 30,
    cache_write: 0,
  });
});

test('the cost gauge only ever rises, per model; counters get whole numbers', () => {
  const recorded: { kind: string; name: string; value: number; tags?: Record<string, unknown> }[] = [];
  const metric = (kind: string) => (name: string) => ({
    name,
    add: (value: number, tags?: Record<string, unknown>) => recorded.push({ kind, name, value, ...(tags ? { tags } : {}) }),
    set: (value: number, tags?: Record<string, unknown>) => recorded.push({ kind, name, value, ...(tags ? { tags } : {}) }),
    record: () => undefined,
    withTags: () => undefined,
  });
  const meter = {
    createCounter: metric('counter'),
    createGauge: metric('gauge'),
    createHistogram: metric('histogram'),
    withTags: () => meter,
  };
  const metrics = createMetrics(meter as never);
  metrics.modelCall('gpt-4o-mini', { promptTokens: 100, completionTokens: 10, cacheReadTokens: 0 }, 0.25);
  metrics.modelCall('gpt-4o-mini', { promptTokens: 100, completionTokens: 10, cacheReadTokens: 0 }, Number.NaN);
  metrics.modelCall('gpt-4o-mini', { promptTokens: 100, completionTokens: 10, cacheReadTokens: 0 }, 0.5);
  metrics.toolCall('terminal', 'error');
  const cost = recorded.filter((r) => r.name === 'faheem_cost_usd_total').map((r) => r.value);
  assert.deepEqual(cost, [0.25, 0.25, 0.75]);
  assert.ok(recorded.filter((r) => r.kind === 'counter').every((r) => Number.isInteger(r.value)));
  assert.deepEqual(recorded.find((r) => r.name === 'faheem_tool_calls_total')?.tags, { tool: 'terminal', outcome: 'error' });
});

test('GenAI attributes of a model call: provider and model from the spec, finish reasons, usage, conversation', () => {
  assert.deepEqual(splitModel('anthropic/claude-sonnet-4-6'), { provider: 'anthropic', model: 'claude-sonnet-4-6' });
  assert.deepEqual(splitModel('gpt-4o'), { provider: 'openai', model: 'gpt-4o' });
  const reply: ModelCallResult = {
    id: 'r1',
    model: 'gpt-4o-mini-2024',
    content: null,
    toolCalls: [{ id: 'c1', name: 'terminal', arguments: '{}' }],
    usage: { promptTokens: 12, completionTokens: 3, cacheReadTokens: 4 },
    cost: 0,
    latencyMs: 5,
  };
  assert.equal(finishReason(reply), 'tool_calls');
  assert.equal(finishReason({ ...reply, toolCalls: [] }), 'stop');
  assert.equal(finishReason({ ...reply, truncated: true }), 'length');
  const a = chatAttributes({ provider: 'openai', model: 'gpt-4o-mini' }, 'conv-1', reply);
  assert.equal(a['gen_ai.request.model'], 'gpt-4o-mini');
  assert.equal(a['gen_ai.response.model'], 'gpt-4o-mini-2024');
  assert.equal(a['gen_ai.usage.cache_read.input_tokens'], 4);
  assert.equal(a['gen_ai.conversation.id'], 'conv-1');
  assert.ok(!JSON.stringify(a).includes('terminal'), 'no content in the attributes');
});

test("a workflow span (OpenTelemetry 1.x's shape) keeps its parent under the 2.x names", () => {
  const span = {
    name: 'StartActivity:callModel',
    parentSpanId: 'p1',
    spanContext: () => ({ traceId: 't1', spanId: 's1', traceFlags: 1 }),
    instrumentationLibrary: { name: 'temporal' },
  };
  const out = asCurrentSpan(span) as typeof span & {
    parentSpanContext: { spanId: string; traceId: string };
    instrumentationScope: { name: string };
  };
  assert.equal(out.parentSpanContext.spanId, 'p1');
  assert.equal(out.parentSpanContext.traceId, 't1');
  assert.equal(out.instrumentationScope.name, 'temporal');
  assert.equal(out.spanContext().spanId, 's1');
  const root = {
    name: 'RunWorkflow',
    spanContext: () => ({ traceId: 't', spanId: 's', traceFlags: 1 }),
    instrumentationScope: { name: 'x' },
  };
  assert.equal(asCurrentSpan(root), root, 'nothing to add: the same span');
});

test("a workflow span keeps no memo (the title is the first message) or earlier run's result", () => {
  // What Temporal's workflow exporter gives: the WorkflowInfo merged into the span's attributes.
  const span = {
    name: 'StartActivity:callModel',
    attributes: {
      workflowId: 'conv-1',
      workflowType: 'conversation',
      memo: { title: 'secret words', workspace: '/w' },
      lastResult: 'x',
      lastFailure: 'y',
    },
  };
  const out = withoutPrivateInfo(span);
  assert.deepEqual(out.attributes, { workflowId: 'conv-1', workflowType: 'conversation' });
  assert.ok(!JSON.stringify(out).includes('secret words'));
  assert.deepEqual(withoutPrivateInfo({ name: 'no attributes' }), { name: 'no attributes' });
});
