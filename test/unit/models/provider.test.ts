// src/models/provider.ts: model strings pick the endpoint and the key variable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyFor, resolveModel, underPrefix, withheldKeyHint } from '../../../src/models/provider.js';
import { modelSettings } from '../../../src/settings/models.js';

test('model strings pick the endpoint and the key variable; a missing key names the variable', () => {
  const env = { ANTHROPIC_API_KEY: 'a', LLM_API_KEY: 'l' };
  assert.deepEqual(resolveModel('anthropic/claude-sonnet-4-5-20250929', undefined, modelSettings(env)), {
    apiModel: 'claude-sonnet-4-5-20250929',
    provider: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1/',
    apiKey: 'a',
  });
  assert.equal(resolveModel('openai/gpt-4o', undefined, modelSettings(env)).apiKey, 'l');
  assert.equal(resolveModel('openrouter/meta/llama-3', undefined, modelSettings(env)).apiModel, 'meta/llama-3');
  assert.equal(resolveModel('ollama/qwen2.5', undefined, modelSettings({})).baseUrl, 'http://localhost:11434/v1');
  assert.equal(resolveModel('my-model', 'http://127.0.0.1:9/v1', modelSettings({})).baseUrl, 'http://127.0.0.1:9/v1');
  assert.throws(() => resolveModel('anthropic/claude', undefined, modelSettings({})), /set ANTHROPIC_API_KEY or LLM_API_KEY/);
  assert.throws(() => resolveModel(undefined, undefined, modelSettings({})), /set LLM_MODEL/);
});

test('URL prefixes compare parsed scheme, host and port, then the path at a slash', () => {
  assert.ok(underPrefix('https://api.openai.com/v1', 'https://api.openai.com'));
  assert.ok(underPrefix('https://API.openai.com:443/v1/chat', 'https://api.openai.com/v1/'));
  assert.ok(underPrefix('http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080/v1'));
  assert.ok(!underPrefix('https://api.openai.com.evil.com/v1', 'https://api.openai.com'), 'a longer host is another host');
  assert.ok(!underPrefix('https://api.openai.com@evil.com/v1', 'https://api.openai.com'), 'user info is not the host');
  assert.ok(!underPrefix('http://api.openai.com/v1', 'https://api.openai.com'), 'another scheme');
  assert.ok(!underPrefix('https://api.openai.com:8443/v1', 'https://api.openai.com'), 'another port');
  assert.ok(!underPrefix('http://127.0.0.1:9090/v1', 'http://127.0.0.1:8080'), 'another port on loopback');
  assert.ok(!underPrefix('https://proxy.example/v10', 'https://proxy.example/v1'), 'a path prefix stops at a slash');
  assert.ok(!underPrefix('https://proxy.example/v1/../admin', 'https://proxy.example/v1'), 'dot segments resolved first');
  assert.ok(!underPrefix('https://proxy.example/v1/%2e%2e/admin', 'https://proxy.example/v1'), 'encoded dot segments too');
  assert.ok(!underPrefix('not a url', 'https://api.openai.com'));
  assert.ok(!underPrefix('file:///etc/passwd', 'file:///'), 'http(s) only');
});

test('keyFor: the key goes to the endpoints the worker names, never to a conversation’s own', () => {
  const env = { LLM_API_KEY: 'l', OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a', LLM_BASE_URL: 'http://127.0.0.1:8080/v1' };
  assert.deepEqual(keyFor('http://127.0.0.1:8080/v1', 'openai', modelSettings(env)), { apiKey: 'o', withheld: false }, 'LLM_BASE_URL');
  assert.deepEqual(
    keyFor('https://api.openai.com/v1', 'openai', modelSettings(env)),
    { apiKey: 'o', withheld: false },
    "the provider's own",
  );
  assert.deepEqual(
    keyFor('https://api.anthropic.com', 'anthropic', modelSettings(env)),
    { apiKey: 'a', withheld: false },
    "the provider's own host",
  );
  assert.deepEqual(keyFor('https://evil.example/v1', 'openai', modelSettings(env)), { apiKey: '', withheld: true });
  assert.deepEqual(keyFor('https://api.openai.com.evil.com/v1', 'openai', modelSettings(env)), { apiKey: '', withheld: true });
  assert.deepEqual(
    keyFor('https://api.openai.com/v1', 'anthropic', modelSettings(env)),
    { apiKey: '', withheld: true },
    "another provider's host",
  );
  assert.deepEqual(keyFor('http://127.0.0.1:9999/v1', undefined, modelSettings(env)), { apiKey: '', withheld: true }, 'another port');
  // ANTHROPIC_BASE_URL counts for anthropic/ models only.
  const proxy = { ...env, ANTHROPIC_BASE_URL: 'https://claude-proxy.example' };
  assert.equal(keyFor('https://claude-proxy.example/v1', 'anthropic', modelSettings(proxy)).apiKey, 'a');
  assert.equal(keyFor('https://claude-proxy.example/v1', 'openai', modelSettings(proxy)).withheld, true);
  // FAHEEM_ALLOWED_BASE_URLS: comma-separated prefixes; a bad entry allows nothing.
  const allowed = { ...env, FAHEEM_ALLOWED_BASE_URLS: ' https://gw.example/openai/ , not a url,http://127.0.0.1:9999' };
  assert.equal(keyFor('https://gw.example/openai/v1', 'openai', modelSettings(allowed)).apiKey, 'o');
  assert.equal(keyFor('https://gw.example/other/v1', 'openai', modelSettings(allowed)).withheld, true);
  assert.equal(keyFor('http://127.0.0.1:9999/v1', undefined, modelSettings(allowed)).apiKey, 'l');
  assert.deepEqual(modelSettings(allowed).invalidBaseUrls, ['not a url']);
  // No key on the worker: nothing is held back.
  assert.deepEqual(keyFor('https://evil.example/v1', 'openai', modelSettings({})), { apiKey: '', withheld: false });
});

test('resolveModel: a conversation’s base URL the worker does not allow gets no key, and says so', () => {
  const env = { LLM_API_KEY: 'sk-worker', LLM_BASE_URL: 'http://127.0.0.1:8080/v1' };
  const foreign = resolveModel('openai/gpt-4o', 'https://attacker.example/v1', modelSettings(env));
  assert.equal(foreign.apiKey, 'not-needed');
  assert.equal(foreign.keyWithheld, true);
  const own = resolveModel('openai/gpt-4o', 'http://127.0.0.1:8080/v1/', modelSettings(env));
  assert.equal(own.apiKey, 'sk-worker');
  assert.equal(own.keyWithheld, undefined);
  assert.equal(resolveModel('openai/gpt-4o', undefined, modelSettings(env)).apiKey, 'sk-worker', "the worker's own endpoint");
  assert.match(
    withheldKeyHint('https://attacker.example/v1'),
    /did not send its API key.*FAHEEM_ALLOWED_BASE_URLS=https:\/\/attacker\.example/,
  );
});
