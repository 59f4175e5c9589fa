// The team API's authentication with an OpenID provider: a real JWKS served over HTTP on
// 127.0.0.1 (keys made with jose), tokens signed with jose's SignJWT, and jose's own remote key
// set fetching them. Each way a token can be wrong is refused with a 401 that names the check.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SignJWT, UnsecuredJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import {
  createAuthenticator,
  highestScope,
  jwtSettings,
  probeJwks,
  tokenKeyId,
  type Authenticate,
  type JwtSettings,
} from '../../../src/api/auth.js';
import { KeyRing, createKey } from '../../../src/api/keys.js';
import { ApiProblem } from '../../../src/api/problems.js';
import { UsageError } from '../../../src/core/errors.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'faheem-api';

let dir: string;
let server: http.Server;
let jwksUrl: string;
let fetches = 0;
let rsa: { privateKey: CryptoKey; publicKey: CryptoKey };
let ec: { privateKey: CryptoKey; publicKey: CryptoKey };
let ed: { privateKey: CryptoKey; publicKey: CryptoKey };
let stranger: { privateKey: CryptoKey; publicKey: CryptoKey };
let keys: KeyRing;
let fkKey: string;
let auth: Authenticate;
let settings: JwtSettings;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'faheem-auth-'));
  rsa = await generateKeyPair('RS256', { extractable: true });
  ec = await generateKeyPair('ES256', { extractable: true });
  ed = await generateKeyPair('EdDSA', { extractable: true });
  stranger = await generateKeyPair('RS256', { extractable: true });
  const published: JWK[] = [
    { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
    { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    { ...(await exportJWK(ed.publicKey)), kid: 'ed-1', alg: 'EdDSA', use: 'sig' },
  ];
  server = http.createServer((req, res) => {
    fetches++;
    if (req.url !== '/jwks') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  const file = path.join(dir, 'keys.json');
  fkKey = (await createKey(file, { tenant: 'acme', scope: 'write', name: 'ci-bot' })).key;
  keys = new KeyRing(file);
  settings = jwtSettings({ jwksUrl, jwtIssuer: ISSUER, jwtAudience: AUDIENCE })!;
  auth = createAuthenticator(keys, settings);
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

const claims = { tenant: 'acme', scope: 'openid write' };

/** A token as the provider makes it; `change` alters what it would be. */
function token(
  change: {
    claims?: Record<string, unknown>;
    key?: CryptoKey | Uint8Array;
    alg?: string;
    kid?: string;
    iss?: string;
    aud?: string;
    sub?: string | null;
    exp?: string | number | null;
    nbf?: string | number;
  } = {},
): Promise<string> {
  const jwt = new SignJWT({ ...claims, ...change.claims })
    .setProtectedHeader({ alg: change.alg ?? 'RS256', kid: change.kid ?? 'rsa-1' })
    .setIssuer(change.iss ?? ISSUER)
    .setAudience(change.aud ?? AUDIENCE)
    .setIssuedAt();
  if (change.sub !== null) jwt.setSubject(change.sub ?? 'user-42');
  if (change.exp !== null) jwt.setExpirationTime(change.exp ?? '5m');
  if (change.nbf !== undefined) jwt.setNotBefore(change.nbf);
  return jwt.sign(change.key ?? rsa.privateKey);
}

/** The problem `auth` answers for a bearer value (it must refuse it). */
async function refusal(value: string, a: Authenticate = auth): Promise<ApiProblem> {
  try {
    const caller = await a(`Bearer ${value}`);
    assert.fail(`accepted as ${JSON.stringify(caller)}`);
  } catch (err) {
    assert.ok(err instanceof ApiProblem, String(err));
    return err;
  }
}

/** A 401 that says `detail` and never echoes the token. */
async function assertRefused(value: string, detail: RegExp): Promise<void> {
  const p = await refusal(value);
  assert.equal(p.status, 401, p.detail);
  assert.match(p.detail, detail);
  assert.match(p.headers['WWW-Authenticate'] ?? '', /^Bearer realm="faheem"/);
  for (const part of value.split('.')) if (part.length > 8) assert.ok(!p.detail.includes(part), 'the detail does not echo the token');
}

test("a provider's token becomes a caller of its tenant, with the highest scope listed and jwt:<sub> as its key", async () => {
  assert.deepEqual(await auth(`Bearer ${await token()}`), { tenant: 'acme', keyId: 'jwt:user-42', scope: 'write' });
  const admin = await token({ claims: { tenant: 'other', scope: ['read', 'admin', 'write'] }, sub: 'svc@clients' });
  assert.deepEqual(await auth(`Bearer ${admin}`), { tenant: 'other', keyId: 'jwt:svc@clients', scope: 'admin' });
  // ES256 and EdDSA keys of the same set.
  assert.equal((await auth(`Bearer ${await token({ alg: 'ES256', kid: 'ec-1', key: ec.privateKey })}`)).tenant, 'acme');
  assert.equal((await auth(`Bearer ${await token({ alg: 'EdDSA', kid: 'ed-1', key: ed.privateKey })}`)).tenant, 'acme');
  // A clock a few seconds off is tolerated.
  const now = Math.floor(Date.now() / 1000);
  assert.equal((await auth(`Bearer ${await token({ exp: now - 5, nbf: now + 5 })}`)).scope, 'write');
});

test('keys of the keys file still work beside tokens, exactly as before', async () => {
  assert.deepEqual(await auth(`Bearer ${fkKey}`), {
    tenant: 'acme',
    keyId: fkKey.slice(3, 15),
    keyName: 'ci-bot',
    scope: 'write',
  });
  const unknown = await refusal('fk_000000000000_' + 'A'.repeat(43));
  assert.equal(unknown.detail, 'unknown or revoked key', 'an fk_ value is never tried as a token');
  assert.equal(unknown.headers['WWW-Authenticate'], 'Bearer realm="faheem"');
  for (const header of [undefined, '', 'Basic abc', 'Bearer', 'Bearer a b']) {
    await assert.rejects(
      auth(header),
      (err: ApiProblem) => err.status === 401 && /Bearer <key>/.test(err.detail) && /idp\.example/.test(err.detail),
    );
  }
  // Without a provider, any other value is an unknown key.
  const keysOnly = createAuthenticator(keys);
  const p = await refusal(await token(), keysOnly);
  assert.equal(p.status, 401);
  assert.equal(p.detail, 'unknown or revoked key');
});

test('a wrong issuer, a wrong audience, an expired or early token and a missing exp or sub are refused', async () => {
  await assertRefused(await token({ iss: 'https://evil.example/' }), /issuer is not https:\/\/idp\.example\.test\//);
  await assertRefused(await token({ aud: 'someone-else' }), /audience does not include faheem-api/);
  await assertRefused(await token({ exp: Math.floor(Date.now() / 1000) - 3600 }), /has expired/);
  await assertRefused(await token({ nbf: Math.floor(Date.now() / 1000) + 3600 }), /not valid yet/);
  await assertRefused(await token({ exp: null }), /no `exp` claim/);
  await assertRefused(await token({ sub: null }), /no `sub` claim/);
});

test('an unknown kid, a key not in the set, HS256 with the public key as secret and alg none are refused', async () => {
  await assertRefused(await token({ kid: 'nobody', key: stranger.privateKey }), /no key of the provider's JWKS matches/);
  // A known kid, signed by another key.
  await assertRefused(await token({ key: stranger.privateKey }), /signature does not verify/);
  // The classic confusion: the provider's public key (PEM, as anyone may fetch it) used as an HMAC secret.
  const pem = new TextEncoder().encode(await exportSPKI(rsa.publicKey));
  await assertRefused(await token({ alg: 'HS256', key: pem }), /algorithm is not allowed \(only RS256, ES256, EdDSA\)/);
  const unsecured = new UnsecuredJWT({ ...claims })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('user-42')
    .setExpirationTime('5m')
    .encode();
  await assertRefused(unsecured, /algorithm is not allowed/);
  // RS384 is a good algorithm, but not one of the three.
  await assertRefused(await token({ alg: 'RS384', key: (await generateKeyPair('RS384')).privateKey }), /algorithm is not allowed/);
  await assertRefused('not-a-token', /nor a valid JWT/);
  await assertRefused('a.b.c', /nor a valid JWT/);
});

test('a bad or missing tenant claim, and a scope claim without read, write or admin, are refused', async () => {
  await assertRefused(await token({ claims: { tenant: '../other' } }), /`tenant` claim: tenant "\.\.\/other": 1 to 63 lowercase/);
  await assertRefused(await token({ claims: { tenant: 'Acme' } }), /`tenant` claim/);
  await assertRefused(await token({ claims: { tenant: 7 } }), /no `tenant` claim naming a tenant/);
  await assertRefused(await token({ claims: { tenant: undefined } }), /no `tenant` claim/);
  await assertRefused(await token({ claims: { scope: 'openid profile' } }), /`scope` claim grants none of read, write, admin/);
  await assertRefused(await token({ claims: { scope: ['writer'] } }), /grants none/);
});

test('the claims may be named otherwise', async () => {
  const custom = createAuthenticator(
    keys,
    jwtSettings({ jwksUrl, jwtIssuer: ISSUER, jwtAudience: AUDIENCE, jwtTenantClaim: 'https://faheem/org', jwtScopeClaim: 'roles' })!,
  );
  const t = await token({ claims: { 'https://faheem/org': 'team-a', roles: ['read'], tenant: 'ignored', scope: 'admin' } });
  assert.deepEqual(await custom(`Bearer ${t}`), { tenant: 'team-a', keyId: 'jwt:user-42', scope: 'read' });
});

test('the key set is fetched once and kept; a provider that cannot be reached is a 503, not a 401', async () => {
  const before = fetches;
  for (let i = 0; i < 3; i++) await auth(`Bearer ${await token()}`);
  assert.equal(fetches, before, 'cached by the first test');
  // A port nothing listens on (any more).
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const down = createAuthenticator(
    keys,
    jwtSettings({ jwksUrl: `http://127.0.0.1:${port}/jwks`, jwtIssuer: ISSUER, jwtAudience: AUDIENCE })!,
  );
  const p = await refusal(await token(), down);
  assert.equal(p.status, 503);
  assert.equal(p.headers['Retry-After'], '30');
  const missing = createAuthenticator(keys, jwtSettings({ jwksUrl: jwksUrl + '-gone', jwtIssuer: ISSUER, jwtAudience: AUDIENCE })!);
  assert.equal((await refusal(await token(), missing)).status, 503);
  // A malformed token is refused before the provider is asked.
  assert.equal((await refusal('a.b.c', down)).status, 401);
});

test('probeJwks says whether the key set can be read', async () => {
  assert.equal(await probeJwks(settings), undefined);
  assert.match((await probeJwks({ ...settings, jwksUrl: new URL(jwksUrl + '-gone') }))!, /could not be read: Expected 200 OK/);
});

test('the flags go together; the JWKS URL is https unless loopback', () => {
  const base = { jwksUrl: 'https://idp.example/.well-known/jwks.json', jwtIssuer: ISSUER, jwtAudience: AUDIENCE };
  assert.equal(jwtSettings({}), undefined);
  assert.deepEqual(jwtSettings(base), {
    jwksUrl: new URL(base.jwksUrl),
    issuer: ISSUER,
    audience: AUDIENCE,
    tenantClaim: 'tenant',
    scopeClaim: 'scope',
  });
  assert.throws(() => jwtSettings({ jwksUrl: base.jwksUrl }), /go together: add --jwt-issuer and --jwt-audience/);
  assert.throws(() => jwtSettings({ jwtIssuer: ISSUER, jwtAudience: AUDIENCE }), /add --jwks-url/);
  assert.throws(() => jwtSettings({ jwtTenantClaim: 'org' }), /--jwt-tenant-claim needs --jwks-url/);
  assert.throws(() => jwtSettings({ ...base, jwksUrl: 'http://idp.example/jwks' }), /must be https/);
  assert.throws(() => jwtSettings({ ...base, jwksUrl: 'http://10.0.0.5/jwks' }), /must be https/);
  assert.throws(() => jwtSettings({ ...base, jwksUrl: 'ftp://127.0.0.1/jwks' }), /must be https/);
  assert.throws(() => jwtSettings({ ...base, jwksUrl: 'not a url' }), /is not a URL/);
  assert.throws(() => jwtSettings({ ...base, jwksUrl: 'https://u:p@idp.example/jwks' }), /user name or password/);
  assert.throws(() => jwtSettings({ ...base, jwtAudience: ' ' }), /--jwt-audience may not be empty/);
  assert.throws(() => jwtSettings({ ...base, jwtScopeClaim: '' }), UsageError);
  for (const loopback of ['http://127.0.0.1:8080/jwks', 'http://localhost/jwks', 'http://[::1]:9/jwks'])
    assert.equal(jwtSettings({ ...base, jwksUrl: loopback })?.jwksUrl.href, new URL(loopback).href);
});

test('highestScope and tokenKeyId', () => {
  assert.equal(highestScope('read write'), 'write');
  assert.equal(highestScope(['admin', 'read']), 'admin');
  assert.equal(highestScope('readwrite'), undefined);
  assert.equal(highestScope([1, 'read']), 'read');
  assert.equal(highestScope(undefined), undefined);
  assert.equal(tokenKeyId('acme', 'auth0|abc'), 'jwt:auth0|abc');
  // A subject events cannot carry (too long, or with a control character or a backquote): a short hash.
  for (const sub of ['x'.repeat(200), 'a\nb', 'a`b']) assert.match(tokenKeyId('acme', sub), /^jwt:#[0-9a-f]{16}$/);
  assert.notEqual(tokenKeyId('acme', 'x'.repeat(200)), tokenKeyId('acme', 'y'.repeat(200)));
});
