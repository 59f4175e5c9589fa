// The quick CLI paths: which commands they take, when they may use the HTTP API, and the payloads
// they read and write (the e2e side is test/e2e/cli-quick.test.ts).
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { quickCommand, quickEndpoint } from '../../../src/cli/quick.js';
import { httpAccessFile, jsonPayload, readJsonPayload, writeHttpAccess } from '../../../src/client/temporal-http.js';

test('only status [--json], pause [--now] [-q] and send [-q] with one plain id are quick', () => {
  assert.deepEqual(quickCommand(['send', 'conv-1', 'hello there', '-q']), {
    kind: 'send',
    id: 'conv-1',
    message: 'hello there',
    quiet: true,
  });
  assert.deepEqual(quickCommand(['status', 'conv-1']), { kind: 'status', id: 'conv-1', json: false });
  assert.deepEqual(quickCommand(['status', '--json', 'conv-1']), { kind: 'status', id: 'conv-1', json: true });
  assert.deepEqual(quickCommand(['pause', 'conv-1', '--now', '-q']), { kind: 'pause', id: 'conv-1', now: true, quiet: true });
  for (const argv of [
    ['status'],
    ['status', 'a', 'b'],
    ['status', 'conv-1', '--help'],
    ['status', 'conv-1', '--json=1'],
    ['pause', 'conv-1', '--reason', 'x'],
    ['send', 'conv-1'],
    ['send', 'conv-1', 'hi', '--run'],
    ['send', 'conv-1', '   '],
    ['send', 'conv-1', 'x'.repeat(100_001)],
    ['resume', 'conv-1'],
    ['status', '../etc'],
    ['status', 'a/b'],
    [],
  ])
    assert.equal(quickCommand(argv), undefined, argv.join(' '));
});

test('the HTTP API is used only for a plain local connection, or where FAHEEM_TEMPORAL_HTTP names it', async () => {
  const home = await mkdtemp(path.join(tmpdir(), 'quick-home-'));
  try {
    const faheemHome = path.join(home, '.faheem');
    const base = { HOME: home, FAHEEM_HOME: faheemHome };
    // No access left by `faheem server` for the port: the gRPC path (the HTTP API answers no one else).
    assert.equal(quickEndpoint(base), undefined);
    writeHttpAccess(faheemHome, 7233, { url: 'http://127.0.0.1:7243', host: 'faheem-abc.invalid' });
    writeHttpAccess(faheemHome, 27300, { url: 'http://127.0.0.1:27310', host: 'faheem-def.invalid' });
    assert.deepEqual(quickEndpoint(base), { base: 'http://127.0.0.1:7243', namespace: 'default', host: 'faheem-abc.invalid' });
    assert.deepEqual(quickEndpoint({ ...base, TEMPORAL_ADDRESS: '127.0.0.1:27300', TEMPORAL_NAMESPACE: 'ns' }), {
      base: 'http://127.0.0.1:27310',
      namespace: 'ns',
      host: 'faheem-def.invalid',
    });
    assert.equal((await stat(httpAccessFile(faheemHome, 7233))).mode & 0o077, 0, 'only the user reads the access');
    assert.deepEqual(
      quickEndpoint({ ...base, TEMPORAL_ADDRESS: 'temporal.example:7233', FAHEEM_TEMPORAL_HTTP: 'http://temporal.example:7243' }),
      {
        base: 'http://temporal.example:7243',
        namespace: 'default',
      },
    );
    assert.deepEqual(
      quickEndpoint({ ...base, FAHEEM_TEMPORAL_HTTP: 'http://127.0.0.1:9', FAHEEM_TEMPORAL_HTTP_HOST: 'faheem-x.invalid' }),
      {
        base: 'http://127.0.0.1:9',
        namespace: 'default',
        host: 'faheem-x.invalid',
      },
    );
    // An access file naming a host that is not this machine is not followed.
    writeHttpAccess(faheemHome, 27400, { url: 'http://temporal.example:27410', host: 'faheem-x.invalid' });
    const refused: Record<string, string>[] = [
      { TEMPORAL_ADDRESS: '127.0.0.1:27400' },
      { TEMPORAL_ADDRESS: 'temporal.example:7233' }, // not loopback, not named
      { FAHEEM_TEMPORAL_HTTP: 'off' },
      { FAHEEM_TEMPORAL_HTTP: 'https://temporal.example:7243' }, // TLS: the full client
      { FAHEEM_TEMPORAL_HTTP: 'http://x:1/prefix' },
      { FAHEEM_TEMPORAL_HTTP: 'not a url' },
      { TEMPORAL_API_KEY: 'k' },
      { TEMPORAL_PROFILE: 'prod' },
      { TEMPORAL_TLS: 'true' },
      { TEMPORAL_CONFIG_FILE: '/x.toml' },
      { FAHEEM_ENCRYPTION_KEY: 'k' },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' },
    ];
    for (const env of refused) assert.equal(quickEndpoint({ ...base, ...env }), undefined, JSON.stringify(env));
    assert.ok(quickEndpoint({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_SDK_DISABLED: 'true' }));
    // An envconfig file may hold a profile with TLS or a key: the full client reads it.
    await mkdir(path.join(home, '.config', 'temporalio'), { recursive: true });
    await writeFile(path.join(home, '.config', 'temporalio', 'temporal.toml'), '[profile.default]\n');
    assert.equal(quickEndpoint(base), undefined);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test('json/plain payloads round-trip; any other payload is left to the SDK', () => {
  assert.deepEqual(readJsonPayload(jsonPayload({ now: true })), { value: { now: true } });
  assert.deepEqual(readJsonPayload(jsonPayload(null)), { value: null });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  assert.deepEqual(readJsonPayload({ metadata: { encoding: b64('json/plain'), type: b64('Keyword') }, data: b64('"paused"') }), {
    value: 'paused',
  });
  for (const payload of [
    { metadata: { encoding: b64('binary/encrypted') }, data: b64('x') },
    { metadata: { encoding: b64('json/plain'), 'temporal.io/external-storage': b64('1') }, data: b64('{}') },
    { metadata: { encoding: b64('json/plain') }, data: b64('{not json') },
    { metadata: { encoding: b64('json/plain') } },
    'a string',
    null,
  ])
    assert.equal(readJsonPayload(payload), undefined, JSON.stringify(payload));
});
