// The runtime a worker installs (src/worker.ts): the core's own log lines go through the worker's
// logger (to stderr), never straight to stdout, which is `faheem acp`'s protocol channel.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runtimeOptions } from '../../src/worker.js';

test('the core’s log lines are forwarded to the worker’s logger, at WARN for the core', () => {
  const options = runtimeOptions('INFO', undefined, '127.0.0.1');
  const logging = options.telemetryOptions?.logging;
  assert.ok(logging && 'forward' in logging, 'forwarded, not written to the console by the core');
  assert.match(String(logging.filter), /temporalio_sdk_core=WARN/);
  assert.equal(options.telemetryOptions?.metrics, undefined, 'no metrics endpoint unless asked');
});

test('a metrics port adds the Prometheus endpoint beside the forwarded logs', () => {
  const options = runtimeOptions('INFO', 9464, '::1');
  assert.ok(options.telemetryOptions?.logging && 'forward' in options.telemetryOptions.logging);
  assert.deepEqual(options.telemetryOptions?.metrics, { prometheus: { bindAddress: '[::1]:9464', useSecondsForDurations: true } });
});
