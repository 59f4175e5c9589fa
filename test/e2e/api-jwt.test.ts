// `faheem api` with an OpenID provider, as a process against a real dev server and worker: the
// test serves a JWKS on 127.0.0.1 (keys made with jose) and signs tokens with them. A token names
// its tenant and scope; conversations it makes are its tenant's (another tenant's token gets 404),
// events name it `jwt:<sub>`, keys of the keys file keep working beside it, and the flags are
// checked together before anything connects.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';
import { tempDir } from '../support/temp-dirs.js';
import { startApiProcess, type ApiProcess } from '../support/api-process.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'faheem-api';

let h: Harness;
let api: ApiProcess | undefined;
let url: string;
let jwks: http.Server;
let jwksUrl: string;
let signing: CryptoKey;
let keysFile: string;

function script(_req: RecordedRequest): ScriptedReply {
  return { content: 'Hello from the agent.' };
}

/** A token of the provider for `tenant` with `scope`, subject `sub`. */
function token(tenant: string, scope: string, sub: string, expiresAt: string | number = '10m'): Promise<string> {
  return new SignJWT({ tenant, scope })
    .setProtectedHeader({ alg: 'ES256', kid: 'idp-1' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(expiresAt)
    .sign(signing);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, read field by field
type Json = any;

async function call(
  method: string,
  route: string,
  bearer: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url + route, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

before(async () => {
  const pair = await generateKeyPair('ES256');
  signing = pair.privateKey;
  const published = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'idp-1', alg: 'ES256', use: 'sig' }] };
  jwks = http.createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(published));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;

  h = await startHarness({ name: 'api-jwt', script });
  await h.startWorker();
  const dir = await tempDir('faheem-api-jwt-');
  keysFile = path.join(dir, 'keys.json');
  api = await startApiProcess(
    [
      '--port',
      '0',
      '--keys',
      keysFile,
      '--workspaces',
      path.join(dir, 'workspaces'),
      '--jwks-url',
      jwksUrl,
      '--jwt-issuer',
      ISSUER,
      '--jwt-audience',
      AUDIENCE,
    ],
    h.env,
  );
  url = api.url;
});

after(async () => {
  await api?.stop();
  await h?.close();
  await new Promise<void>((resolve) => jwks?.close(() => resolve()));
});

test("a token's tenant owns what it makes: create, read and events as jwt:<sub>; another tenant's token gets 404", async () => {
  const alice = await token('acme', 'openid write', 'alice');
  const created = await call('POST', '/v1/conversations', alice, { message: 'Hello', id: 'by-token' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.id, 'acme:by-token');
  assert.equal(created.body.tenant, 'acme');

  const done = await waitFor('the conversation to finish', async () => {
    const r = await call('GET', '/v1/conversations/acme%3Aby-token', alice);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.status === 'finished' ? r.body : undefined;
  });
  assert.equal(done.finalMessage, 'Hello from the agent.');
  const events = await call('GET', '/v1/conversations/acme%3Aby-token/events', alice);
  assert.equal(events.status, 200);
  assert.deepEqual(events.body.data[0].by, { tenant: 'acme', key: 'jwt:alice' }, 'the first message names the token’s subject');

  // Another tenant's token, even an admin one, sees nothing of it.
  const bob = await token('other', 'admin', 'bob');
  for (const route of ['/v1/conversations/acme%3Aby-token', '/v1/conversations/acme%3Aby-token/events']) {
    const r = await call('GET', route, bob);
    assert.equal(r.status, 404, route);
    assert.ok(!JSON.stringify(r.body).includes('Hello'));
  }
  assert.equal((await call('POST', '/v1/conversations/acme%3Aby-token/close', bob, {})).status, 404);
  const listed = await call('GET', '/v1/conversations', bob);
  assert.equal(listed.status, 200);
  assert.ok(!listed.body.data.some((c: { id: string }) => c.id.startsWith('acme:')));
  const own = await call('GET', '/v1/conversations', alice);
  assert.ok(own.body.data.some((c: { id: string }) => c.id === 'acme:by-token'));
});

test("a read token may only read; a refused token is a 401 that does not echo it; the keys file's keys still work", async () => {
  const reader = await token('acme', 'read', 'carol');
  assert.equal((await call('GET', '/v1/conversations', reader)).status, 200);
  const refused = await call('POST', '/v1/conversations', reader, { message: 'Hello' });
  assert.equal(refused.status, 403);

  const expired = await token('acme', 'write', 'alice', Math.floor(Date.now() / 1000) - 3600);
  const r = await call('GET', '/v1/conversations', expired);
  assert.equal(r.status, 401);
  assert.equal(r.headers.get('content-type'), 'application/problem+json');
  assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer realm="faheem", error="invalid_token"/);
  assert.match(r.body.detail, /expired/);
  assert.ok(!JSON.stringify(r.body).includes(expired.split('.')[1]!), 'the token is not echoed');
  assert.ok(!api!.stderr().includes(expired.split('.')[1]!), 'nor logged');
  const badTenant = await call('GET', '/v1/conversations', await token('../acme', 'write', 'mallory'));
  assert.equal(badTenant.status, 401);
  assert.match(badTenant.body.detail, /`tenant` claim/);

  // A key made while the API runs is read from the keys file as before.
  const made = await h.cli(['api-key', 'create', '--tenant', 'acme', '--scope', 'read', '--keys', keysFile]);
  const key = made.stdout.trim();
  const byKey = await call('GET', '/v1/conversations', key);
  assert.equal(byKey.status, 200);
  assert.ok(
    byKey.body.data.some((c: { id: string }) => c.id === 'acme:by-token'),
    'the same tenant, by key or by token',
  );
  assert.equal((await call('GET', '/v1/conversations', 'fk_000000000000_' + 'A'.repeat(43))).status, 401);
  await waitFor(
    'the API to say which tokens it accepts',
    async () => /accepting tokens of https:\/\/idp\.example\.test\/ for faheem-api/.test(api!.stderr()) || undefined,
  );

  const doc = (await call('GET', '/openapi.json', undefined)).body;
  assert.match(doc.components.securitySchemes.bearer.description, /JWT from https:\/\/idp\.example\.test\//);
});

test('the token flags are checked together before anything connects', async () => {
  const cases: [string[], RegExp][] = [
    [['--jwks-url', jwksUrl], /--jwks-url, --jwt-issuer and --jwt-audience go together: add --jwt-issuer and --jwt-audience/],
    [['--jwks-url', 'http://idp.example.test/jwks', '--jwt-issuer', ISSUER, '--jwt-audience', AUDIENCE], /must be https/],
    [['--jwt-tenant-claim', 'org'], /--jwt-tenant-claim needs --jwks-url/],
  ];
  for (const [flags, message] of cases) {
    // TEMPORAL_ADDRESS points nowhere: a flag check that came after connecting would not be reached.
    const r = await h.cli(['api', '--port', '0', '--keys', keysFile, ...flags], {
      reject: false,
      env: { TEMPORAL_ADDRESS: '127.0.0.1:1' },
    });
    assert.notEqual(r.exitCode, 0, flags.join(' '));
    assert.match(r.stderr, message);
  }
});
