import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { webhookSettings } from '../../../src/settings/webhooks.js';

test('FAHEEM_WEBHOOK_ALLOW is checked with the other settings and parsed into the allow-list', () => {
  assert.deepEqual(webhookSettings(readSettings({}, 'api')).allow, { hosts: [], ranges: [] });
  const allow = webhookSettings(readSettings({ FAHEEM_WEBHOOK_ALLOW: '127.0.0.1,hooks.internal' }, 'api')).allow;
  assert.deepEqual(allow.hosts, ['hooks.internal']);
  assert.equal(allow.ranges.length, 1, 'an address is a range of one');
  assert.throws(() => readSettings({ FAHEEM_WEBHOOK_ALLOW: '10.0.0.0/99' }, 'api'), /FAHEEM_WEBHOOK_ALLOW/);
});
