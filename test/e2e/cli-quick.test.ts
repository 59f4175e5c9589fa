// `faheem status` and `faheem pause` take the quick path (Temporal's HTTP API, no SDK loaded) when
// they can, and print exactly what the full command prints; when the HTTP API is not there, or
// answers with something else, the full command runs and nobody can tell. A pass-through proxy in
// front of the dev server's real HTTP API shows which path ran.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Conversation } from '../../src/client/client.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let proxy: http.Server;
let proxyUrl: string;
/** The API paths the proxy passed on, in order. */
const seen: string[] = [];
/** What the proxy does: pass requests on, or answer as something that is not Temporal. */
let mode: 'pass' | 'not-temporal' = 'pass';

before(async () => {
  h = await startHarness({ name: 'cli-quick', script: countdownScript({ delayMs: 0 }), record: false });
  assert.ok(h.server.httpUrl, 'the dev server has an HTTP API');
  const target = new URL(h.server.httpUrl);
  proxy = http.createServer((req, res) => {
    if (mode === 'not-temporal') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a web page</html>');
      return;
    }
    seen.push(`${req.method} ${(req.url ?? '').replace(/\?.*$/, '')}`);
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  await h.startWorker();
});
after(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await h?.close();
});

const viaProxy = () => ({ FAHEEM_TEMPORAL_HTTP: proxyUrl });
const fullPath = { FAHEEM_TEMPORAL_HTTP: 'off' };

test('status and pause answer over the HTTP API with the full command’s exact output', async () => {
  h.model.setScript(countdownScript({ delayMs: 0, gates: { 2: 'held' } }));
  const workspace = await h.workspace();
  const id = (await h.cli(['start', 'Create countdown.txt with 100 down to 1', '--workspace', workspace])).stdout.trim();
  await h.model.reached('held');

  seen.length = 0;
  const paused = await h.cli(['pause', id], { env: viaProxy() });
  assert.equal(paused.stdout.trim(), `paused ${id} (was running)`);
  assert.ok(seen.includes(`POST /api/v1/namespaces/${h.namespace}/workflows/${id}/signal/pause`), seen.join('\n'));
  await (await Conversation.attach(h.client, id)).waitUntil((s) => s.status === 'paused', 100, 60_000);
  h.model.release('held');

  // The conversation is still now: both paths must print the same bytes.
  for (const args of [
    ['status', id, '--json'],
    ['status', id],
  ]) {
    seen.length = 0;
    const quick = await h.cli(args, { env: viaProxy() });
    assert.deepEqual(seen, [`POST /api/v1/namespaces/${h.namespace}/workflows/${id}/query/state`]);
    const full = await h.cli(args, { env: fullPath });
    assert.equal(quick.stdout, full.stdout);
    assert.equal(quick.stderr, full.stderr);
  }
  assert.equal(JSON.parse((await h.cli(['status', id, '--json'], { env: viaProxy() })).stdout).status, 'paused');

  // send: one update through the HTTP API, the message added once, the full command's line.
  seen.length = 0;
  const sent = await h.cli(['send', id, 'Keep it short.'], { env: viaProxy() });
  assert.equal(sent.stdout.trim(), `message queued (1 waiting); \`faheem resume ${id}\` runs it`);
  assert.ok(seen.includes(`POST /api/v1/namespaces/${h.namespace}/workflows/${id}/update/addMessage`), seen.join('\n'));
  const sentFull = await h.cli(['send', id, 'And add a header.'], { env: fullPath });
  assert.equal(sentFull.stdout.trim(), `message queued (2 waiting); \`faheem resume ${id}\` runs it`);
  const texts = (await h.cli(['events', id, '--json'], { env: fullPath })).stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; source?: string; text?: string })
    .filter((e) => e.kind === 'message' && e.source === 'user')
    .map((e) => e.text);
  assert.deepEqual(texts.slice(-2), ['Keep it short.', 'And add a header.']);

  const again = await h.cli(['pause', id, '--quiet'], { env: viaProxy() });
  assert.equal(again.stdout, '');
  const repeated = await h.cli(['pause', id], { env: viaProxy() });
  assert.equal(repeated.stdout.trim(), `${id} was already paused`);
  // Clean-up, not a claim: the SDK closes it (no CLI process).
  await (await Conversation.attach(h.client, id)).close();
});

test('without a usable HTTP API the full command runs, with the same answers and errors', async () => {
  const workspace = await h.workspace();
  const id = (await h.cli(['start', 'Create countdown.txt with 100 down to 1', '--workspace', workspace])).stdout.trim();
  await (await Conversation.attach(h.client, id)).waitUntil((s) => s.status === 'finished', 100, 60_000);
  const expected = (await h.cli(['status', id, '--json'], { env: fullPath })).stdout;
  assert.equal(JSON.parse(expected).status, 'finished');

  mode = 'not-temporal';
  try {
    seen.length = 0;
    assert.equal((await h.cli(['status', id, '--json'], { env: viaProxy() })).stdout, expected);
    const paused = await h.cli(['pause', id], { env: viaProxy() });
    assert.equal(paused.stdout.trim(), `paused ${id} (was finished)`);
  } finally {
    mode = 'pass';
  }
  // Nothing listens there at all.
  const closedPort = { FAHEEM_TEMPORAL_HTTP: 'http://127.0.0.1:9' };
  assert.equal((await h.cli(['status', id, '--json'], { env: closedPort })).stdout, expected);

  // A send the workflow refuses (a finished run takes messages; a closed one does not) is said by the full command.
  await h.cli(['close', id]);
  const refused = await h.cli(['send', id, 'too late'], { env: viaProxy(), reject: false });
  const refusedFull = await h.cli(['send', id, 'too late'], { env: fullPath, reject: false });
  assert.equal(refused.exitCode, 1);
  assert.equal(refused.stderr, refusedFull.stderr);

  // An unknown conversation: the quick path asks, then leaves the message to the full command.
  seen.length = 0;
  const missing = await h.cli(['pause', 'conv-missing-0000'], { env: viaProxy(), reject: false });
  const missingFull = await h.cli(['pause', 'conv-missing-0000'], { env: fullPath, reject: false });
  assert.ok(seen.length > 0, 'the quick path asked first');
  assert.equal(missing.exitCode, 1);
  assert.equal(missing.stderr, missingFull.stderr);
});
