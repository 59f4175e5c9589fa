import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  commandBaseEnv,
  isCommandVariable,
  isSecretName,
  isWorkerOwnVariable,
  namedSecrets,
  secretValues,
} from '../../src/security/env-policy.js';

test('secret names', () => {
  for (const name of [
    'LLM_API_KEY',
    'OPENAI_API_KEY',
    'GITHUB_TOKEN',
    'MY_SECRET',
    'DB_PASSWORD',
    'TEMPORAL_TLS_KEY',
    'FAHEEM_SECRET_X',
    'FAHEEM_ENCRYPTION_KEY',
    'FAHEEM_ENCRYPTION_KEYS',
  ]) {
    assert.ok(isSecretName(name), name);
  }
  for (const name of ['PATH', 'HOME', 'LLM_MODEL', 'FAHEEM_HOME', 'TOKENIZER']) assert.ok(!isSecretName(name), name);
});

test('secret values: long enough ones, and each key of a key list', () => {
  const values = secretValues({
    LLM_API_KEY: 'sk-long-enough',
    SHORT_TOKEN: 'abc',
    PATH: '/bin',
    FAHEEM_ENCRYPTION_KEYS: 'a:keyvalue1,keyvalue2',
  });
  assert.deepEqual(values.sort(), ['a:keyvalue1,keyvalue2', 'keyvalue1', 'keyvalue2', 'sk-long-enough'].sort());
  assert.deepEqual(namedSecrets({ FAHEEM_SECRET_DEPLOY: 'x', FAHEEM_SECRET_EMPTY: '', OTHER: 'y' }), { DEPLOY: 'x' });
});

test("commands see neither secrets nor the model's and Temporal's settings; faheem settings they do", () => {
  const env = commandBaseEnv({
    PATH: '/bin',
    LLM_MODEL: 'm',
    LLM_API_KEY: 'k',
    TEMPORAL_ADDRESS: 'a',
    GITHUB_TOKEN: 't',
    FAHEEM_HOME: '/h',
    FAHEEM_SECRET_X: 's',
  });
  assert.deepEqual(env, { PATH: '/bin', FAHEEM_HOME: '/h' });
  assert.equal(isCommandVariable('PATH'), true);
  assert.equal(isCommandVariable('TEMPORAL_NAMESPACE'), false);
});

test("an MCP config may name users' secrets, never the worker's own variables", () => {
  for (const name of [
    'LLM_API_KEY',
    'LLM_MODEL',
    'TEMPORAL_API_KEY',
    'FAHEEM_ENCRYPTION_KEY',
    'FAHEEM_HOME',
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
  ]) {
    assert.ok(isWorkerOwnVariable(name), name);
  }
  for (const name of ['FAHEEM_SECRET_GITHUB', 'GITHUB_TOKEN', 'HOME']) assert.ok(!isWorkerOwnVariable(name), name);
});
