// The console's request checks: token, Host header (DNS rebinding), Origin of state-changing requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  SECURITY_HEADERS,
  checkToken,
  cookieValue,
  hostAllowed,
  newToken,
  originAllowed,
  pageCookieName,
} from '../../../src/console-server/security.js';

test('tokens are 32 random bytes, base64url, different each start', () => {
  const a = newToken();
  const b = newToken();
  assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a, b);
  assert.equal(Buffer.from(a, 'base64url').length, 32);
});

test('checkToken: missing, wrong (any length), ok', () => {
  const t = newToken();
  assert.equal(checkToken(undefined, t), 'missing');
  assert.equal(checkToken(null, t), 'missing');
  assert.equal(checkToken('', t), 'missing');
  assert.equal(checkToken('short', t), 'wrong');
  assert.equal(checkToken(`${t.slice(0, -1)}${t.endsWith('A') ? 'B' : 'A'}`, t), 'wrong');
  assert.equal(checkToken(`${t}x`, t), 'wrong');
  assert.equal(checkToken(t, t), 'ok');
  assert.equal(checkToken([t, 'other'], t), 'ok');
});

test('hostAllowed: the bound host and port, loopback names for a loopback bind, nothing else', () => {
  const bound = { host: '127.0.0.1', port: 8234 };
  assert.equal(hostAllowed('127.0.0.1:8234', bound), true);
  assert.equal(hostAllowed('localhost:8234', bound), true);
  assert.equal(hostAllowed('LOCALHOST:8234', bound), true);
  assert.equal(hostAllowed('[::1]:8234', bound), true);
  assert.equal(hostAllowed('127.0.0.1:8235', bound), false);
  assert.equal(hostAllowed('127.0.0.1', bound), false);
  assert.equal(hostAllowed('evil.example:8234', bound), false);
  assert.equal(hostAllowed('127.0.0.1.evil.example:8234', bound), false);
  assert.equal(hostAllowed(undefined, bound), false);
  assert.equal(hostAllowed('', bound), false);
  const lan = { host: '192.168.1.5', port: 8234 };
  assert.equal(hostAllowed('192.168.1.5:8234', lan), true);
  assert.equal(hostAllowed('localhost:8234', lan), false);
  const all = { host: '0.0.0.0', port: 8234 };
  assert.equal(hostAllowed('10.0.0.7:8234', all), true);
  assert.equal(hostAllowed('localhost:8234', all), true);
  assert.equal(hostAllowed('mybox:8234', all, ['mybox']), true);
  assert.equal(hostAllowed('evil.example:8234', all, ['mybox']), false);
});

test('originAllowed: no Origin, or our own; never a cross-site fetch', () => {
  const host = '127.0.0.1:8234';
  assert.equal(originAllowed({ host }), true);
  assert.equal(originAllowed({ host, origin: 'http://127.0.0.1:8234' }), true);
  assert.equal(originAllowed({ host, origin: 'http://127.0.0.1:8234', 'sec-fetch-site': 'same-origin' }), true);
  assert.equal(originAllowed({ host, origin: 'http://evil.example' }), false);
  assert.equal(originAllowed({ host, origin: 'https://127.0.0.1:8234' }), false);
  assert.equal(originAllowed({ host, origin: 'http://127.0.0.1:8233' }), false);
  assert.equal(originAllowed({ host, origin: 'null' }), false);
  assert.equal(originAllowed({ host, 'sec-fetch-site': 'cross-site' }), false);
  // Another port on localhost (the Temporal Web UI, say) is same-site but not same-origin.
  assert.equal(originAllowed({ host, 'sec-fetch-site': 'same-site' }), false);
  assert.equal(originAllowed({ origin: 'http://127.0.0.1:8234' }), false);
  // Behind a TLS proxy the browser's origin is https: the scheme the console is reached with counts.
  assert.equal(originAllowed({ host: 'faheem.example', origin: 'https://faheem.example' }, 'https'), true);
  assert.equal(originAllowed({ host: 'faheem.example', origin: 'http://faheem.example' }, 'https'), false);
});

test('the page cookie: named per port, read from a Cookie header', () => {
  assert.equal(pageCookieName(8234), 'faheem_console_page_8234');
  assert.equal(cookieValue('a=1; faheem_console_page_8234=xyz; b=2', 'faheem_console_page_8234'), 'xyz');
  assert.equal(cookieValue('faheem_console_page_8235=xyz', 'faheem_console_page_8234'), undefined);
  assert.equal(cookieValue(undefined, 'x'), undefined);
});

test('every answer carries a strict CSP, nosniff and no referrer', () => {
  assert.match(
    SECURITY_HEADERS['Content-Security-Policy']!,
    /default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'/,
  );
  assert.equal(SECURITY_HEADERS['X-Content-Type-Options'], 'nosniff');
  assert.equal(SECURITY_HEADERS['Referrer-Policy'], 'no-referrer');
  assert.ok(!Object.keys(SECURITY_HEADERS).some((k) => k.toLowerCase().startsWith('access-control')));
});
