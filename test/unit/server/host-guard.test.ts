// src/server/host-guard.ts: the Web UI's front answers only requests addressed to it by its own name.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { allowedHostNames, hostAllowed, startHostGuard, type HostGuard } from '../../../src/server/host-guard.js';

test('the names a loopback server is reached under, and which requests pass', () => {
  const allowed = allowedHostNames('127.0.0.1', 8233);
  assert.deepEqual([...allowed].sort(), ['127.0.0.1:8233', '[::1]:8233', 'localhost:8233']);
  assert.ok(allowedHostNames('0.0.0.0', 8233).has('127.0.0.1:8233'));
  const pass = (headers: http.IncomingHttpHeaders) => hostAllowed(headers, allowed);
  assert.equal(pass({ host: 'localhost:8233' }), true);
  assert.equal(pass({ host: 'LOCALHOST:8233', origin: 'http://127.0.0.1:8233' }), true);
  assert.equal(pass({ host: 'rebound.evil.example:8233' }), false, 'a DNS-rebound name');
  assert.equal(pass({ host: 'localhost:8234' }), false, 'another port');
  assert.equal(pass({ host: 'localhost' }), false, 'no port');
  assert.equal(pass({}), false, 'no Host');
  assert.equal(pass({ host: 'localhost:8233', origin: 'https://evil.example' }), false, 'a cross-origin page');
  assert.equal(pass({ host: 'localhost:8233', origin: 'null' }), false, 'a sandboxed frame or a file page');
  assert.equal(pass({ host: 'localhost:8233', origin: 'ftp://localhost:8233' }), false);
});

let target: http.Server;
let guard: HostGuard;
const reached: string[] = [];

before(async () => {
  target = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      reached.push(`${req.method} ${req.url} ${body}`);
      res.writeHead(201, { 'x-upstream': 'yes', 'set-cookie': ['a=1', 'b=2'] }).end(`echo ${body}`);
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const targetPort = (target.address() as AddressInfo).port;
  guard = await startHostGuard({ ip: '127.0.0.1', port: 0, targetPort, allowed: new Set(['localhost:1', 'ui.local:2']) });
});
after(async () => {
  await guard?.close();
  await new Promise((resolve) => target?.close(resolve));
});

function call(
  headers: Record<string, string>,
  body = 'payload',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: guard.port, method: 'POST', path: '/api/v1/namespaces/default/workflows/x', headers },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('a real guard passes its own names through unchanged and refuses any other before the server sees it', async () => {
  const ok = await call({ host: 'localhost:1', 'content-type': 'text/plain' });
  assert.equal(ok.status, 201);
  assert.equal(ok.body, 'echo payload');
  assert.equal(ok.headers['x-upstream'], 'yes');
  assert.deepEqual(ok.headers['set-cookie'], ['a=1', 'b=2']);
  assert.equal((await call({ host: 'ui.local:2', origin: 'http://ui.local:2' })).status, 201);
  assert.deepEqual(reached, ['POST /api/v1/namespaces/default/workflows/x payload', 'POST /api/v1/namespaces/default/workflows/x payload']);
  for (const headers of [{ host: 'rebound.evil.example:1' }, { host: 'localhost:1', origin: 'http://evil.example' }] as Record<
    string,
    string
  >[]) {
    const refused = await call({ ...headers, 'content-type': 'text/plain' }).catch(() => ({ status: 0, body: '' }));
    assert.equal(refused.status, 403, JSON.stringify(headers));
  }
  assert.equal(reached.length, 2, 'nothing refused reached the server');
});
