// The console's request checks, kept pure so they are unit-tested without a server: the token, the
// Host header (DNS rebinding), the Origin of state-changing requests (cross-site requests) and the
// headers every answer carries.
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh token for one console start: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The header every API request carries the token in. */
export const TOKEN_HEADER = 'x-faheem-token';

/** Whether `given` is the token: `missing` (401), `wrong` (403) or `ok`; compared in constant time. */
export function checkToken(given: string | string[] | undefined | null, token: string): 'ok' | 'missing' | 'wrong' {
  const value = Array.isArray(given) ? given[0] : given;
  if (value === undefined || value === null || value === '') return 'missing';
  const a = Buffer.from(value);
  const b = Buffer.from(token);
  // timingSafeEqual needs equal lengths; a wrong length is wrong without comparing.
  if (a.length !== b.length) return 'wrong';
  return timingSafeEqual(a, b) ? 'ok' : 'wrong';
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/** `host` as it appears in a URL or Host header (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The Host header values the console answers to when bound to `host`:`port`. A page on another name
 * that resolves to us (DNS rebinding) sends its own name and is refused. Bound to loopback, the
 * loopback names are accepted; bound to every interface, any IP literal or `localhost`.
 */
export function hostAllowed(hostHeader: string | undefined, bound: { host: string; port: number }, extraNames: string[] = []): boolean {
  if (!hostHeader) return false;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d+)$/.exec(hostHeader.trim());
  if (!m) return false;
  const [, name, port] = m;
  if (Number(port) !== bound.port) return false;
  const lower = name!.toLowerCase();
  const boundName = urlHost(bound.host).toLowerCase();
  if (lower === boundName) return true;
  if (LOOPBACK.has(bound.host) || WILDCARD.has(bound.host)) {
    if (LOOPBACK.has(lower)) return true;
  }
  if (WILDCARD.has(bound.host)) {
    if (/^\d{1,3}(\.\d{1,3}){3}$/.test(lower) || lower.startsWith('[')) return true;
    if (extraNames.map((n) => n.toLowerCase()).includes(lower)) return true;
  }
  return false;
}

/**
 * Whether a state-changing request may go on: no Origin (not a browser's cross-site form or fetch)
 * or the console's own origin (`scheme://` + its Host header; `scheme` is what browsers reach it with:
 * `http`, or `https` behind a TLS proxy), and no `Sec-Fetch-Site: cross-site`.
 */
export function originAllowed(
  headers: {
    origin?: string | undefined;
    host?: string | undefined;
    'sec-fetch-site'?: string | undefined;
  },
  scheme: 'http' | 'https' = 'http',
): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  if (!headers.host) return false;
  return origin.toLowerCase() === `${scheme}://${headers.host.toLowerCase()}`;
}

/** The cookie that lets a reload open the page once the token has left the address bar (per port: cookies are not). */
export function pageCookieName(port: number): string {
  return `faheem_console_page_${port}`;
}

/** The value of cookie `name` in a Cookie header, if present. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The headers every answer carries: nothing is framed, sniffed, referred or loaded from elsewhere. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // img-src blob: for the conversation's images, which the page fetches with its token header.
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; img-src 'self' blob:",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};
