import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { deploySettings } from '../../../src/settings/deploy.js';

test('no deployment and the package bundle by default', () => {
  assert.deepEqual(deploySettings(readSettings({})), { deployment: undefined, buildId: undefined, workflowBundle: undefined });
});

test('each variable is read into its field, trimmed', () => {
  assert.deepEqual(
    deploySettings(readSettings({ FAHEEM_DEPLOYMENT: ' faheem ', FAHEEM_BUILD_ID: 'v7', FAHEEM_WORKFLOW_BUNDLE: '/srv/bundle.js' })),
    { deployment: 'faheem', buildId: 'v7', workflowBundle: '/srv/bundle.js' },
  );
});

test("a client does not stop for a worker's bad deployment name: it is only looked up", () => {
  const settings = readSettings({ FAHEEM_DEPLOYMENT: 'a.b' }, 'client');
  assert.equal(deploySettings(settings).deployment, 'a.b');
  assert.throws(() => readSettings({ FAHEEM_DEPLOYMENT: 'a.b' }, 'worker'), /FAHEEM_DEPLOYMENT="a.b" must be letters/);
});
