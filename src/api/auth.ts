// Who is calling the team API: `Authorization: Bearer <value>` becomes a Caller. A value shaped
// like one of our keys (`fk_…`) is looked up in the keys file; with an OpenID provider configured
// (`faheem api --jwks-url … --jwt-issuer … --jwt-audience …`), any other value is verified as a
// JWT by jose against the provider's published keys. Nothing here logs or echoes a bearer value.
import { DEFAULT_SCOPE_CLAIM, DEFAULT_TENANT_CLAIM } from './defaults.js';
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { actorProblem } from '../client/actors.js';
import { UsageError } from '../core/errors.js';
import { isLoopback } from '../server/exposure.js';
import { checkTenant } from '../client/tenants.js';
import type { Caller } from './conversations.js';
import { findKey, SCOPES, type KeyRing, type Scope } from './keys.js';
import { ApiProblem } from './problems.js';

/** Turns an `Authorization` header into the Caller it stands for, or throws an ApiProblem (401; 503 when the provider's keys cannot be read). */
export type Authenticate = (header: string | undefined) => Promise<Caller>;

/** Signature algorithms a token may use: asymmetric only, so never `none` and never HS* (a public key is not a secret). */
export const JWT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

/** How far `exp` and `nbf` may be off, for clocks that drift between the provider and this host. */
export const JWT_CLOCK_TOLERANCE_SECONDS = 30;

export { DEFAULT_SCOPE_CLAIM, DEFAULT_TENANT_CLAIM };

/** An OpenID provider whose tokens the API accepts. */
export interface JwtSettings {
  /** Where the provider publishes its signing keys (https, or http on loopback). */
  jwksUrl: URL;
  /** The `iss` a token must carry, exactly. */
  issuer: string;
  /** An `aud` a token must carry. */
  audience: string;
  /** The claim that names the caller's tenant (a tenant name). */
  tenantClaim: string;
  /** The claim listing scopes (space-separated or an array); the highest of read, write, admin wins. */
  scopeClaim: string;
}

/** The `faheem api` flags that configure tokens (commander's names). */
export interface JwtFlags {
  jwksUrl?: string | undefined;
  jwtIssuer?: string | undefined;
  jwtAudience?: string | undefined;
  jwtTenantClaim?: string | undefined;
  jwtScopeClaim?: string | undefined;
}

/**
 * The token settings the flags ask for, undefined when they ask for none, or a UsageError: the
 * JWKS URL, issuer and audience go together, the URL is https unless its host is loopback (keys
 * fetched in the clear could be swapped on the way), and claim names are not empty.
 */
export function jwtSettings(flags: JwtFlags): JwtSettings | undefined {
  const core = { '--jwks-url': flags.jwksUrl, '--jwt-issuer': flags.jwtIssuer, '--jwt-audience': flags.jwtAudience };
  const given = Object.entries(core).filter(([, v]) => v !== undefined);
  if (given.length === 0) {
    const stray = flags.jwtTenantClaim !== undefined ? '--jwt-tenant-claim' : flags.jwtScopeClaim !== undefined ? '--jwt-scope-claim' : '';
    if (stray) throw new UsageError(`${stray} needs --jwks-url, --jwt-issuer and --jwt-audience`);
    return undefined;
  }
  if (given.length < 3) {
    const missing = Object.keys(core).filter((k) => core[k as keyof typeof core] === undefined);
    throw new UsageError(`--jwks-url, --jwt-issuer and --jwt-audience go together: add ${missing.join(' and ')}`);
  }
  for (const [flag, value] of given) if (value!.trim() === '') throw new UsageError(`${flag} may not be empty`);
  let url: URL;
  try {
    url = new URL(flags.jwksUrl!);
  } catch {
    throw new UsageError(`--jwks-url ${JSON.stringify(flags.jwksUrl)} is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname)))
    throw new UsageError(`--jwks-url must be https (http only on loopback): ${url.protocol}//${url.host} is not`);
  if (url.username !== '' || url.password !== '') throw new UsageError('--jwks-url may not hold a user name or password');
  const claim = (flag: string, value: string | undefined, fallback: string) => {
    if (value === undefined) return fallback;
    if (value.trim() === '' || value.length > 200) throw new UsageError(`${flag}: a claim name of 1 to 200 characters`);
    return value;
  };
  return {
    jwksUrl: url,
    issuer: flags.jwtIssuer!,
    audience: flags.jwtAudience!,
    tenantClaim: claim('--jwt-tenant-claim', flags.jwtTenantClaim, DEFAULT_TENANT_CLAIM),
    scopeClaim: claim('--jwt-scope-claim', flags.jwtScopeClaim, DEFAULT_SCOPE_CLAIM),
  };
}

const CHALLENGE = 'Bearer realm="faheem"';
// RFC 6750 §3.1: a token that was presented and refused.
const INVALID_TOKEN = `${CHALLENGE}, error="invalid_token"`;

const refused = (detail: string, challenge = CHALLENGE) => new ApiProblem('unauthorized', detail, { 'WWW-Authenticate': challenge });

/** The API's authentication: keys from the keys file, and with `jwt`, tokens of that provider. */
export function createAuthenticator(keys: KeyRing, jwt?: JwtSettings): Authenticate {
  const verify = jwt ? jwtVerifier(jwt) : undefined;
  const howTo = jwt
    ? `send Authorization: Bearer <key> (a key from \`faheem api-key create\`, or a token from ${jwt.issuer})`
    : 'send Authorization: Bearer <key> (a key from `faheem api-key create`)';
  return async (header) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) throw refused(howTo);
    const presented = m[1]!;
    if (verify && !presented.startsWith('fk_')) return verify(presented);
    const entry = findKey(await keys.current(), presented);
    if (!entry) throw refused('unknown or revoked key');
    return { tenant: entry.tenant, keyId: entry.id, ...(entry.name !== undefined ? { keyName: entry.name } : {}), scope: entry.scope };
  };
}

/**
 * Verifies a token of `jwt`'s provider and answers its Caller: signed with one of the provider's
 * keys by an allowed algorithm, its issuer and audience, not expired (an `exp` is required) nor
 * early, a `sub`, a tenant and a scope. Any failure is a 401 saying what was wrong; a provider
 * whose keys cannot be fetched is a 503 (the token may be fine).
 */
export function jwtVerifier(jwt: JwtSettings): (token: string) => Promise<Caller> {
  // jose caches the keys (10 minutes) and fetches again for an unknown `kid` at most every 30 s.
  const keysOf = createRemoteJWKSet(jwt.jwksUrl, { timeoutDuration: 5_000 });
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keysOf, {
        issuer: jwt.issuer,
        audience: jwt.audience,
        algorithms: [...JWT_ALGORITHMS],
        clockTolerance: JWT_CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      throw tokenProblem(err, jwt);
    }
    return callerOfClaims(payload, jwt);
  };
}

/** The Caller a verified token's claims name, or a 401 saying which claim is wrong. */
export function callerOfClaims(payload: JWTPayload, jwt: Pick<JwtSettings, 'tenantClaim' | 'scopeClaim'>): Caller {
  const sub = payload.sub;
  if (typeof sub !== 'string' || sub === '') throw refused('the token has no subject (`sub`)', INVALID_TOKEN);
  const tenant = payload[jwt.tenantClaim];
  if (typeof tenant !== 'string') throw refused(`the token has no \`${jwt.tenantClaim}\` claim naming a tenant`, INVALID_TOKEN);
  try {
    checkTenant(tenant);
  } catch (err) {
    throw refused(`the token's \`${jwt.tenantClaim}\` claim: ${(err as Error).message}`, INVALID_TOKEN);
  }
  const scope = highestScope(payload[jwt.scopeClaim]);
  if (!scope) throw refused(`the token's \`${jwt.scopeClaim}\` claim grants none of ${SCOPES.join(', ')}`, INVALID_TOKEN);
  return { tenant, keyId: tokenKeyId(tenant, sub), scope };
}

/** The highest of read, write and admin a scope claim lists (a space-separated string or an array), or undefined. */
export function highestScope(claim: unknown): Scope | undefined {
  const listed = typeof claim === 'string' ? claim.split(/\s+/) : Array.isArray(claim) ? claim.filter((s) => typeof s === 'string') : [];
  let best: Scope | undefined;
  for (const s of SCOPES) if (listed.includes(s)) best = s;
  return best;
}

/**
 * How events name a token's caller (`by.key`): `jwt:<sub>`, or, for a subject events cannot carry
 * (too long, unprintable), `jwt:#` and the first 16 hex digits of its SHA-256.
 */
export function tokenKeyId(tenant: string, sub: string): string {
  const plain = `jwt:${sub}`;
  if (actorProblem({ tenant, key: plain }) === undefined) return plain;
  return `jwt:#${createHash('sha256').update(sub).digest('hex').slice(0, 16)}`;
}

/** What jose's error says about a token, as a problem that names the check and never the token. */
function tokenProblem(err: unknown, jwt: JwtSettings): ApiProblem {
  const code = (err as { code?: unknown })?.code;
  if (err instanceof joseErrors.JWTExpired) return refused('the token has expired', INVALID_TOKEN);
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = err.claim;
    if (claim === 'iss') return refused(`the token's issuer is not ${jwt.issuer}`, INVALID_TOKEN);
    if (claim === 'aud') return refused(`the token's audience does not include ${jwt.audience}`, INVALID_TOKEN);
    if (claim === 'nbf') return refused('the token is not valid yet (`nbf`)', INVALID_TOKEN);
    if (err.reason === 'missing') return refused(`the token has no \`${claim}\` claim`, INVALID_TOKEN);
    return refused(`the token's \`${claim}\` claim is not valid`, INVALID_TOKEN);
  }
  if (code === 'ERR_JOSE_ALG_NOT_ALLOWED' || code === 'ERR_JOSE_NOT_SUPPORTED')
    return refused(`the token's algorithm is not allowed (only ${JWT_ALGORITHMS.join(', ')})`, INVALID_TOKEN);
  if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS')
    return refused("no key of the provider's JWKS matches the token (its `kid` and algorithm)", INVALID_TOKEN);
  if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return refused("the token's signature does not verify", INVALID_TOKEN);
  if (code === 'ERR_JWS_INVALID' || code === 'ERR_JWT_INVALID' || code === 'ERR_JWK_INVALID')
    return refused('not a key of the keys file nor a valid JWT', INVALID_TOKEN);
  if (err instanceof joseErrors.JOSEError && !PROVIDER_FAILURES.has(String(code)))
    return refused('the token could not be verified', INVALID_TOKEN);
  // The provider's keys could not be read (a timeout, a refused connection, not 200, not a JWKS):
  // the token may be fine, so the caller may try again; the operator learns why.
  const cause = (err as { cause?: { message?: string } })?.cause?.message;
  console.error(`faheem api: the JWKS at ${jwt.jwksUrl.href}: ${(err as Error)?.message ?? String(err)}${cause ? ` (${cause})` : ''}`);
  return new ApiProblem('unavailable', `the OpenID provider's keys (${jwt.jwksUrl.origin}) could not be read; try again`, {
    'Retry-After': '30',
  });
}

// jose's codes for a key set it could not fetch or read (ERR_JOSE_GENERIC: not 200, not JSON).
const PROVIDER_FAILURES = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

/**
 * Reads the provider's key set once, as `faheem api` starts: undefined when it holds a key a token
 * may be signed with, else what is wrong (so a mistyped URL shows at once, not at the first call).
 */
export async function probeJwks(jwt: JwtSettings): Promise<string | undefined> {
  const set = createRemoteJWKSet(jwt.jwksUrl, { timeoutDuration: 5_000 });
  try {
    await set.reload();
  } catch (err) {
    const cause = (err as { cause?: { message?: string } })?.cause?.message;
    return `its JWKS at ${jwt.jwksUrl.href} could not be read: ${(err as Error)?.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
  }
  const usable = (set.jwks()?.keys ?? []).filter(
    (k) => (k.alg === undefined || (JWT_ALGORITHMS as readonly string[]).includes(k.alg)) && k.use !== 'enc',
  );
  if (usable.length === 0) return `its JWKS at ${jwt.jwksUrl.href} holds no signing key for ${JWT_ALGORITHMS.join(', ')}`;
  return undefined;
}
