import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { codecSettings } from '../../../src/settings/codec.js';

test('no key: nothing is encrypted', () => {
  assert.deepEqual(codecSettings(readSettings({})), {
    encryptionKey: undefined,
    encryptionKeys: undefined,
    codecToken: undefined,
    encrypts: false,
  });
});

test('either key variable turns encryption on; values are trimmed', () => {
  const one = codecSettings(readSettings({ FAHEEM_ENCRYPTION_KEY: ' abc= ', FAHEEM_CODEC_TOKEN: 't' }));
  assert.equal(one.encryptionKey, 'abc=');
  assert.equal(one.codecToken, 't');
  assert.equal(one.encrypts, true);
  const list = codecSettings(readSettings({ FAHEEM_ENCRYPTION_KEYS: 'a:k1,b:k2' }));
  assert.equal(list.encryptionKeys, 'a:k1,b:k2');
  assert.equal(list.encrypts, true);
  assert.equal(codecSettings({ FAHEEM_ENCRYPTION_KEY: '  ' }).encrypts, false, 'a blank key is no key');
});
