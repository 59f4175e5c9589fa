import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { InvalidRequestError } from '../../../src/core/errors.js';
import { workerSettings } from '../../../src/settings/worker.js';

test('the worker defaults', () => {
  const w = workerSettings(readSettings({}, 'worker'));
  assert.equal(w.home, path.join(os.homedir(), '.faheem'));
  assert.equal(w.logLevel, 'WARN');
  assert.equal(w.terminalSoftTimeoutMs, 30_000);
  assert.equal(w.transcriptCacheBytes, 512 * 1024 * 1024);
  assert.equal(w.spawnHelper, true);
  assert.equal(w.live, true);
  assert.equal(w.deployment, undefined);
  assert.equal(w.metricsPort, undefined);
  assert.equal(w.metricsHost, '127.0.0.1');
  assert.equal(w.maxModelCalls, undefined);
});

test('numbers come as numbers, switches as booleans, in their units', () => {
  const w = workerSettings(
    readSettings(
      { FAHEEM_WORKFLOW_THREADS: '3', FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '1.5', FAHEEM_METRICS_PORT: '9464', FAHEEM_LIVE: '0' },
      'worker',
    ),
  );
  assert.equal(w.workflowThreads, 3);
  assert.equal(w.terminalSoftTimeoutMs, 1500);
  assert.equal(w.metricsPort, 9464);
  assert.equal(w.live, false);
});

test('a deployment takes both halves', () => {
  assert.deepEqual(workerSettings(readSettings({ FAHEEM_DEPLOYMENT: 'faheem', FAHEEM_BUILD_ID: 'v1' }, 'worker')).deployment, {
    deploymentName: 'faheem',
    buildId: 'v1',
  });
  assert.throws(() => workerSettings(readSettings({ FAHEEM_BUILD_ID: 'v1' }, 'worker')), InvalidRequestError);
});
