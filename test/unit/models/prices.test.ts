import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lifecycleWarning, modelLifecycle } from '../../../src/models/lifecycle.js';
import { costOf, modelFacts, priceTable } from '../../../src/models/prices.js';
import { isContextOverflow, maxOutputTokens, thinkingFor } from '../../../src/models/client.js';
import { modelSettings } from '../../../src/settings/models.js';

test('list prices from the catalogue: uncached input, cache writes, cache reads and output', () => {
  const usage = { promptTokens: 10_000, cacheReadTokens: 6_000, cacheWriteTokens: 3_000, completionTokens: 500 };
  // claude-haiku-4-5: 1 / 1.25 / 0.1 / 5 USD per million.
  const expected = (1_000 * 1 + 3_000 * 1.25 + 6_000 * 0.1 + 500 * 5) / 1e6;
  assert.ok(Math.abs(costOf('claude-haiku-4-5', usage, {}, 'anthropic')! - expected) < 1e-12);
  // gpt-4o-mini: 0.15 in, 0.075 cached, 0.6 out.
  const o = costOf('gpt-4o-mini', { promptTokens: 1_000_000, cacheReadTokens: 500_000, completionTokens: 0 }, {}, 'openai')!;
  assert.ok(Math.abs(o - (0.5 * 0.15 + 0.5 * 0.075)) < 1e-12);
  assert.equal(costOf('my-local-model', usage, {}, 'custom'), undefined);
});

test('FAHEEM_PRICES overrides the catalogue; bad entries are ignored', () => {
  const table = priceTable(
    modelSettings({
      FAHEEM_PRICES: JSON.stringify({ 'my-model': { input: 1, output: 2, cacheWrite: 3 }, broken: { input: 'x' } }),
    }),
  );
  assert.deepEqual(Object.keys(table), ['my-model']);
  assert.equal(
    costOf('my-model', { promptTokens: 2e6, cacheReadTokens: 0, cacheWriteTokens: 1e6, completionTokens: 1e6 }, table),
    1 + 3 + 2,
  );
  assert.equal(modelFacts('my-model', 'custom', table).priced, true);
  assert.deepEqual(priceTable(modelSettings({ FAHEEM_PRICES: 'not json' })), {});
});

test('context windows and output caps', () => {
  assert.equal(modelFacts('claude-haiku-4-5', 'anthropic').contextWindow, 200_000);
  assert.equal(maxOutputTokens(modelSettings({}), 200_000), 16_384);
  assert.equal(maxOutputTokens(modelSettings({}), 8_192), 2_048);
  assert.equal(maxOutputTokens(modelSettings({}), undefined), 4_096);
  assert.equal(maxOutputTokens(modelSettings({ LLM_MAX_OUTPUT_TOKENS: '1234' }), 200_000), 1234);
  assert.deepEqual(thinkingFor('low', 16_384), { thinking: { type: 'enabled', budget_tokens: 2_048 } });
  assert.deepEqual(thinkingFor('high', 8_192), { thinking: { type: 'enabled', budget_tokens: 7_168 } });
  assert.deepEqual(
    thinkingFor('medium', 16_384, 'claude-opus-4-6'),
    { thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } },
    "the SDK's adaptive-thinking models",
  );
  assert.equal(thinkingFor('low', 1_500), undefined);
  assert.equal(thinkingFor(undefined, 16_384), undefined);
});

test("deprecated models from the SDK's table, with a replacement", () => {
  const l = modelLifecycle('anthropic/claude-sonnet-4-5-20250929', new Date('2026-12-01T00:00:00Z'));
  assert.equal(l?.retired, true);
  assert.equal(l?.replacement, 'claude-sonnet-4-6');
  assert.match(lifecycleWarning(l!), /was retired on November 30th, 2026; use claude-sonnet-4-6/);
  assert.equal(modelLifecycle('claude-sonnet-4-5', new Date('2026-06-01T00:00:00Z'))?.retired, false);
  assert.equal(modelLifecycle('claude-haiku-4-5'), undefined);
});

test("context overflow is recognised from either provider's message", () => {
  assert.ok(isContextOverflow(400, 'prompt is too long: 210000 tokens > 200000 maximum'));
  assert.ok(
    isContextOverflow(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."),
  );
  assert.ok(isContextOverflow(400, 'context_length_exceeded'));
  assert.ok(isContextOverflow(413, 'the request exceeds the context window'));
  assert.equal(isContextOverflow(400, 'tools.0.name: String should match pattern'), false);
  assert.equal(isContextOverflow(500, 'prompt is too long'), false);
});
