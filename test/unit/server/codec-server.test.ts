// src/server/codec-server.ts, a real server in this process: a token by default, checked before the
// body is read (a huge body without it is refused at once), in the header or as the first path
// segment; and with `strict`, /decode refusing payloads that are not encrypted.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { EncryptionCodec } from '../../../src/security/codec.js';
import { startCodecServer, type CodecServer } from '../../../src/server/codec-server.js';

const codec = new EncryptionCodec([{ id: 'k1', key: randomBytes(32) }]);
const plain = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"hi"').toString('base64') };

let server: CodecServer;
before(async () => {
  server = await startCodecServer({ codec, port: 0 });
});
after(async () => {
  await server?.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });

test('a token by default: without it 401; in the Authorization header or first in the path, the answer', async () => {
  assert.match(server.token, /^[A-Za-z0-9_-]{43}$/, 'a fresh random token');
  assert.equal(server.uiEndpoint, `${server.url}/${server.token}`);
  assert.equal((await post(`${server.url}/encode`, { payloads: [plain] })).status, 401);
  assert.equal((await post(`${server.url}/encode`, { payloads: [plain] }, { Authorization: 'Bearer wrong' })).status, 401);
  assert.equal((await post(`${server.url}/wrong/encode`, { payloads: [plain] })).status, 401);
  assert.equal((await fetch(`${server.url}/health`)).status, 401, 'nothing answers without the token');
  const viaHeader = await post(`${server.url}/encode`, { payloads: [plain] }, { Authorization: `Bearer ${server.token}` });
  assert.equal(viaHeader.status, 200);
  const encoded = (await viaHeader.json()) as { payloads: unknown[] };
  const viaPath = await post(`${server.uiEndpoint}/decode`, encoded);
  assert.equal(viaPath.status, 200);
  assert.deepEqual(((await viaPath.json()) as { payloads: unknown[] }).payloads, [plain]);
});

test(
  'a request without the token is refused before its body is read: 401 while a 1 GiB body has barely begun',
  { timeout: 30_000 },
  async () => {
    const { status, sent } = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
      let sent = 0;
      const req = request(`${server.url}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(1024 ** 3) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, sent });
        req.destroy();
      });
      req.on('error', (err) => (sent > 0 ? undefined : reject(err)));
      // One chunk of the gigabyte; the rest is only ever sent if the server asks for it by not answering.
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      req.write(chunk, () => (sent += chunk.length));
    });
    assert.equal(status, 401);
    assert.ok(sent <= 64 * 1024, `answered after ${sent} bytes of the body`);
  },
);

test('strict: /decode refuses a payload that is not encrypted, and says why; by default it passes through', async () => {
  const passed = await post(`${server.uiEndpoint}/decode`, { payloads: [plain] });
  assert.equal(passed.status, 200, 'older histories and search attributes are plaintext');
  assert.deepEqual(((await passed.json()) as { payloads: unknown[] }).payloads, [plain]);

  const strict = await startCodecServer({ codec, port: 0, token: 'a-token-of-my-own-1234', strict: true });
  try {
    const auth = { Authorization: 'Bearer a-token-of-my-own-1234' };
    const res = await post(`${strict.url}/decode`, { payloads: [plain] }, auth);
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: string }).error, /payloads\[0\] is not encrypted.*--strict/);
    const encoded = await (await post(`${strict.url}/encode`, { payloads: [plain] }, auth)).json();
    assert.equal((await post(`${strict.url}/decode`, encoded, auth)).status, 200, 'encrypted payloads decode');
  } finally {
    await strict.close();
  }
  await assert.rejects(startCodecServer({ codec, port: 0, token: 'short' }), /at least 16 characters/);
});
