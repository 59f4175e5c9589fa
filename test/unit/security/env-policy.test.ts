import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  commandBaseEnv,
  extraCommandNames,
  isCommandVariable,
  isMcpOfferedVariable,
  isSecretName,
  isWorkerOwnVariable,
  namedSecrets,
  secretValues,
} from '../../../src/security/env-policy.js';

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
    'AWS_SECRET_ACCESS_KEY',
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

test("commands start from an allowlist: the worker's other variables (cloud keys, database URLs, agent sockets) stay out", () => {
  const worker = {
    PATH: '/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'xterm',
    TZ: 'UTC',
    TMPDIR: '/tmp',
    LLM_MODEL: 'm',
    LLM_API_KEY: 'k',
    TEMPORAL_ADDRESS: 'a',
    GITHUB_TOKEN: 't',
    AWS_SECRET_ACCESS_KEY: 'aws',
    DATABASE_URL: 'postgres://u:p@db/x',
    STRIPE_SECRET_KEY: 'sk_live',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer x',
    SSH_AUTH_SOCK: '/run/ssh.sock',
    NODE_OPTIONS: '--require ./x.js',
    FAHEEM_HOME: '/h',
    FAHEEM_SECRET_X: 's',
  };
  assert.deepEqual(commandBaseEnv(worker), {
    PATH: '/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'xterm',
    TZ: 'UTC',
    TMPDIR: '/tmp',
  });
  assert.equal(isCommandVariable('PATH', {}), true);
  assert.equal(isCommandVariable('LC_CTYPE', {}), true);
  assert.equal(isCommandVariable('AWS_SECRET_ACCESS_KEY', {}), false);
  assert.equal(isCommandVariable('TEMPORAL_NAMESPACE', {}), false);
});

test("FAHEEM_COMMAND_ENV adds names to the list, never the worker's own variables or named secrets", () => {
  const env = commandBaseEnv({
    PATH: '/bin',
    FAHEEM_COMMAND_ENV: ' NPM_CONFIG_REGISTRY, GOPATH ,LLM_API_KEY,OPENAI_API_KEY,FAHEEM_HOME,FAHEEM_SECRET_X,bad-name',
    NPM_CONFIG_REGISTRY: 'https://r',
    GOPATH: '/go',
    LLM_API_KEY: 'k',
    OPENAI_API_KEY: 'o',
    FAHEEM_HOME: '/h',
    FAHEEM_SECRET_X: 's',
    OTHER: 'x',
  });
  assert.deepEqual(env, { PATH: '/bin', NPM_CONFIG_REGISTRY: 'https://r', GOPATH: '/go' });
  assert.deepEqual(extraCommandNames({ FAHEEM_COMMAND_ENV: 'A,,B' }), ['A', 'B']);
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

test('an MCP config gets only what the worker offers: FAHEEM_SECRET_* and the names FAHEEM_MCP_ENV lists', () => {
  const env = { GITHUB_TOKEN: 'g', AWS_SECRET_ACCESS_KEY: 'a', HOME: '/root', FAHEEM_MCP_ENV: 'GITHUB_TOKEN, LLM_API_KEY,bad name' };
  assert.ok(isMcpOfferedVariable('FAHEEM_SECRET_GITHUB', env));
  assert.ok(isMcpOfferedVariable('GITHUB_TOKEN', env));
  // Present on the worker but not offered; or the worker's own, which no list can offer.
  for (const name of ['AWS_SECRET_ACCESS_KEY', 'HOME', 'LLM_API_KEY', 'FAHEEM_MCP_ENV']) assert.ok(!isMcpOfferedVariable(name, env), name);
  assert.ok(!isMcpOfferedVariable('GITHUB_TOKEN', {}), 'nothing is offered without the list');
});
