// src/llm/provider.ts: model strings pick the endpoint and the key variable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveModel } from '../../src/llm/provider.js';

test('model strings pick the endpoint and the key variable; a missing key names the variable', () => {
  const env = { ANTHROPIC_API_KEY: 'a', LLM_API_KEY: 'l' };
  assert.deepEqual(resolveModel('anthropic/claude-sonnet-4-5-20250929', undefined, env), {
    apiModel: 'claude-sonnet-4-5-20250929',
    provider: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1/',
    apiKey: 'a',
  });
  assert.equal(resolveModel('openai/gpt-4o', undefined, env).apiKey, 'l');
  assert.equal(resolveModel('openrouter/meta/llama-3', undefined, env).apiModel, 'meta/llama-3');
  assert.equal(resolveModel('ollama/qwen2.5', undefined, {}).baseUrl, 'http://localhost:11434/v1');
  assert.equal(resolveModel('my-model', 'http://127.0.0.1:9/v1', {}).baseUrl, 'http://127.0.0.1:9/v1');
  assert.throws(() => resolveModel('anthropic/claude', undefined, {}), /set ANTHROPIC_API_KEY or LLM_API_KEY/);
  assert.throws(() => resolveModel(undefined, undefined, {}), /set LLM_MODEL/);
});
