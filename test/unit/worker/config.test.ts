import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readWorkerConfig } from '../../../src/worker/config.js';
import { InvalidRequestError, SandboxError } from '../../../src/core/errors.js';

test('the defaults the README lists', () => {
  const c = readWorkerConfig({ HOME: os.homedir() });
  assert.equal(c.home, path.join(os.homedir(), '.faheem'));
  assert.equal(c.logLevel, 'WARN');
  assert.equal(c.workflowThreads, undefined);
  assert.equal(c.terminalSoftTimeoutMs, 30_000);
  assert.equal(c.transcriptCacheBytes, 512 * 1024 * 1024);
  assert.equal(c.spawnHelper, true);
  assert.deepEqual(c.sandbox, { kind: 'default', network: 'internet', networkChosen: false });
  assert.equal(c.live, true);
});

test('each variable is read into its field', () => {
  const c = readWorkerConfig({
    FAHEEM_HOME: '/srv/faheem',
    FAHEEM_LOG_LEVEL: 'debug',
    FAHEEM_WORKFLOW_THREADS: '4',
    FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '2.5',
    FAHEEM_TRANSCRIPT_CACHE_MB: '64',
    FAHEEM_SPAWN_HELPER: '0',
    FAHEEM_SANDBOX: 'bwrap',
    FAHEEM_SANDBOX_NETWORK: 'none',
    FAHEEM_LIVE: '0',
    FAHEEM_DEPLOYMENT: 'faheem',
    FAHEEM_BUILD_ID: 'v7',
    FAHEEM_METRICS_PORT: '9464',
    FAHEEM_METRICS_HOST: '[::1]',
    FAHEEM_MAX_MODEL_CALLS: '2',
  });
  assert.deepEqual(c, {
    home: '/srv/faheem',
    logLevel: 'DEBUG',
    workflowThreads: 4,
    terminalSoftTimeoutMs: 2500,
    transcriptCacheBytes: 64 * 1024 * 1024,
    spawnHelper: false,
    sandbox: { kind: 'bwrap', network: 'none', networkChosen: true },
    live: false,
    deployment: { deploymentName: 'faheem', buildId: 'v7' },
    metricsPort: 9464,
    metricsHost: '::1',
    maxModelCalls: 2,
  });
  assert.equal(readWorkerConfig({ FAHEEM_WORKFLOW_THREADS: '' }).workflowThreads, undefined, 'empty is unset');
  assert.equal(readWorkerConfig({}).metricsHost, '127.0.0.1', 'metrics listen on loopback unless told otherwise');
});

test('a bad value is an error that names the variable', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ FAHEEM_WORKFLOW_THREADS: 'two' }, /^FAHEEM_WORKFLOW_THREADS="two" must be a whole number/],
    [{ FAHEEM_WORKFLOW_THREADS: '0' }, /^FAHEEM_WORKFLOW_THREADS="0" must be 1 or more/],
    [{ FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '-1' }, /^FAHEEM_TERMINAL_SOFT_TIMEOUT_S="-1" must be more than 0/],
    [{ FAHEEM_TRANSCRIPT_CACHE_MB: 'lots' }, /^FAHEEM_TRANSCRIPT_CACHE_MB="lots" must be a number/],
    [{ FAHEEM_LOG_LEVEL: 'loud' }, /^FAHEEM_LOG_LEVEL="loud" must be one of TRACE, DEBUG, INFO, WARN, ERROR/],
    [{ FAHEEM_SPAWN_HELPER: 'no' }, /^FAHEEM_SPAWN_HELPER="no" must be 0 \(off\) or 1 \(on\)/],
    [{ FAHEEM_LIVE: 'off' }, /^FAHEEM_LIVE="off" must be 0 \(off\) or 1 \(on\)/],
    [{ FAHEEM_METRICS_HOST: 'my host' }, /^FAHEEM_METRICS_HOST="my host" must be an IP address/],
  ];
  for (const [env, message] of bad) {
    assert.throws(
      () => readWorkerConfig(env),
      (err: unknown) => err instanceof InvalidRequestError && message.test(err.message),
      JSON.stringify(env),
    );
  }
  assert.throws(() => readWorkerConfig({ FAHEEM_SANDBOX: 'docker' }), SandboxError);
});
