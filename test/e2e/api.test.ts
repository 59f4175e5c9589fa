// `faheem api` as a process against a real dev server and worker: keys and scopes, tenants kept
// apart on every route, a caller's workspace under its tenant's folder, the conversation resources
// (messages, pause, resume, approve, reject, close, events as JSON and as server-sent events), and
// the problems bad input gets (400, 401, 403, 404, 405, 413, 415, 429).
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';
import { tempDir } from '../support/temp-dirs.js';
import { startApiProcess, type ApiProcess } from '../support/api-process.js';

let h: Harness;
let api: ApiProcess | undefined;
let url: string;
let keysFile: string;
let workspaces: string;
const keys = { acme: '', acmeRead: '', other: '', small: '' };

function script(req: RecordedRequest): ScriptedReply {
  const first = String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
  const tools = req.body.messages.filter((m) => m.role === 'tool').length;
  if (first.startsWith('Hold this')) return { gate: 'small', content: 'Held, then done.' };
  if (first.startsWith('Hold')) return { gate: 'hold', content: 'Held, then done.' };
  if (first.startsWith('Count')) return { content: req.body.response_format ? '{"count": 2}' : 'two' };
  if (first.startsWith('Risky'))
    return tools === 0
      ? { toolCalls: [{ name: 'terminal', arguments: { command: 'echo ran > ran.txt' } }] }
      : { content: 'The command ran.' };
  if (first.startsWith('Write'))
    return tools === 0
      ? { toolCalls: [{ name: 'file_editor', arguments: { command: 'create', path: 'note.txt', file_text: 'from the api\n' } }] }
      : { content: 'Wrote note.txt.' };
  return { content: 'Hello from the agent.' };
}

/** A key made with the CLI (stdout holds the key alone). */
async function makeKey(tenant: string, scope: string, name?: string): Promise<string> {
  const r = await h.cli(['api-key', 'create', '--tenant', tenant, '--scope', scope, '--keys', keysFile, ...(name ? ['--name', name] : [])]);
  const key = r.stdout.trim();
  assert.match(key, /^fk_[a-f0-9]{12}_\S{43}$/, 'stdout is the key alone');
  return key;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, read field by field
type Json = any;

async function call(
  method: string,
  route: string,
  key: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(url + route, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
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

const status = (key: string, id: string) => call('GET', `/v1/conversations/${encodeURIComponent(id)}`, key);
const untilStatus = (key: string, id: string, want: (s: string) => boolean) =>
  waitFor(`${id} to reach the status wanted`, async () => {
    const r = await status(key, id);
    return want(String(r.body.status)) ? r.body : undefined;
  });

before(async () => {
  h = await startHarness({ name: 'api', script });
  await h.startWorker();
  const dir = await tempDir('faheem-api-');
  keysFile = path.join(dir, 'keys.json');
  workspaces = path.join(dir, 'workspaces');
  keys.acme = await makeKey('acme', 'write', 'ci-bot');
  keys.acmeRead = await makeKey('acme', 'read');
  keys.other = await makeKey('other', 'write');
  keys.small = await makeKey('small', 'write');
  // Limits a person writes into the keys file: small may run one conversation and make 3 requests a second.
  const file = JSON.parse(await readFile(keysFile, 'utf8'));
  file.tenants.small = { maxRunning: 1, requestsPerSecond: 3 };
  await writeFile(keysFile, JSON.stringify(file, null, 2));
  // The test's webhook receiver listens on loopback, which is refused unless listed.
  api = await startApiProcess(['--port', '0', '--keys', keysFile, '--workspaces', workspaces], {
    ...h.env,
    FAHEEM_WEBHOOK_ALLOW: '127.0.0.1',
  });
  url = api.url;
});

after(async () => {
  await api?.stop();
  await h?.close();
});

test('keys: none or unknown is 401, a read key may only read, the file keeps no key, a revoked key stops at once', async () => {
  const none = await call('GET', '/v1/conversations', undefined);
  assert.equal(none.status, 401);
  assert.equal(none.headers.get('content-type'), 'application/problem+json');
  assert.equal(none.body.status, 401);
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  assert.equal((await call('GET', '/v1/conversations', 'fk_000000000000_' + 'A'.repeat(43))).status, 401);
  assert.equal((await call('GET', '/v1/conversations', keys.acmeRead)).status, 200);
  const refused = await call('POST', '/v1/conversations', keys.acmeRead, { message: 'Hello' });
  assert.equal(refused.status, 403);
  const file = await readFile(keysFile, 'utf8');
  for (const k of Object.values(keys)) assert.ok(!file.includes(k.slice(16)), 'no key in the clear in the keys file');
  assert.equal((await stat(keysFile)).mode & 0o777, 0o600);
  const listed = await h.cli(['api-key', 'list', '--keys', keysFile, '--json']);
  assert.equal(listed.stdout.trim().split('\n').length, 4);
  for (const k of Object.values(keys)) assert.ok(!listed.stdout.includes(k.slice(16)));

  const temporary = await makeKey('acme', 'read', 'temporary');
  assert.equal((await call('GET', '/v1/conversations', temporary)).status, 200);
  await h.cli(['api-key', 'revoke', 'temporary', '--keys', keysFile]);
  assert.equal((await call('GET', '/v1/conversations', temporary)).status, 401, 'the running API reads the revocation');
});

test('a conversation runs in a workspace under its tenant’s folder; the status names it, never the host path', async () => {
  const created = await call('POST', '/v1/conversations', keys.acme, { message: 'Write a note', workspace: 'site', id: 'note-1' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.id, 'acme:note-1');
  assert.equal(created.body.tenant, 'acme');
  assert.equal(created.body.workspace, 'site');
  const done = await untilStatus(keys.acme, 'acme:note-1', (s) => s === 'finished');
  assert.equal(done.finalMessage, 'Wrote note.txt.');
  assert.equal(await readFile(path.join(workspaces, 'acme', 'site', 'note.txt'), 'utf8'), 'from the api\n');
  assert.ok(!JSON.stringify(done).includes(workspaces), 'no host path in the status');

  for (const workspace of ['../other', '/etc', 'a/b', '..']) {
    const r = await call('POST', '/v1/conversations', keys.acme, { message: 'Hello', workspace });
    assert.equal(r.status, 400, `workspace ${workspace}`);
  }
  for (const forbidden of [{ mcpServers: {} }, { hooks: {} }, { model: 'openai/elsewhere' }]) {
    const r = await call('POST', '/v1/conversations', keys.acme, { message: 'Hello', ...forbidden });
    assert.equal(r.status, 400, `${JSON.stringify(forbidden)} is the operator's`);
  }
  const taken = await call('POST', '/v1/conversations', keys.acme, { message: 'Hello', id: 'note-1' });
  assert.equal(taken.status, 409);
  // Another tenant's own id of the same name is its own conversation.
  const same = await call('POST', '/v1/conversations', keys.other, { message: 'Hello', id: 'note-1' });
  assert.equal(same.status, 201);
  assert.equal(same.body.id, 'other:note-1');
});

test('an output schema: a bad one is 400; the answer matching it is the status output', async () => {
  const bad = await call('POST', '/v1/conversations', keys.acme, { message: 'Count', outputSchema: { type: 'nope' } });
  assert.equal(bad.status, 400);
  assert.match(bad.body.detail, /outputSchema: the output schema is not a valid JSON Schema/);
  const schema = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'], additionalProperties: false };
  const created = await call('POST', '/v1/conversations', keys.acme, { message: 'Count the files', id: 'count', outputSchema: schema });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const done = await untilStatus(keys.acme, 'acme:count', (s) => s === 'finished');
  assert.deepEqual(done.output, { count: 2 });
});

test("every route of the OpenAPI document answers 404 for another tenant's conversation, and lists stay inside the tenant", async () => {
  const mine = await call('POST', '/v1/conversations', keys.acme, { message: 'Hello', id: 'walk' });
  assert.equal(mine.status, 201);
  await untilStatus(keys.acme, 'acme:walk', (s) => s === 'finished');
  const doc = (await call('GET', '/openapi.json', undefined)).body;
  assert.equal(doc.openapi, '3.1.0');
  let walked = 0;
  for (const [route, methods] of Object.entries<Record<string, unknown>>(doc.paths)) {
    if (!route.includes('{id}')) continue;
    for (const method of Object.keys(methods)) {
      const target = route.replace('{id}', encodeURIComponent('acme:walk'));
      const body = method === 'get' ? undefined : route.endsWith('/messages') ? { text: 'hi' } : {};
      const r = await call(method.toUpperCase(), target, keys.other, body);
      assert.equal(r.status, 404, `${method} ${route} with another tenant's key`);
      assert.ok(!JSON.stringify(r.body).includes('Hello'), 'nothing of the conversation in the answer');
      walked++;
    }
  }
  assert.ok(walked >= 7, `walked ${walked} routes`);
  const after = await status(keys.acme, 'acme:walk');
  assert.equal(after.body.closed, false, 'nothing the other tenant sent reached it');
  assert.equal(after.body.status, 'finished');

  const listed = await call('GET', '/v1/conversations', keys.other);
  assert.ok(!listed.body.data.some((c: { id: string }) => c.id.startsWith('acme:')));
  const own = await call('GET', '/v1/conversations?limit=1', keys.acme);
  assert.equal(own.body.data.length, 1);
  assert.ok(own.body.next_cursor, 'a next cursor when there is more');
  const next = await call('GET', `/v1/conversations?limit=1&cursor=${own.body.next_cursor}`, keys.acme);
  assert.equal(next.status, 200);
  assert.notEqual(next.body.data[0]?.id, own.body.data[0].id);
  for (const forged of ['!!', '0'.repeat(3000), `${own.body.next_cursor}x`, own.body.next_cursor.replace(/^./, 'A')])
    assert.equal(
      (await call('GET', `/v1/conversations?limit=1&cursor=${forged}`, keys.acme)).status,
      400,
      `cursor ${forged.slice(0, 20)}…`,
    );
  assert.equal(
    (await call('GET', `/v1/conversations?limit=1&cursor=${own.body.next_cursor}`, keys.other)).status,
    400,
    "a cursor is only good for its tenant's own list",
  );
});

test('messages, pause (now), resume and close steer a conversation; events come as JSON and as a stream that resumes', async () => {
  const created = await call('POST', '/v1/conversations', keys.acme, { message: 'Hold on', id: 'steer' });
  assert.equal(created.status, 201);
  const id = 'acme:steer';
  await h.model.reached('hold');
  const paused = await call('POST', `/v1/conversations/${id}/pause`, keys.acme, { now: true });
  assert.equal(paused.status, 200);
  await untilStatus(keys.acme, id, (s) => s === 'paused');
  const sent = await call('POST', `/v1/conversations/${id}/messages`, keys.acme, { text: 'One more thing', run: false });
  assert.equal(sent.status, 202);
  assert.equal(typeof sent.body.index, 'number');
  h.model.release('hold');
  const resumed = await call('POST', `/v1/conversations/${id}/resume`, keys.acme);
  assert.equal(resumed.status, 200);
  await untilStatus(keys.acme, id, (s) => s === 'finished');

  const all = await call('GET', `/v1/conversations/${id}/events`, keys.acme);
  assert.equal(all.status, 200);
  const kinds = all.body.data.map((e: { kind: string }) => e.kind);
  assert.ok(kinds.includes('pause') && kinds.includes('resume'), kinds.join(','));
  const byApi = { tenant: 'acme', key: 'ci-bot' };
  const said = all.body.data.find((e: { kind: string; text?: string }) => e.kind === 'message' && e.text === 'One more thing');
  assert.deepEqual(said?.by, byApi, 'a message sent through the API names its tenant and key');
  assert.deepEqual(all.body.data.find((e: { kind: string }) => e.kind === 'pause')?.by, byApi);
  assert.deepEqual(all.body.data[0].by, byApi, 'so does the first message');
  assert.ok(!JSON.stringify(all.body).includes(keys.acme.slice(16)), 'never the key itself');
  assert.ok(
    all.body.data.filter((e: { source: string }) => e.source === 'agent').every((e: { by?: unknown }) => e.by === undefined),
    "the agent's own events name nobody",
  );
  const later = await call('GET', `/v1/conversations/${id}/events?after=2`, keys.acme);
  assert.deepEqual(
    later.body.data.map((e: { index: number }) => e.index),
    all.body.data.slice(3).map((e: { index: number }) => e.index),
  );

  // The stream: read up to event 3, drop the connection, pick up with Last-Event-ID: no gap, no repeat.
  const first = await readStream(id, {}, (ids) => ids.includes(3));
  const rest = await readStream(id, { 'last-event-id': '3' }, (ids) => ids.includes(all.body.data.length - 1));
  const seen = [...first.filter((i) => i <= 3), ...rest];
  assert.deepEqual(
    seen.slice(0, all.body.data.length),
    all.body.data.map((e: { index: number }) => e.index),
  );

  const closed = await call('POST', `/v1/conversations/${id}/close`, keys.acme);
  assert.equal(closed.status, 200);
  await untilStatus(keys.acme, id, () => true).then(() =>
    waitFor('the close to land', async () => (await status(keys.acme, id)).body.closed === true),
  );
  const again = await call('POST', `/v1/conversations/${id}/messages`, keys.acme, { text: 'too late' });
  assert.equal(again.status, 409);
});

test('approve and reject answer actions waiting for approval', async () => {
  for (const [verb, want] of [
    ['approve', 'The command ran.'],
    ['reject', 'The command ran.'],
  ] as const) {
    const r = await call('POST', '/v1/conversations', keys.acme, { message: 'Risky one', confirm: 'always', id: `risky-${verb}` });
    assert.equal(r.status, 201);
    const id = `acme:risky-${verb}`;
    await untilStatus(keys.acme, id, (s) => s === 'waiting_for_confirmation');
    const answered = await call('POST', `/v1/conversations/${id}/${verb}`, keys.acme, verb === 'reject' ? { reason: 'not now' } : {});
    assert.equal(answered.status, 200);
    const done = await untilStatus(keys.acme, id, (s) => s === 'finished');
    assert.equal(done.finalMessage, want);
    const ran = await stat(path.join(workspaces, 'acme', `risky-${verb}`, 'ran.txt')).then(
      () => true,
      () => false,
    );
    assert.equal(ran, verb === 'approve');
  }
  const none = await call('POST', '/v1/conversations/acme:risky-approve/approve', keys.acme);
  assert.equal(none.status, 409, 'nothing waits for approval');
});

test('bad input gets a problem: 400, 405, 413, 415, and 429 beyond the rate or the running conversations', async () => {
  const bad = await call('POST', '/v1/conversations', keys.acme, '{not json');
  assert.equal(bad.status, 400);
  assert.equal((await call('POST', '/v1/conversations', keys.acme, { message: '' })).status, 400);
  assert.equal((await call('POST', '/v1/conversations', keys.acme, { message: 'x', extra: 1 })).status, 400);
  assert.equal((await call('GET', '/v1/conversations?limit=0', keys.acme)).status, 400);
  const wrongMethod = await call('DELETE', '/v1/conversations/acme:walk', keys.acme);
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get('allow'), 'GET');
  assert.equal((await call('POST', '/v1/conversations', keys.acme, 'hi', { 'content-type': 'text/plain' })).status, 415);
  // No body at all: a required one is asked for (never a 5xx), an optional one is `{}`.
  for (const type of ['text/plain;charset=UTF-8', 'multipart/form-data', 'application/json']) {
    const empty = await call('POST', '/v1/conversations', keys.acme, '', { 'content-type': type });
    assert.ok(empty.status === 400 || empty.status === 415, `an empty ${type} body: ${empty.status}`);
    assert.equal(empty.headers.get('content-type'), 'application/problem+json');
  }
  const emptyAction = await call('POST', '/v1/conversations/acme:walk/resume', keys.acme, '', { 'content-type': 'application/json' });
  assert.equal(emptyAction.status, 200, 'an empty JSON body where the body is optional');
  const big = await call('POST', '/v1/conversations', keys.acme, JSON.stringify({ message: 'x'.repeat(2 * 1024 * 1024) }));
  assert.equal(big.status, 413);
  assert.equal((await call('GET', '/v1/nothing', keys.acme)).status, 404);

  // small: one running conversation at most; the second gets 429 with Retry-After.
  const one = await call('POST', '/v1/conversations', keys.small, { message: 'Hold this', id: 'one' });
  assert.equal(one.status, 201);
  const two = await call('POST', '/v1/conversations', keys.small, { message: 'Hello', id: 'two' });
  assert.equal(two.status, 429);
  assert.ok(Number(two.headers.get('retry-after')) >= 1);
  // And 3 requests a second: a burst of 12 gets 429s, each with Retry-After.
  const burst = await Promise.all(Array.from({ length: 12 }, () => call('GET', '/v1/conversations/small:one', keys.small)));
  const limited = burst.filter((r) => r.status === 429);
  assert.ok(limited.length >= 4, `${limited.length} of 12 limited`);
  assert.ok(limited.every((r) => Number(r.headers.get('retry-after')) >= 1));
  assert.ok(burst.every((r) => r.status === 200 || r.status === 429));
  h.model.release('small');
});

test('a webhook gets each stop, signed with its secret; the secret is nowhere in history; a private target is refused', async () => {
  const secret = 'whsec-api-test-0123456789abcdef';
  const deliveries: { body: string; signature: string }[] = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ body: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['x-faheem-signature'] ?? '') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const port = (receiver.address() as AddressInfo).port;
    const created = await call('POST', '/v1/conversations', keys.acme, {
      message: 'Hello, webhook',
      id: 'hooked',
      webhook: { url: `http://127.0.0.1:${port}/hook`, secret },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const delivered = await waitFor('the finish to be delivered', () => deliveries.find((d) => JSON.parse(d.body).status === 'finished'));
    const expected = `sha256=${createHmac('sha256', secret).update(delivered.body).digest('hex')}`;
    assert.equal(delivered.signature, expected, 'X-Faheem-Signature is the HMAC of the raw body');
    const body = JSON.parse(delivered.body);
    assert.equal(body.id, 'acme:hooked');
    assert.equal(body.event.kind, 'status');
    const events = await waitFor('the delivery event', async () => {
      const r = await call('GET', '/v1/conversations/acme:hooked/events', keys.acme);
      return r.body.data.some((e: { kind: string }) => e.kind === 'webhook') ? r.body.data : undefined;
    });
    assert.ok(events.some((e: { kind: string; delivered?: boolean }) => e.kind === 'webhook' && e.delivered === true));
    const history = JSON.stringify(await h.client.workflow.getHandle('acme:hooked').fetchHistory());
    assert.ok(!history.includes(secret), 'the secret is not in the history');

    const refused = await call('POST', '/v1/conversations', keys.acme, {
      message: 'Hello',
      webhook: { url: 'http://10.0.0.7/hook', secret },
    });
    assert.equal(refused.status, 400);
    assert.match(refused.body.detail, /webhook/);
  } finally {
    receiver.close();
  }
});

test('safe by default: TLS with a certificate, a warning beyond loopback, no CORS', async () => {
  const dir = await tempDir('faheem-api-tls-');
  const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
  await execa('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'],
    ...['-keyout', key, '-out', cert, '-subj', '/CN=faheem-test', '-addext', 'subjectAltName=IP:127.0.0.1'],
  ]);
  // Without --tls-key the certificate is refused before anything listens.
  const half = await h.cli(['api', '--port', '0', '--tls-cert', cert, '--keys', keysFile], { reject: false });
  assert.notEqual(half.exitCode, 0);
  assert.match(half.stderr, /--tls-cert and --tls-key go together/);
  const open = await startApiProcess(['--port', '0', '--host', '0.0.0.0', '--keys', keysFile, '--workspaces', workspaces], h.env);
  await waitFor('the warning beyond loopback', () => open.stderr().includes('in the clear'));
  await open.stop();
  const said = open.stderr();
  assert.match(said, /warning: --host 0\.0\.0\.0 listens on every network interface/);
  assert.match(said, /keys cross the network in the clear/);

  const secure = await startApiProcess(
    ['--port', '0', '--tls-cert', cert, '--tls-key', key, '--keys', keysFile, '--workspaces', workspaces],
    h.env,
  );
  try {
    const base = secure.url;
    assert.match(base, /^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = await readFile(cert);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(`${base}/v1/conversations?limit=1`, { ca, headers: { authorization: `Bearer ${keys.acme}` } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(answer.status, 200);
    assert.ok(Array.isArray(JSON.parse(answer.body).data));
  } finally {
    await secure.stop();
  }

  // A page of another origin: its preflight gets no Access-Control-Allow-Origin, so the browser never sends the call.
  const preflight = await fetch(`${url}/v1/conversations`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
  });
  assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  const simple = await call('GET', '/v1/conversations', keys.acme, undefined, { origin: 'https://evil.example' });
  assert.equal(simple.headers.get('access-control-allow-origin'), null);
});

/** Reads the event stream until `enough(ids seen)`, then drops the connection; the ids seen. */
async function readStream(id: string, headers: Record<string, string>, enough: (ids: number[]) => boolean): Promise<number[]> {
  const stop = new AbortController();
  const res = await fetch(`${url}/v1/conversations/${id}/events`, {
    headers: { authorization: `Bearer ${keys.acme}`, accept: 'text/event-stream', ...headers },
    signal: stop.signal,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const ids: number[] = [];
  let buffer = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const idLine = message.split('\n').find((l) => l.startsWith('id:'));
        const data = message.split('\n').find((l) => l.startsWith('data:'));
        if (idLine && data) {
          const n = Number(idLine.slice(3).trim());
          assert.equal(JSON.parse(data.slice(5)).index, n, 'id: is the event index');
          ids.push(n);
        }
      }
      if (enough(ids)) break;
    }
  } finally {
    stop.abort();
  }
  return ids;
}
