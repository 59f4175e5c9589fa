import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  KeyRing,
  apiSecret,
  createKey,
  findKey,
  limitsOf,
  readKeysFile,
  revokeKey,
  scopeAllows,
  DEFAULT_LIMITS,
} from '../../../src/api/keys.js';
import { UsageError } from '../../../src/core/errors.js';

const dir = await mkdtemp(path.join(os.tmpdir(), 'faheem-keys-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(dir, `k${n++}`, 'keys.json');

test('a key is shown once and the file keeps only its hash, readable by its owner only', async () => {
  const file = fresh();
  const { key, entry } = await createKey(file, { tenant: 'acme', scope: 'write', name: 'ci-bot' });
  assert.match(key, /^fk_[a-f0-9]{12}_[A-Za-z0-9_-]{43}$/);
  const text = await readFile(file, 'utf8');
  assert.ok(!text.includes(key) && !text.includes(key.slice(16)), 'the key is not in the file');
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  const keys = await readKeysFile(file);
  assert.deepEqual(findKey(keys, key), entry);
  assert.deepEqual(Object.keys(keys.tenants), ['acme'], 'the tenant gets an entry a person may edit');
});

test('an unknown, altered or malformed key finds nothing', async () => {
  const file = fresh();
  const { key } = await createKey(file, { tenant: 'acme', scope: 'read' });
  const keys = await readKeysFile(file);
  const last = key.at(-1) === 'A' ? 'B' : 'A';
  assert.equal(findKey(keys, key.slice(0, -1) + last), undefined);
  assert.equal(findKey(keys, 'fk_000000000000_' + key.slice(16)), undefined);
  assert.equal(findKey(keys, ''), undefined);
  assert.equal(findKey(keys, `${key} `), undefined);
});

test('revoke removes a key by id or name; an ambiguous or unknown one is a UsageError', async () => {
  const file = fresh();
  const a = await createKey(file, { tenant: 'acme', scope: 'write', name: 'bot' });
  const b = await createKey(file, { tenant: 'other', scope: 'write', name: 'bot' });
  await assert.rejects(revokeKey(file, 'bot'), UsageError);
  await revokeKey(file, a.entry.id);
  assert.equal(findKey(await readKeysFile(file), a.key), undefined);
  assert.ok(findKey(await readKeysFile(file), b.key));
  await assert.rejects(revokeKey(file, 'nobody'), /no key "nobody"/);
});

test('a bad tenant, a taken name and a malformed file are refused with what is wrong', async () => {
  const file = fresh();
  await assert.rejects(createKey(file, { tenant: 'Acme/..', scope: 'write' }), UsageError);
  await createKey(file, { tenant: 'acme', scope: 'write', name: 'bot' });
  await assert.rejects(createKey(file, { tenant: 'acme', scope: 'read', name: 'bot' }), /already has a key named/);
  await writeFile(file, '{"keys": [{"id": 1}]}');
  await assert.rejects(readKeysFile(file), /keys\.0\.id/);
  await writeFile(file, 'not json');
  await assert.rejects(readKeysFile(file), /not JSON/);
});

test('scopes nest: read < write < admin', () => {
  assert.ok(scopeAllows('write', 'read') && scopeAllows('admin', 'write') && scopeAllows('read', 'read'));
  assert.ok(!scopeAllows('read', 'write') && !scopeAllows('write', 'admin'));
});

test("a tenant's limits are the file's, else the defaults", async () => {
  const file = fresh();
  await createKey(file, { tenant: 'acme', scope: 'write' });
  const keys = await readKeysFile(file);
  assert.deepEqual(limitsOf(keys, 'acme'), DEFAULT_LIMITS);
  keys.tenants.acme = { maxRunning: 2 };
  assert.deepEqual(limitsOf(keys, 'acme'), { ...DEFAULT_LIMITS, maxRunning: 2 });
});

test('the key ring reads the file again when it changes, and keeps the last good one when an edit breaks it', async () => {
  const file = fresh();
  const ring = new KeyRing(file);
  assert.equal((await ring.current()).keys.length, 0, 'no file: no keys');
  const a = await createKey(file, { tenant: 'acme', scope: 'write' });
  assert.ok(findKey(await ring.current(), a.key));
  await revokeKey(file, a.entry.id);
  assert.equal(findKey(await ring.current(), a.key), undefined, 'a revoked key stops at once');
  const b = await createKey(file, { tenant: 'acme', scope: 'write' });
  assert.ok(findKey(await ring.current(), b.key));
  await writeFile(file, '{ broken');
  assert.ok(findKey(await ring.current(), b.key), 'a broken edit keeps the keys last read');
});

test('keys made and revoked at the same moment are all kept, and a revocation is not undone', async () => {
  const file = fresh();
  const first = await createKey(file, { tenant: 'acme', scope: 'write' });
  const made = await Promise.all([
    ...Array.from({ length: 10 }, (_, i) => createKey(file, { tenant: 'acme', scope: 'read', name: `k${i}` })),
    revokeKey(file, first.entry.id).then(() => undefined),
  ]);
  const keys = await readKeysFile(file);
  for (const m of made) if (m) assert.ok(findKey(keys, m.key), `${m.entry.name} is kept`);
  assert.equal(keys.keys.length, 10);
  assert.equal(findKey(keys, first.key), undefined, 'the revoked key stays revoked');
});

test('the API secret is made once, readable by its owner only, and read again after', async () => {
  const file = path.join(dir, 'secret', 'cursor.key');
  const [a, b] = await Promise.all([apiSecret(file), apiSecret(file)]);
  assert.deepEqual(a, b, 'two starts at once agree');
  assert.equal(a.length, 32);
  assert.deepEqual(await apiSecret(file), a);
  assert.equal((await stat(file)).mode & 0o777, 0o600);
});
