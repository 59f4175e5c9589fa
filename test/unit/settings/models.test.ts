import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { modelSettings, modelSettingsAt } from '../../../src/settings/models.js';

test('nothing set: no model, no keys, the defaults of each call', () => {
  const models = modelSettings(readSettings({}));
  assert.deepEqual(models, {
    model: undefined,
    baseUrl: undefined,
    anthropicBaseUrl: undefined,
    wireApi: undefined,
    reasoningEffort: undefined,
    maxOutputTokens: undefined,
    allowedBaseUrls: [],
    invalidBaseUrls: [],
    prices: undefined,
    warnings: [],
  });
  assert.deepEqual(models.keys, { general: undefined, openai: undefined, anthropic: undefined, openrouter: undefined, ollama: undefined });
  assert.deepEqual(models.secrets, []);
});

test('each variable, trimmed; a blank value is unset', () => {
  const models = modelSettings({
    LLM_MODEL: ' openai/gpt-4o,anthropic/claude ',
    LLM_BASE_URL: ' http://127.0.0.1:8080/v1 ',
    ANTHROPIC_BASE_URL: 'https://claude-proxy.example',
    LLM_API_KEY: ' sk-general ',
    OPENAI_API_KEY: 'sk-openai',
    ANTHROPIC_API_KEY: 'sk-ant-key',
    OPENROUTER_API_KEY: 'sk-or-key',
    OLLAMA_API_KEY: '  ',
    LLM_WIRE_API: ' Chat ',
    LLM_REASONING_EFFORT: 'medium',
    LLM_MAX_OUTPUT_TOKENS: '1234',
    FAHEEM_ALLOWED_BASE_URLS: ' https://gw.example/openai/ , not a url,http://127.0.0.1:9999',
    FAHEEM_PRICES: '{"m":{"input":1,"output":2}}',
  });
  assert.equal(models.model, 'openai/gpt-4o,anthropic/claude');
  assert.equal(models.baseUrl, 'http://127.0.0.1:8080/v1');
  assert.equal(models.anthropicBaseUrl, 'https://claude-proxy.example');
  assert.deepEqual(models.keys, {
    general: 'sk-general',
    openai: 'sk-openai',
    anthropic: 'sk-ant-key',
    openrouter: 'sk-or-key',
    ollama: undefined,
  });
  assert.equal(models.wireApi, 'chat');
  assert.equal(models.reasoningEffort, 'medium');
  assert.equal(models.maxOutputTokens, 1234);
  assert.deepEqual(models.allowedBaseUrls, ['https://gw.example/openai/', 'http://127.0.0.1:9999']);
  assert.deepEqual(models.invalidBaseUrls, ['not a url']);
  assert.equal(models.prices, '{"m":{"input":1,"output":2}}');
  assert.deepEqual(models.warnings, ['FAHEEM_ALLOWED_BASE_URLS: "not a url" not an http(s) URL, ignored']);
  assert.deepEqual(models.secrets, ['sk-general', 'sk-openai', 'sk-ant-key', 'sk-or-key'], 'by default, the keys');
  assert.deepEqual(modelSettings({}, ['a-secret']).secrets, ['a-secret'], "the entry point's");
});

test('values the calls ignore are unset, each said once in warnings', () => {
  const models = modelSettings({ LLM_REASONING_EFFORT: 'max', LLM_WIRE_API: 'SOAP', LLM_MAX_OUTPUT_TOKENS: '1.5' });
  assert.equal(models.reasoningEffort, undefined);
  assert.equal(models.wireApi, undefined);
  assert.equal(models.maxOutputTokens, undefined);
  assert.deepEqual(models.warnings, [
    'LLM_REASONING_EFFORT=max is not low, medium or high: reasoning stays off',
    "LLM_WIRE_API=soap is not responses or chat: the default applies (responses on OpenAI's own endpoint, chat elsewhere)",
  ]);
  assert.deepEqual(modelSettings({ LLM_REASONING_EFFORT: 'off', LLM_MAX_OUTPUT_TOKENS: '0' }).warnings, [], 'off is off, said by nobody');
  assert.equal(modelSettings({ LLM_MAX_OUTPUT_TOKENS: '0' }).maxOutputTokens, undefined);
});

test('the keys and secrets are never printed nor serialized', () => {
  const models = modelSettings({ LLM_MODEL: 'openai/gpt-4o', LLM_API_KEY: 'sk-general-secret', OPENAI_API_KEY: 'sk-openai-secret' });
  for (const shown of [JSON.stringify(models), inspect(models, { depth: 5 }), JSON.stringify({ ...models })]) {
    assert.ok(!shown.includes('sk-general-secret') && !shown.includes('sk-openai-secret'), shown);
  }
  assert.equal(models.keys.openai, 'sk-openai-secret');
  assert.ok(Object.isFrozen(models) && Object.isFrozen(models.keys));
});

test('modelSettingsAt: another endpoint, no general key; the providers’ keys and the secrets stay', () => {
  const models = modelSettings({ LLM_MODEL: 'scripted/demo', LLM_API_KEY: 'sk-general', OPENAI_API_KEY: 'sk-openai' });
  const scripted = modelSettingsAt(models, 'http://127.0.0.1:5555/v1');
  assert.equal(scripted.baseUrl, 'http://127.0.0.1:5555/v1');
  assert.equal(scripted.model, 'scripted/demo');
  assert.equal(scripted.keys.general, undefined);
  assert.equal(scripted.keys.openai, 'sk-openai');
  assert.deepEqual(scripted.secrets, models.secrets);
  assert.equal(models.baseUrl, undefined, 'the original is unchanged');
});
