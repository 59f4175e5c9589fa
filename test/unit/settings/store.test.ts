import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { s3Settings, storeSettings } from '../../../src/settings/store.js';

test('the store defaults: no store, AWS defaults, payloads and images under ~/.faheem, no key, no pool', () => {
  const home = path.join(os.homedir(), '.faheem');
  assert.deepEqual(storeSettings(readSettings({})), {
    url: undefined,
    maxBytes: undefined,
    s3: { endpoint: undefined, region: 'us-east-1', accessKeyId: undefined, secretAccessKey: undefined, sessionToken: undefined },
    payloadDir: path.join(home, 'payloads'),
    home,
    codec: { encryptionKey: undefined, encryptionKeys: undefined, codecToken: undefined, encrypts: false },
    pool: { name: undefined, hostId: os.hostname(), workspacesDir: path.join(os.homedir(), '.faheem', 'workspaces') },
  });
});

test('each variable is read into its field', () => {
  const s = storeSettings(
    readSettings({
      FAHEEM_OBJECT_STORE: ' s3://bucket/prefix ',
      FAHEEM_OBJECT_MAX_BYTES: '1024',
      FAHEEM_HOME: '/srv/faheem',
      FAHEEM_ENCRYPTION_KEY: 'abc=',
      FAHEEM_POOL: 'p1',
      FAHEEM_HOST_ID: 'h1',
      FAHEEM_WORKSPACES_DIR: '/srv/ws/',
      AWS_ACCESS_KEY_ID: 'id',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'session',
    }),
  );
  assert.equal(s.url, 's3://bucket/prefix', 'the URL is trimmed');
  assert.equal(s.maxBytes, '1024', 'the cap as given: the store checks it when it opens');
  assert.equal(s.payloadDir, path.join('/srv/faheem', 'payloads'));
  assert.equal(s.home, '/srv/faheem');
  assert.equal(s.codec.encryptionKey, 'abc=');
  assert.equal(s.codec.encrypts, true);
  assert.deepEqual(s.pool, { name: 'p1', hostId: 'h1', workspacesDir: '/srv/ws' });
  assert.deepEqual([s.s3.accessKeyId, s.s3.secretAccessKey, s.s3.sessionToken], ['id', 'secret', 'session']);
  assert.equal(storeSettings(readSettings({ FAHEEM_PAYLOAD_DIR: '/p', FAHEEM_HOME: '/h' })).payloadDir, '/p');
  assert.equal(storeSettings({ FAHEEM_OBJECT_STORE: '  ' }).url, undefined, 'a blank store is no store');
  assert.equal(storeSettings(readSettings({ FAHEEM_OBJECT_MAX_BYTES: 'lots' })).maxBytes, 'lots', 'nothing is checked here');
});

test('the S3 endpoint and region fall back as the AWS variables do; an empty value is unset', () => {
  assert.equal(s3Settings({ AWS_ENDPOINT_URL: 'http://generic:1', AWS_ENDPOINT_URL_S3: 'http://s3:2' }).endpoint, 'http://s3:2');
  assert.equal(s3Settings({ AWS_ENDPOINT_URL: 'http://generic:1', AWS_ENDPOINT_URL_S3: '' }).endpoint, 'http://generic:1');
  assert.equal(s3Settings({ AWS_DEFAULT_REGION: 'eu-west-1' }).region, 'eu-west-1');
  assert.equal(s3Settings({ AWS_REGION: 'ap-south-1', AWS_DEFAULT_REGION: 'eu-west-1' }).region, 'ap-south-1');
  assert.equal(s3Settings({ AWS_ACCESS_KEY_ID: '' }).accessKeyId, undefined);
});
