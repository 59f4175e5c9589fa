// Encryption at rest: the AES-256-GCM payload codec, on every client, worker and CLI command when a key
// is set; the codec server for the Web UI; rotation; wrong keys. Histories are read raw (gRPC, no
// codec) and searched for the conversation's text.
import { Client, Connection } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa, type ResultPromise } from 'execa';
import { chromium, type Browser } from 'playwright-core';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA, encryptionCodec, keyFingerprint, payloadKeyId } from '../../src/security/codec.js';
import { findTemporalCli } from '../../src/server/temporal-cli.js';
import { liveStreamId } from '../../src/live/stream-id.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import { samePromptSameReply, type Script } from '../../src/testing/scripted-model.js';
import {
  ROOT,
  freePort,
  historyText,
  startHarness,
  waitFor,
  waitUntilListed,
  type Harness,
  type WorkerProcess,
} from '../support/harness.js';
import { codecSettings } from '../../src/settings/codec.js';
import { storeSettings } from '../../src/settings/store.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;
type Payload = { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null };

const KEY_A = randomBytes(32).toString('base64');
const KEY_B = randomBytes(32).toString('base64');
const KEY_WRONG = randomBytes(32).toString('base64');
const ID_A = keyFingerprint(Buffer.from(KEY_A, 'base64'));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s));
const jsonPayload = (value: unknown): Payload => ({ metadata: { encoding: utf8('json/plain') }, data: utf8(JSON.stringify(value)) });
const meta = (p: Payload, key: string) => (p.metadata?.[key] ? Buffer.from(p.metadata[key]).toString() : undefined);

/** Every payload in a (raw) proto message with where it is, e.g. `events.3.…input.payloads.0`. */
function payloadsIn(root: unknown): { where: string; payload: Payload }[] {
  const out: { where: string; payload: Payload }[] = [];
  const walk = (v: unknown, where: string): void => {
    if (!v || typeof v !== 'object' || v instanceof Uint8Array) return;
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${where}.${i}`));
    const o = v as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object' && 'data' in o && !Array.isArray(o.metadata)) {
      out.push({ where, payload: o as Payload });
      return;
    }
    for (const [k, x] of Object.entries(o)) walk(x, where ? `${where}.${k}` : k);
  };
  walk(root, '');
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Against a real dev server (with the Web UI pointed at `faheem codec-server`) and worker processes.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TOKEN = 'codec-token-7f3a';
const MESSAGE = 'Summon the purple walrus 4417 and report';
const COMMAND = 'echo marmalade-cmd-81 | tr a-z A-Z';
const OUTPUT = 'MARMALADE-CMD-81';
const REPLY = 'Walrus report: tangerine-9921';
const MODEL_ERROR = 'llama-refusal-5521';

let h: Harness;
let raw: Connection;
let plainClient: Client; // the default data converter: what anyone without the key sees
let codecServer: ResultPromise | undefined;
let codecUrl = '';
/** The token the codec server made and printed once. */
let codecToken = '';
let uiOrigin = '';
let browser: Browser | undefined;
let worker: WorkerProcess | undefined;

/** `faheem …` with the harness environment plus `env` (e.g. other keys). */
async function faheem(args: string[], env: Record<string, string> = {}) {
  const r = await execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], { cwd: ROOT, env: { ...h.env, ...env }, reject: false });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode ?? -1 };
}

/** The history exactly as Temporal stores it: a gRPC read with no data converter at all. */
async function rawHistory(workflowId: string, runId?: string) {
  const events: unknown[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const res = await raw.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId, ...(runId ? { runId } : {}) },
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    events.push(...(res.history?.events ?? []));
    nextPageToken = res.nextPageToken?.length ? res.nextPageToken : undefined;
  } while (nextPageToken);
  return { events };
}

const rotatedEnv = { FAHEEM_ENCRYPTION_KEY: '', FAHEEM_ENCRYPTION_KEYS: `B:${KEY_B},A:${KEY_A}` };

before(async () => {
  // The codec server first (its origin list needs the UI's port), then the dev server with the UI
  // pointed at it. The codec server holds the rotated key list, so it reads everything this file writes.
  const [uiPort, codecPort] = [await freePort(), await freePort()];
  uiOrigin = `http://127.0.0.1:${uiPort}`;
  codecUrl = `http://127.0.0.1:${codecPort}`;
  let out = '';
  codecServer = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'codec-server', '--port', String(codecPort), '--ui-origin', uiOrigin], {
    cwd: ROOT,
    env: { ...rotatedEnv, FAHEEM_CODEC_TOKEN: '' },
    all: true,
    reject: false,
  });
  codecServer.all?.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(
    'the codec server',
    () => {
      if (codecServer!.exitCode !== null) throw new Error(`codec-server exited: ${out}`);
      return out.includes('temporal CLI:');
    },
    30_000,
  );
  // No token given: it made one and printed it once, with the endpoint for the Web UI.
  codecToken = /Token \(new, shown once[^)]*\): (\S+)/.exec(out)?.[1] ?? '';
  assert.match(codecToken, /^[A-Za-z0-9_-]{43}$/, out);
  assert.ok(out.includes(`--ui-codec-endpoint ${codecUrl}/${codecToken}`), out);
  assert.ok(out.includes(`--codec-endpoint ${codecUrl} --codec-auth "Bearer ${codecToken}"`), out);
  h = await startHarness({
    name: 'encryption',
    script: () => ({ content: 'ok' }),
    ui: true,
    uiPort,
    codecEndpoint: `${codecUrl}/${codecToken}`,
    env: { FAHEEM_ENCRYPTION_KEY: KEY_A },
    record: false,
  });
  raw = await Connection.connect({ address: h.server.address });
  plainClient = new Client({ connection: raw, namespace: 'default' });
});
after(async () => {
  await browser?.close();
  codecServer?.kill('SIGTERM');
  await codecServer;
  await raw?.close();
  await h?.close();
});

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor'] });

describe('with a key, against a dev server', () => {
  let conversationId = '';

  test('the history holds no message, command, output or error text; CLI and SDK work as before', async () => {
    worker = await h.startWorker();
    let turn = 0;
    // The command, then a look for the key from inside the agent's shell (it must not be there).
    const script: Script = () => {
      const t = turn++;
      if (t === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: COMMAND } }] };
      if (t === 1)
        return { toolCalls: [{ name: 'terminal', arguments: { command: 'printenv FAHEEM_ENCRYPTION_KEY || echo key-not-visible' } }] };
      // Held after its first words until a follower has seen them: live lines go out only while
      // someone follows, and this proves the published ones went through the codec.
      return { content: REPLY, wordByWord: true, gate: 'live', gateAfter: 2 };
    };
    h.model.setScript(samePromptSameReply(script));
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      firstMessage: MESSAGE,
      run: true,
    });
    conversationId = conversation.id;
    const stopFollowing = new AbortController();
    const following = (async () => {
      for await (const item of conversation.follow({ live: true, signal: stopFollowing.signal }))
        if ('live' in item && item.kind === 'model_delta') h.model.release('live');
    })().catch(() => undefined);
    const final = await conversation.waitUntil((s) => s.status === 'finished', 100, 120_000);
    stopFollowing.abort();
    await following;
    assert.equal(final.status, 'finished');

    // The SDK reads it (through the codec).
    const events = await conversation.events();
    assert.ok(events.some((e) => e.kind === 'message' && e.text === MESSAGE));
    assert.ok(events.some((e) => e.kind === 'observation' && e.content.includes(OUTPUT)));
    assert.ok(events.some((e) => e.kind === 'message' && e.text === REPLY));
    assert.ok(
      events.some((e) => e.kind === 'observation' && e.content.includes('key-not-visible')),
      'commands do not get the key',
    );
    assert.ok(!JSON.stringify(events).includes(KEY_A));

    // The CLI too.
    const status = JSON.parse((await h.cli(['status', conversation.id, '--json'])).stdout) as { status: string };
    assert.equal(status.status, 'finished');
    const cliEvents = (await h.cli(['events', conversation.id, '--json'])).stdout;
    assert.ok(cliEvents.includes(OUTPUT) && cliEvents.includes(MESSAGE));
    // Search attributes stay readable: `list` filters on them (once the visibility store has the row).
    await waitUntilListed(h, { status: 'finished' }, conversation.id);
    assert.ok((await h.cli(['list', '--status', 'finished'])).stdout.includes(conversation.id), 'list --status finished shows it');

    // The raw history: none of the text, and every payload but the search attributes encrypted.
    const history = await rawHistory(conversation.id);
    const text = historyText(history);
    for (const secret of [MESSAGE, 'purple walrus', COMMAND, 'marmalade', OUTPUT, REPLY, 'tangerine'])
      assert.ok(!text.includes(secret), `raw history contains "${secret}"`);
    const payloads = payloadsIn(history);
    // Besides search attributes, only the SDK's own patch markers (a patch id, no conversation data).
    const plain = payloads.filter(
      (p) =>
        !/searchAttributes|markerRecordedEventAttributes\.details\.patch-data/.test(p.where) &&
        meta(p.payload, 'encoding') !== ENCRYPTED_ENCODING,
    );
    assert.deepEqual(
      plain.map((p) => `${p.where}: ${meta(p.payload, 'encoding')}`),
      [],
    );
    assert.ok(payloads.filter((p) => meta(p.payload, 'encoding') === ENCRYPTED_ENCODING).length > 10);

    // The live lines (the reply as it streamed, the command's output) went through the codec too.
    const liveHistory = await rawHistory(liveStreamId(conversation.id));
    const liveText = historyText(liveHistory);
    assert.ok(liveHistory.events.length > 3, 'the live stream was published to');
    for (const secret of [OUTPUT, 'marmalade', REPLY, 'tangerine'])
      assert.ok(!liveText.includes(secret), `raw live stream contains "${secret}"`);
    assert.deepEqual(
      payloadsIn(liveHistory)
        .filter(
          (p) =>
            !/searchAttributes|markerRecordedEventAttributes\.details\.patch-data/.test(p.where) &&
            meta(p.payload, 'encoding') !== ENCRYPTED_ENCODING,
        )
        .map((p) => `${p.where}: ${meta(p.payload, 'encoding')}`),
      [],
    );
    // User metadata is among them: the summary (first message), the activity summaries (`$ echo …`).
    const summaries = payloads.filter((p) => /userMetadata\.summary/.test(p.where));
    assert.ok(summaries.length >= 3, `${summaries.length} summaries`);
    assert.ok(summaries.every((s) => meta(s.payload, 'encoding') === ENCRYPTED_ENCODING));
    // What stays plain: search attribute values, activity types, the workflow type and id.
    assert.ok(text.includes('"finished"') && text.includes('runTool') && text.includes('conversation'));

    // The same through `temporal workflow show -o json` (the standard export), no codec.
    const cli = await findTemporalCli(process.env.TEMPORAL_CLI);
    const shown = await execa(cli, ['workflow', 'show', '--address', h.server.address, '-w', conversation.id, '-o', 'json']);
    const exported = historyText(historyFromJSON(JSON.parse(shown.stdout)));
    for (const secret of [MESSAGE, COMMAND, OUTPUT, REPLY]) assert.ok(!exported.includes(secret), `exported history contains "${secret}"`);

    // What the server holds besides history: the start's user metadata, and the current details the
    // workflow publishes (answered through a query, encrypted by the worker).
    const described = await raw.workflowService.describeWorkflowExecution({
      namespace: 'default',
      execution: { workflowId: conversation.id },
    });
    const summary = described.executionConfig?.userMetadata?.summary;
    assert.equal(meta(summary as Payload, 'encoding'), ENCRYPTED_ENCODING);
    assert.ok(!historyText(described).includes('purple walrus'));
    const metadataQuery = await raw.workflowService.queryWorkflow({
      namespace: 'default',
      execution: { workflowId: conversation.id },
      query: { queryType: '__temporal_workflow_metadata' },
    });
    const answer = metadataQuery.queryResult?.payloads?.[0] as Payload;
    assert.equal(meta(answer, 'encoding'), ENCRYPTED_ENCODING);
    assert.ok(!historyText(metadataQuery).includes('Last action'));
    const [decoded] = await encryptionCodec(codecSettings({ FAHEEM_ENCRYPTION_KEY: KEY_A }))!.decode([answer as never]);
    const details = JSON.parse(Buffer.from(decoded!.data!).toString()) as { currentDetails?: string };
    assert.match(details.currentDetails ?? '', /Last action:.*printenv FAHEEM_ENCRYPTION_KEY/);
  });

  test('error messages are encrypted too (the failure converter encodes them), and still readable with the key', async () => {
    h.model.setScript(() => ({ status: 400, error: `${MODEL_ERROR}: this request is refused` }));
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      firstMessage: 'Fail please',
      run: true,
    });
    const final = await conversation.waitUntil((s) => s.status === 'error', 100, 60_000);
    assert.match(final.lastError ?? '', new RegExp(MODEL_ERROR));
    const history = await rawHistory(conversation.id);
    const failed = (
      history.events as { activityTaskFailedEventAttributes?: { failure?: { message?: string; encodedAttributes?: Payload } } }[]
    ).find((e) => e.activityTaskFailedEventAttributes);
    assert.ok(failed, 'the model call failed in history');
    const failure = failed.activityTaskFailedEventAttributes!.failure!;
    assert.equal(failure.message, 'Encoded failure');
    assert.equal(meta(failure.encodedAttributes!, 'encoding'), ENCRYPTED_ENCODING);
    assert.ok(!historyText(history).includes(MODEL_ERROR), 'the error text is not in the raw history');
    // With the key the message comes back: the workflow decoded the failure into lastError (above),
    // and the CLI shows it.
    assert.match((await h.cli(['status', conversation.id])).stdout, new RegExp(MODEL_ERROR));
  });

  test('payloads over the threshold go to external storage encrypted', async () => {
    // Six messages of 95,000 characters: each is under the 512 KB threshold (so the client keeps
    // them inline), but the state carried into the next run is not, so the worker stores it.
    const marker = (i: number) => `avocado-${i}-`.repeat(95_000 / 12).slice(0, 95_000);
    let calls = 0;
    h.model.setScript(
      samePromptSameReply(() =>
        calls++ < 2 ? { toolCalls: [{ name: 'think', arguments: { thought: 'thinking' } }] } : { content: 'done' },
      ),
    );
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      firstMessage: marker(0),
      continueAsNewEverySteps: 1,
    });
    for (let i = 1; i < 6; i++) await conversation.sendMessage(marker(i));
    const final = await conversation.run().then(() => conversation.state());
    assert.equal(final.status, 'finished', final.lastError ?? '');
    const dir = path.join(h.home, 'payloads');
    const files = await waitFor('stored payload files', async () => {
      const names = existsSync(dir) ? (await readdir(dir)).filter((f) => f.endsWith('.bin')) : [];
      return names.length > 0 ? names : undefined;
    });
    for (const f of files) {
      const bytes = await readFile(path.join(dir, f));
      assert.ok(!bytes.toString('latin1').includes('avocado-'), `${f} holds plain text`);
      // The stored file is the encrypted payload (the codec ran before external storage).
      const stored = ProtoPayload.decode(bytes);
      assert.equal(meta(stored as Payload, 'encoding'), ENCRYPTED_ENCODING);
      assert.equal(meta(stored as Payload, KEY_ID_METADATA), ID_A);
    }
    // Readable with the key through every run.
    const events = await conversation.events();
    for (let i = 0; i < 6; i++)
      assert.ok(
        events.some((e) => e.kind === 'message' && e.text === marker(i)),
        `message ${i}`,
      );
    for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${conversation.id}'` })) {
      assert.ok(!historyText(await rawHistory(conversation.id, wf.runId)).includes('avocado-'), `run ${wf.runId}`);
    }
  });

  test('the Web UI shows the decoded conversation through the codec server', async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
    const codecCalls: string[] = [];
    page.on('requestfinished', (r) => void (r.url().startsWith(codecUrl) && codecCalls.push(`${r.method()} ${new URL(r.url()).pathname}`)));
    await page.goto(`${h.server.uiUrl}/namespaces/default/workflows/${conversationId}`);
    assert.equal(h.server.uiUrl, uiOrigin);
    const allText = async () =>
      (await Promise.all(page.frames().map((f) => f.evaluate('document.body ? document.body.innerText : ""').then(String, () => '')))).join(
        '\n',
      );
    // The activity summary (the command) in the timeline, and the summary (the first message) under
    // User Metadata: both encrypted in history, decoded by the browser through the codec server.
    await page
      .getByText(/\$ echo marmalade-cmd-81/)
      .filter({ visible: true })
      .first()
      .waitFor({ timeout: 60_000 });
    await waitFor(
      'the decoded first message in User Metadata',
      async () => {
        await page
          .getByText('User Metadata', { exact: true })
          .first()
          .click({ timeout: 2_000 })
          .catch(() => undefined);
        return (await allText()).includes(MESSAGE);
      },
      60_000,
      250,
    );
    assert.ok(
      codecCalls.includes(`POST /${codecToken}/decode`),
      `the browser called the codec server, with the token in the path: ${codecCalls.join(', ')}`,
    );
  });

  test('the codec server: /encode, /decode, CORS for the Web UI, errors', async () => {
    const post = (op: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${codecUrl}/${op}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', Authorization: `Bearer ${codecToken}`, ...headers },
        body: JSON.stringify(body),
      });
    const plainJson = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"hello codec"').toString('base64'),
    };
    const encoded = (await (await post('encode', { payloads: [plainJson] })).json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    assert.equal(Buffer.from(encoded.payloads[0]!.metadata.encoding!, 'base64').toString(), ENCRYPTED_ENCODING);
    assert.equal(
      Buffer.from(encoded.payloads[0]!.metadata[KEY_ID_METADATA]!, 'base64').toString(),
      'B',
      'the first key of its list encrypts',
    );
    const decodedRes = await post('decode', encoded, { Origin: uiOrigin });
    assert.equal(decodedRes.status, 200);
    assert.equal(decodedRes.headers.get('access-control-allow-origin'), uiOrigin);
    assert.deepEqual(((await decodedRes.json()) as { payloads: unknown[] }).payloads, [plainJson]);

    // A payload straight from the raw history (written with key A) decodes to the first message.
    const history = await rawHistory(conversationId);
    const input = payloadsIn(history).find((p) => /workflowExecutionStartedEventAttributes\.input/.test(p.where))!.payload;
    const toJson = (p: Payload) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
    });
    const fromHistory = (await (await post('decode', { payloads: [toJson(input)] })).json()) as { payloads: { data: string }[] };
    assert.ok(Buffer.from(fromHistory.payloads[0]!.data, 'base64').toString().includes(MESSAGE));

    // The official CLI decodes through it too (`--codec-endpoint`).
    const shown = await execa(await findTemporalCli(process.env.TEMPORAL_CLI), [
      'workflow',
      'show',
      '--address',
      h.server.address,
      '-w',
      conversationId,
      '-o',
      'json',
      '--codec-endpoint',
      codecUrl,
      '--codec-auth',
      `Bearer ${codecToken}`,
    ]);
    assert.ok(historyText(historyFromJSON(JSON.parse(shown.stdout))).includes(MESSAGE), 'temporal workflow show --codec-endpoint decodes');

    // Preflight from the Web UI: allowed, with the headers the UI sends; another origin: refused.
    const preflight = await fetch(`${codecUrl}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: uiOrigin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace,authorization',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), uiOrigin);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-Namespace, Authorization, Content-Type/);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    const evil = await fetch(`${codecUrl}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    assert.equal(evil.status, 403);
    assert.equal(evil.headers.get('access-control-allow-origin'), null);
    const evilPost = await post('decode', encoded, { Origin: 'http://evil.example' });
    assert.equal(evilPost.headers.get('access-control-allow-origin'), null, 'a browser on another origin cannot read the answer');
    assert.equal(evilPost.status, 403, 'nor have it decrypted at all');
    // fetch sets Host itself; a raw request can say what a DNS-rebound page would.
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${codecUrl}/decode`,
        { method: 'POST', headers: { Host: 'evil.example', 'Content-Type': 'application/json', Authorization: `Bearer ${codecToken}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ payloads: [] }));
    });
    assert.equal(rebound, 403, 'a DNS-rebound host name is refused');

    // A payload under a key it does not have: a clear error, not garbage.
    const [foreign] = await encryptionCodec(codecSettings({ FAHEEM_ENCRYPTION_KEY: KEY_WRONG }))!.encode([jsonPayload('x') as never]);
    const refused = await post('decode', { payloads: [toJson(foreign as Payload)] });
    assert.equal(refused.status, 422);
    assert.match(
      ((await refused.json()) as { error: string }).error,
      /encrypted with key [0-9a-f]{8}, which is not in FAHEEM_ENCRYPTION_KEYS\/FAHEEM_ENCRYPTION_KEY/,
    );
    assert.equal((await post('decode', { nope: 1 })).status, 400);
    assert.equal((await fetch(`${codecUrl}/${codecToken}/decode`, { method: 'POST', body: 'not json' })).status, 400);

    // A token of one's own (FAHEEM_CODEC_TOKEN, --token-file, or --token with a warning): 401 without
    // `Authorization: Bearer <token>`, and the token is not printed; --ip beyond loopback warns.
    const tokenFile = path.join(h.home, 'codec-token');
    await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const variants: { args: string[]; env: Record<string, string>; said?: RegExp }[] = [
      { args: [], env: { FAHEEM_CODEC_TOKEN: TOKEN } },
      {
        args: ['--token-file', tokenFile, '--ip', '0.0.0.0'],
        env: {},
        said: /--ip 0\.0\.0\.0 listens on every network interface.*whoever holds its token can decrypt/,
      },
      { args: ['--token', TOKEN], env: {}, said: /--token shows in `ps`.*prefer --token-file FILE or FAHEEM_CODEC_TOKEN/ },
    ];
    for (const v of variants) {
      const port = await freePort();
      let out = '';
      const guarded = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'codec-server', '--port', String(port), ...v.args], {
        cwd: ROOT,
        env: { FAHEEM_ENCRYPTION_KEY: KEY_A, FAHEEM_CODEC_TOKEN: '', ...v.env },
        all: true,
        reject: false,
      });
      guarded.all?.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await waitFor('the guarded codec server', () => out.includes('temporal CLI:'), 30_000);
        if (v.said) assert.match(out, v.said);
        assert.ok(!out.includes(`Token (new`), 'no token made when one is given');
        if (!v.args.includes('--token')) assert.ok(!out.includes(TOKEN), `the token given is not printed: ${out}`);
        const url = `http://127.0.0.1:${port}/encode`;
        const body = JSON.stringify({ payloads: [plainJson] });
        assert.equal((await fetch(url, { method: 'POST', body })).status, 401);
        assert.equal((await fetch(url, { method: 'POST', body, headers: { Authorization: 'Bearer wrong' } })).status, 401);
        assert.equal((await fetch(url, { method: 'POST', body, headers: { Authorization: `Bearer ${TOKEN}` } })).status, 200);
        const pre = await fetch(url, {
          method: 'OPTIONS',
          headers: { Origin: 'http://localhost:8233', 'Access-Control-Request-Method': 'POST' },
        });
        assert.equal(pre.status, 204, 'the preflight carries no token and is answered');
      } finally {
        guarded.kill('SIGTERM');
        await guarded;
      }
    }

    // Without a key, or with a malformed one, it says so and exits.
    const none = await faheem(['codec-server', '--port', String(await freePort())], { FAHEEM_ENCRYPTION_KEY: '' });
    assert.notEqual(none.exitCode, 0);
    assert.match(none.stderr, /no encryption key: set FAHEEM_ENCRYPTION_KEY/);
  });

  test('faheem server with a key: a codec server in-process, the Web UI pointed at it, said in the banner', async () => {
    const db = path.join(h.home, 'server-test.db');
    // Ports found free can be taken before the server binds them (files run side by side): a server
    // that stops at start on a taken port is started again on new ones, three times in all.
    const start = async () => {
      const [port, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
      const proc = execa(
        'node',
        [
          path.join(ROOT, 'bin/faheem.js'),
          'server',
          '--port',
          String(port),
          '--ui-port',
          String(uiPort),
          '--codec-port',
          String(codecPort),
          '--db',
          db,
        ],
        { cwd: ROOT, env: { FAHEEM_ENCRYPTION_KEY: KEY_A }, all: true, reject: false },
      );
      const started = { proc, uiPort, codecPort, out: '' };
      proc.all?.on('data', (d: Buffer) => (started.out += d.toString()));
      const up = await waitFor(
        'the banner',
        () => {
          if (proc.exitCode !== null) return 'exited';
          return started.out.includes('Encryption:') ? 'up' : false;
        },
        60_000,
      );
      return { ...started, up };
    };
    let started = await start();
    for (let attempt = 1; attempt < 3 && started.up === 'exited' && /address already in use/.test(started.out); attempt++)
      started = await start();
    const { proc: server, uiPort, codecPort } = started;
    const out = started.out;
    try {
      const endpoint = `http://127.0.0.1:${codecPort}`;
      assert.equal(started.up, 'up', out);
      assert.match(
        out,
        new RegExp(`Encryption: payloads encrypted with key ${ID_A}; the Web UI decodes them through the codec server at ${endpoint}`),
      );
      const settings = (await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string } };
      // The Web UI's endpoint carries the in-process server's token; without it, nothing is decoded.
      const uiEndpoint = settings.Codec?.Endpoint ?? '';
      assert.match(uiEndpoint, new RegExp(`^${endpoint}/[A-Za-z0-9_-]{43}$`));
      assert.equal((await fetch(`${endpoint}/decode`, { method: 'POST', body: '{"payloads": []}' })).status, 401);
      const [enc] = await encryptionCodec(codecSettings({ FAHEEM_ENCRYPTION_KEY: KEY_A }))!.encode([
        jsonPayload('via faheem server') as never,
      ]);
      const body = {
        payloads: [
          {
            metadata: Object.fromEntries(Object.entries(enc!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
            data: Buffer.from(enc!.data!).toString('base64'),
          },
        ],
      };
      const res = await fetch(`${uiEndpoint}/decode`, {
        method: 'POST',
        headers: { Origin: `http://localhost:${uiPort}` },
        body: JSON.stringify(body),
      });
      assert.equal(res.headers.get('access-control-allow-origin'), `http://localhost:${uiPort}`);
      const decoded = (await res.json()) as { payloads: { data: string }[] };
      assert.equal(Buffer.from(decoded.payloads[0]!.data, 'base64').toString(), '"via faheem server"');
    } finally {
      server.kill('SIGTERM');
      await server;
    }
    assert.equal(server.exitCode, 0, out);
  });

  test('a malformed key stops every command with a clear message', async () => {
    for (const args of [['status', conversationId], ['list'], ['codec-server']]) {
      const r = await faheem(args, { FAHEEM_ENCRYPTION_KEY: 'dG9vIHNob3J0' });
      assert.notEqual(r.exitCode, 0, args.join(' '));
      assert.match(r.stderr, /FAHEEM_ENCRYPTION_KEY is 9 bytes once base64-decoded; it must be exactly 32/);
    }
    const list = await faheem(['list'], { FAHEEM_ENCRYPTION_KEY: '', FAHEEM_ENCRYPTION_KEYS: `new:${KEY_B},old` });
    assert.notEqual(list.exitCode, 0);
    assert.match(list.stderr, /FAHEEM_ENCRYPTION_KEYS entry 2 is not base64|FAHEEM_ENCRYPTION_KEYS entry 2 is \d+ bytes/);
  });

  test('rotation: new key first, old key second; old conversations read, new payloads use the new key', async () => {
    // The workers move to the rotated list (B encrypts, A still decrypts).
    await worker?.kill();
    await h.startWorker(rotatedEnv);
    const before = await faheem(['events', conversationId, '--json'], rotatedEnv);
    assert.equal(before.exitCode, 0, before.stderr);
    assert.ok(before.stdout.includes(MESSAGE) && before.stdout.includes(OUTPUT));

    let turn = 0;
    h.model.setScript(
      samePromptSameReply(() =>
        turn++ === 0
          ? { toolCalls: [{ name: 'terminal', arguments: { command: 'echo rotated-cmd | rev' } }] }
          : { content: 'rotated reply' },
      ),
    );
    const sent = await faheem(['send', conversationId, 'Now the kiwi message 3318', '--run'], rotatedEnv);
    assert.equal(sent.exitCode, 0, sent.stderr);
    // Waited for through the SDK with the rotated keys (a query each time, not two CLI processes);
    // the CLI then reads the result with the same keys.
    const rotatedClient = new Client({
      connection: h.client.connection,
      namespace: h.namespace,
      dataConverter: dataConverter(storeSettings({ ...h.env, ...rotatedEnv })),
    });
    const rotated = await Conversation.attach(rotatedClient, conversationId);
    await waitFor(
      'the second run finished',
      async () =>
        (await rotated.state()).status === 'finished' &&
        (await rotated.events()).some((e) => e.kind === 'message' && e.text === 'rotated reply'),
      60_000,
      200,
    );
    const status = await faheem(['status', conversationId, '--json'], rotatedEnv);
    assert.equal((JSON.parse(status.stdout || '{}') as { status?: string }).status, 'finished', status.stderr);
    const events = (await faheem(['events', conversationId, '--json'], rotatedEnv)).stdout;
    assert.ok(events.includes('Now the kiwi message 3318') && events.includes('dmc-detator'));

    // Raw: the start (written before) carries A's id, everything after the rotation carries B.
    const history = await rawHistory(conversationId);
    assert.ok(!historyText(history).includes('kiwi') && !historyText(history).includes('dmc-detator'));
    const ids = payloadsIn(history)
      .filter((p) => !/searchAttributes/.test(p.where))
      .map((p) => ({ where: p.where, id: payloadKeyId(p.payload as never) }));
    assert.equal(ids.find((p) => /workflowExecutionStartedEventAttributes\.input/.test(p.where))?.id, ID_A);
    const update = (history.events as { workflowExecutionUpdateAcceptedEventAttributes?: unknown }[])
      .map((e, i) => ({ e, i }))
      .filter(({ e }) => e.workflowExecutionUpdateAcceptedEventAttributes);
    const lastUpdate = update[update.length - 1]!.i;
    const later = ids.filter((p) => Number(p.where.split('.')[1]) >= lastUpdate);
    assert.ok(later.length > 3);
    assert.deepEqual([...new Set(later.map((p) => p.id))], ['B'], 'payloads written after the rotation use the new key');
    assert.ok(ids.some((p) => p.id === ID_A) && ids.some((p) => p.id === 'B'));
  });

  test('a process with only a wrong key gets a clear error, never garbage', async () => {
    const wrong = { FAHEEM_ENCRYPTION_KEY: KEY_WRONG, FAHEEM_ENCRYPTION_KEYS: '' };
    const idWrong = keyFingerprint(Buffer.from(KEY_WRONG, 'base64'));
    // It fails with the reason (a wait for a timeout would end in a timeout's message instead).
    const events = await faheem(['events', conversationId], wrong);
    assert.notEqual(events.exitCode, 0);
    assert.match(
      events.stderr,
      new RegExp(
        `encrypted with key (B|${ID_A}), which is not in FAHEEM_ENCRYPTION_KEYS/FAHEEM_ENCRYPTION_KEY of this process \\(it has ${idWrong}\\)`,
      ),
    );
    const status = await faheem(['status', conversationId], wrong);
    assert.notEqual(status.exitCode, 0);
    assert.match(status.stderr, /which is not in FAHEEM_ENCRYPTION_KEYS\/FAHEEM_ENCRYPTION_KEY/);
    // Only B (A was dropped too early): the old conversation's payloads name A.
    const onlyB = await faheem(['events', conversationId], { FAHEEM_ENCRYPTION_KEY: '', FAHEEM_ENCRYPTION_KEYS: `B:${KEY_B}` });
    assert.notEqual(onlyB.exitCode, 0);
    assert.match(onlyB.stderr, new RegExp(`encrypted with key ${ID_A}, which is not in`));
    // The conversation is unharmed for those with the key.
    const ok = await faheem(['status', conversationId, '--json'], rotatedEnv);
    assert.equal(JSON.parse(ok.stdout).status, 'finished');
  });

  test('without a key, the same CLI reads nothing it cannot decrypt and says why', async () => {
    const r = await faheem(['events', conversationId], { FAHEEM_ENCRYPTION_KEY: '', FAHEEM_ENCRYPTION_KEYS: '' });
    assert.notEqual(r.exitCode, 0);
    assert.ok(!r.stdout.includes(MESSAGE));
    assert.match(
      r.stderr,
      /this conversation is encrypted and this process has no key: set FAHEEM_ENCRYPTION_KEY or FAHEEM_ENCRYPTION_KEYS/,
    );
    // The plain SDK client shows the encoding it cannot read rather than garbage.
    const handle = plainClient.workflow.getHandle(conversationId);
    await assert.rejects(handle.query('state'), /binary\/encrypted|Unknown encoding/i);
  });
});
