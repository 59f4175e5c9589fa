import assert from 'node:assert/strict';
import os from 'node:os';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { connectionSettings } from '../../../src/settings/connection.js';

test('the connection defaults: local Temporal, the default namespace, faheem and this host', () => {
  const c = connectionSettings(readSettings({}));
  assert.deepEqual(c, {
    address: 'localhost:7233',
    namespace: 'default',
    envconfig: false,
    configFile: undefined,
    taskQueue: 'faheem',
    hostId: os.hostname(),
    toolTaskQueue: `faheem-tools@${os.hostname()}`,
    httpApi: undefined,
    httpApiHost: undefined,
    temporalUiUrl: 'http://localhost:8233',
    temporalCli: undefined,
  });
});

test('each variable is read into its field', () => {
  const c = connectionSettings(
    readSettings({
      TEMPORAL_ADDRESS: 'temporal.example:7233',
      TEMPORAL_NAMESPACE: 'team',
      FAHEEM_TASK_QUEUE: 'q',
      FAHEEM_HOST_ID: 'box-1',
      FAHEEM_TEMPORAL_HTTP: 'http://temporal.example:7243',
      FAHEEM_TEMPORAL_HTTP_HOST: 'faheem-x.invalid',
      TEMPORAL_UI_URL: 'http://ui.example:8233//',
      TEMPORAL_CLI: '/opt/temporal',
    }),
  );
  assert.equal(c.address, 'temporal.example:7233');
  assert.equal(c.namespace, 'team');
  assert.equal(c.taskQueue, 'q');
  assert.equal(c.hostId, 'box-1');
  assert.equal(c.toolTaskQueue, 'q-tools@box-1', 'the tool queue follows the task queue and the host id');
  assert.equal(connectionSettings(readSettings({ FAHEEM_TOOL_TASK_QUEUE: 'mine' })).toolTaskQueue, 'mine');
  assert.equal(c.httpApi, 'http://temporal.example:7243');
  assert.equal(c.httpApiHost, 'faheem-x.invalid');
  assert.equal(c.temporalUiUrl, 'http://ui.example:8233', 'without a trailing slash');
  assert.equal(c.temporalCli, '/opt/temporal');
});

test("envconfig's own variables say the full client must connect", () => {
  for (const env of [
    { TEMPORAL_API_KEY: 'k' },
    { TEMPORAL_PROFILE: 'prod' },
    { TEMPORAL_TLS: 'true' },
    { TEMPORAL_TLS_SERVER_NAME: 'x' },
    { TEMPORAL_GRPC_META_X: 'y' },
    { TEMPORAL_CONFIG_FILE: '/x.toml' },
  ])
    assert.equal(connectionSettings(readSettings(env)).envconfig, true, JSON.stringify(env));
});

test('a blank value is unset, in checked settings and in a raw environment alike', () => {
  const raw = { TEMPORAL_ADDRESS: ' ', TEMPORAL_NAMESPACE: '', TEMPORAL_API_KEY: '  ' };
  for (const given of [readSettings(raw), raw]) {
    const c = connectionSettings(given);
    assert.equal(c.address, 'localhost:7233');
    assert.equal(c.namespace, 'default');
    assert.equal(c.envconfig, false);
  }
});
