// src/server/exposure.ts: which addresses are loopback, and the warning each service gives beyond it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exposureWarning, isLoopback } from '../../../src/server/exposure.js';

test('loopback addresses and names', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', 'LOCALHOST']) assert.ok(isLoopback(h), h);
  for (const h of ['0.0.0.0', '::', '192.168.1.5', '10.0.0.1', 'example.com', '127.0.0.1.nip.io']) assert.ok(!isLoopback(h), h);
});

test('beyond loopback, each service names what becomes reachable; on loopback, nothing is said', () => {
  assert.equal(exposureWarning('server', '127.0.0.1', '--ip'), undefined);
  const server = exposureWarning('server', '0.0.0.0', '--ip') ?? '';
  assert.match(server, /--ip 0\.0\.0\.0 listens on every network interface/);
  assert.match(server, /Temporal's API, with no authentication/);
  assert.match(server, /MCP config runs commands on the workers/);
  assert.match(server, /Web UI/);
  assert.match(exposureWarning('console', '192.168.1.5', '--host') ?? '', /listens on 192\.168\.1\.5.*token.*controls every conversation/);
  assert.match(exposureWarning('codec-server', '::', '--ip') ?? '', /token can decrypt/);
  assert.match(exposureWarning('metrics', '0.0.0.0', '--metrics-host') ?? '', /--metrics-host 0\.0\.0\.0.*Prometheus metrics/);
});
