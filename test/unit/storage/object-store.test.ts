import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { DefaultPayloadConverter } from '@temporalio/common';
import { FaheemError } from '../../../src/core/errors.js';
import {
  FileObjectStore,
  ObjectStoreError,
  checkKey,
  objectStore,
  parseObjectStoreUrl,
  s3ClientConfig,
  S3ObjectStore,
} from '../../../src/storage/object-store.js';
import { externalStorage } from '../../../src/storage/local-payloads.js';
import { s3Settings, storeSettings } from '../../../src/settings/store.js';

async function tempStore(maxBytes?: number): Promise<{ store: FileObjectStore; root: string; [Symbol.asyncDispose](): Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'faheem-store-'));
  return { store: new FileObjectStore(root, maxBytes), root, [Symbol.asyncDispose]: () => rm(root, { recursive: true, force: true }) };
}

test('FAHEEM_OBJECT_STORE: s3 and file URLs, and a clear error for anything else', () => {
  assert.deepEqual(parseObjectStoreUrl('s3://my-bucket/team/a/'), { kind: 's3', bucket: 'my-bucket', prefix: 'team/a' });
  assert.deepEqual(parseObjectStoreUrl('s3://my-bucket'), { kind: 's3', bucket: 'my-bucket', prefix: '' });
  assert.deepEqual(parseObjectStoreUrl('file:///srv/faheem'), { kind: 'file', root: '/srv/faheem' });
  for (const bad of ['/srv/faheem', 'http://x/y', 's3://UPPER/x', 'file://host/x', 's3://key:secret@bucket/x']) {
    assert.throws(
      () => parseObjectStoreUrl(bad),
      (err: unknown) =>
        err instanceof ObjectStoreError && err instanceof FaheemError && err.code === 'object_store' && err.reason === 'config',
      bad,
    );
  }
});

test('unset, there is no store: one host as before', () => {
  assert.equal(objectStore(storeSettings({})), undefined);
  assert.equal(objectStore(storeSettings({ FAHEEM_OBJECT_STORE: '  ' })), undefined);
  const storage = externalStorage(storeSettings({ FAHEEM_PAYLOAD_DIR: '/tmp/x' }));
  assert.deepEqual(
    storage.drivers.map((d) => d.name),
    ['faheem-local-files'],
  );
});

test('the S3 settings come from the standard AWS variables; an endpoint means path-style', () => {
  const config = s3ClientConfig(
    s3Settings({
      AWS_ENDPOINT_URL: 'http://generic:1',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:8333',
      AWS_ACCESS_KEY_ID: 'id',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'eu-west-1',
    }),
  );
  assert.equal(config.endpoint, 'http://127.0.0.1:8333');
  assert.equal(config.forcePathStyle, true);
  assert.equal(config.region, 'eu-west-1');
  assert.deepEqual(config.credentials, { accessKeyId: 'id', secretAccessKey: 'secret' });
  assert.equal(s3ClientConfig(s3Settings({ AWS_ENDPOINT_URL: 'http://generic:1' })).endpoint, 'http://generic:1');
  const aws = s3ClientConfig(s3Settings({}));
  assert.equal(aws.endpoint, undefined);
  assert.equal(aws.forcePathStyle, undefined);
  assert.equal(aws.credentials, undefined, 'no keys: the SDK default chain');
  const store = objectStore(storeSettings({ FAHEEM_OBJECT_STORE: 's3://b-1/p', AWS_REGION: 'us-east-1' }));
  assert.ok(store instanceof S3ObjectStore);
  assert.equal(store.location, 's3://b-1/p');
});

test('keys stay inside the store', () => {
  assert.equal(checkKey('conversations/c1/bundles/3.bundle'), 'conversations/c1/bundles/3.bundle');
  // What Temporal's S3 driver makes of a workflow id with S3's other safe characters.
  const driverKey = `payloads/v0/ns/default/wi/${encodeURIComponent("it's(1)!*")}/d/sha256/ab`;
  assert.equal(checkKey(driverKey), driverKey);
  for (const bad of ['', '/abs', 'a//b', 'a/../b', '..', 'a/./b', 'a b', 'a/b/', 'a\\b']) {
    assert.throws(() => checkKey(bad), ObjectStoreError, JSON.stringify(bad));
  }
});

test('a file store puts, gets, heads and lists; a stream and bytes alike', async () => {
  await using t = await tempStore();
  const { store } = t;
  await store.put('a/one.bin', new TextEncoder().encode('one'));
  await store.put('a/b/two.bin', Readable.from([Buffer.from('t'), Buffer.from('wo')]));
  await store.put('c/three.bin', new Uint8Array([3]));
  assert.equal(Buffer.from(await store.getBytes('a/one.bin')).toString(), 'one');
  assert.equal(Buffer.from(await store.getBytes('a/b/two.bin')).toString(), 'two');
  assert.deepEqual(await store.head('a/b/two.bin'), { key: 'a/b/two.bin', size: 3 });
  assert.equal(await store.head('a/none'), undefined);
  assert.deepEqual(await store.list('a/'), ['a/b/two.bin', 'a/one.bin']);
  assert.deepEqual(await store.list(''), ['a/b/two.bin', 'a/one.bin', 'c/three.bin']);
  await assert.rejects(store.getBytes('a/none'), (err: unknown) => err instanceof ObjectStoreError && err.reason === 'not_found');
  await store.put('a/one.bin', new TextEncoder().encode('uno'));
  assert.equal(Buffer.from(await store.getBytes('a/one.bin')).toString(), 'uno', 'a put replaces');
});

test('an object past the cap is refused with a clear error and leaves nothing behind', async () => {
  await using t = await tempStore(8);
  const { store, root } = t;
  await assert.rejects(
    store.put('big/bytes', new Uint8Array(9)),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'too_large' && /cap of 8 bytes/.test(err.message),
  );
  await assert.rejects(
    store.put('big/stream', Readable.from([Buffer.alloc(5), Buffer.alloc(5)])),
    (err: unknown) => err instanceof ObjectStoreError && err.reason === 'too_large',
  );
  assert.equal(await store.head('big/stream'), undefined);
  assert.deepEqual(await readdir(path.join(root, 'big')).catch(() => []), [], 'no partial file');
  await store.put('small', new Uint8Array(8));
});

test('with a store set, large payloads go there through the S3 driver and come back', async () => {
  await using t = await tempStore();
  const env = { FAHEEM_OBJECT_STORE: `file://${t.root}`, FAHEEM_PAYLOAD_DIR: path.join(t.root, 'local') };
  const storage = externalStorage(storeSettings(env));
  assert.deepEqual(
    storage.drivers.map((d) => d.type),
    ['aws.s3driver', 'faheem.local-files'],
  );
  const driver = storage.drivers[0]!;
  const payload = new DefaultPayloadConverter().toPayload({ big: 'x'.repeat(1000) });
  const context = { target: { kind: 'workflow', namespace: 'default', type: 'conversation', id: 'c1', runId: 'r1' } } as never;
  const [claim] = await driver.store(context, [payload]);
  const keys = await t.store.list('payloads/');
  assert.equal(keys.length, 1);
  assert.match(keys[0]!, /^payloads\/v0\/ns\/default\/wt\/conversation\/wi\/c1\/ri\/r1\/d\/sha256\/[0-9a-f]{64}$/);
  const [back] = await driver.retrieve({} as never, [claim!]);
  assert.deepEqual(new DefaultPayloadConverter().fromPayload(back!), { big: 'x'.repeat(1000) });
});
