// Durable webhooks end to end: a real dev server, a real worker process, the webhook worker started
// here (as `faheem api` starts it) and real HTTP receivers on 127.0.0.1, allowed through the allow
// list. The receiver checks each signature; the first delivery gets a 503 and the retry gets
// through; a pause and a finish are each delivered; a receiver answering 400 records a failed
// delivery while the conversation goes on; a private address is refused at create time (and by
// the webhook worker, for a conversation that skipped the check); the secret is in no history.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { Agent, Conversation, LLM, TerminalTool } from '../../src/client.js';
import { readSettings } from '../../src/environment.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import type { ConversationEvent, WebhookEvent, WebhookPayload } from '../../src/types.js';
import { lastUserMessage, type Script } from '../../src/testing/scripted-model.js';
import {
  createWebhookWorker,
  FileWebhookSecrets,
  parseAllowList,
  prepareWebhook,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  webhookAllowList,
  webhookTaskQueue,
  WebhookTargetError,
} from '../../src/webhooks/index.js';
import { DEFAULTS } from '../../src/types.js';
import { historyText, startHarness, waitFor, type Harness } from '../support/harness.js';

/** One request a receiver got: the raw body, as sent, and its headers. */
interface Received {
  body: string;
  signature: string | undefined;
  delivery: string | undefined;
  answered: number;
}

/** An HTTP receiver on 127.0.0.1 that answers each request with the next status of `answers` (then the last). */
async function startReceiver(answers: number[]): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = answers[Math.min(received.length, answers.length - 1)]!;
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: req.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined,
        delivery: req.headers['x-faheem-delivery'] as string | undefined,
        answered,
      });
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, received, server };
}

// The first request of a conversation whose message says HOLD waits at a gate (so a pause lands
// while it runs); any other request ends the run with text (finished).
const script: Script = (request) =>
  lastUserMessage(request).includes('HOLD') ? { content: 'Working on it.', gate: 'hold' } : { content: 'Done.' };

const SECRET = 'whsec-e2e-4b1d9c0f7a6e';
let h: Harness;
let webhookWorker: Worker;
let webhookRun: Promise<void>;
let secretsDir: string;
let secrets: FileWebhookSecrets;
const receivers: Server[] = [];
const allow = parseAllowList('127.0.0.1');

before(async () => {
  h = await startHarness({ name: 'webhooks', script });
  await h.startWorker();
  secretsDir = await mkdtemp(path.join(tmpdir(), 'faheem-webhooks-'));
  secrets = new FileWebhookSecrets(path.join(secretsDir, 'api', 'webhooks'));
  // As `faheem api` starts it: on the conversations' queue's webhook queue, with FAHEEM_WEBHOOK_ALLOW.
  const settings = readSettings({ ...h.env, FAHEEM_WEBHOOK_ALLOW: '127.0.0.1' }, 'api');
  const connection = await NativeConnection.connect({ address: h.server.address });
  webhookWorker = await createWebhookWorker({
    connection,
    namespace: h.namespace,
    taskQueue: webhookTaskQueue(DEFAULTS.taskQueue),
    secrets,
    allow: webhookAllowList(settings),
    dataConverter: dataConverter(h.env),
  });
  webhookRun = webhookWorker.run().finally(() => connection.close());
});

after(async () => {
  webhookWorker?.shutdown();
  await webhookRun;
  await Promise.all(receivers.map((s) => new Promise((r) => s.close(r))));
  await h?.close();
  if (secretsDir) await rm(secretsDir, { recursive: true, force: true });
});

const agent = () => new Agent({ llm: new LLM({ usageId: 'agent', model: 'openai/gpt-4o-mini' }), tools: [TerminalTool] });

/** Creates a conversation the way the API does: the webhook checked and its secret stored first. */
async function create(id: string, url: string, firstMessage: string): Promise<Conversation> {
  const webhook = await prepareWebhook(id, { url, secret: SECRET }, { secrets, allow });
  return Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), id, firstMessage, run: true, webhook });
}

const webhookEvents = (events: ConversationEvent[]) => events.filter((e): e is WebhookEvent => e.kind === 'webhook');

test('a pause and a finish are delivered, signed; a 503 is retried and the retry gets through', async () => {
  const receiver = await startReceiver([503, 200]);
  receivers.push(receiver.server);
  const id = `wh-retry-${process.pid}`;
  const conversation = await create(id, receiver.url, 'HOLD: work until paused');
  await h.model.reached('hold');
  await conversation.pause();
  await waitFor('paused', async () => (await conversation.state()).status === 'paused');
  h.model.release('hold');

  // The pause: refused once with 503, then delivered; the event log says so.
  const pausedDelivery = await waitFor('the pause delivered', async () => webhookEvents(await conversation.events())[0], 60_000);
  assert.equal(pausedDelivery.status, 'paused');
  assert.equal(pausedDelivery.delivered, true);
  assert.equal(pausedDelivery.attempts, 2, 'the first attempt got 503');
  assert.equal(pausedDelivery.statusCode, 200);
  assert.deepEqual(
    receiver.received.map((r) => r.answered),
    [503, 200],
  );
  assert.equal(receiver.received[0]!.body, receiver.received[1]!.body, 'the retry sends the same bytes');
  assert.equal(receiver.received[0]!.delivery, receiver.received[1]!.delivery, 'and the same delivery id');

  // The conversation goes on: a message and a run finish it, and the finish is delivered too.
  await conversation.sendMessage('now just say done');
  const result = await conversation.run();
  assert.equal(result.status, 'finished');
  const deliveries = await waitFor('the finish delivered', async () => {
    const found = webhookEvents(await conversation.events());
    return found.length >= 2 ? found : undefined;
  });
  assert.deepEqual(
    deliveries.map((d) => [d.status, d.delivered, d.attempts]),
    [
      ['paused', true, 2],
      ['finished', true, 1],
    ],
  );

  // Every request is signed over its raw body with the conversation's secret, and holds {id, status, event}.
  const events = await conversation.events();
  for (const r of receiver.received) {
    assert.ok(verifyWebhookSignature(r.body, SECRET, r.signature), `signature of ${r.body.slice(0, 80)}`);
    assert.equal(verifyWebhookSignature(r.body, 'another secret', r.signature), false);
    const payload = JSON.parse(r.body) as WebhookPayload;
    assert.deepEqual(Object.keys(payload).sort(), ['event', 'id', 'status']);
    assert.equal(payload.id, id);
    assert.equal(payload.event.kind, 'status');
    assert.deepEqual(payload.event, events[payload.event.index], 'the event as the event log has it');
    assert.equal(r.delivery, `${id}/${payload.event.index}`);
  }
  assert.deepEqual(
    receiver.received.map((r) => (JSON.parse(r.body) as WebhookPayload).status),
    ['paused', 'paused', 'finished'],
  );
  const finishedEvent = JSON.parse(receiver.received[2]!.body) as WebhookPayload;
  assert.equal(finishedEvent.event.kind === 'status' && finishedEvent.event.status, 'finished');

  // The secret is in no history; the URL is.
  const history = historyText(await h.client.workflow.getHandle(id).fetchHistory());
  assert.ok(history.includes(receiver.url), 'the search sees the payloads');
  assert.ok(!history.includes(SECRET), 'the webhook secret is in the workflow history');
  // The CLI shows the deliveries.
  const { stdout } = await h.cli(['events', id]);
  assert.match(stdout, /webhook: stop #\d+ \(paused\) delivered \(200\) after 2 attempts/);
});

test('a receiver answering 400 records a failed delivery, not retried, and the conversation goes on', async () => {
  const receiver = await startReceiver([400]);
  receivers.push(receiver.server);
  const conversation = await create(`wh-400-${process.pid}`, receiver.url, 'say done');
  const first = await waitFor('a failed delivery', async () => webhookEvents(await conversation.events())[0]);
  assert.deepEqual([first.status, first.delivered, first.attempts, first.statusCode], ['finished', false, 1, 400]);
  assert.match(first.reason ?? '', /answered 400/);
  assert.equal(receiver.received.length, 1, 'a 400 is final: not retried');
  // Not a failure of the conversation: it takes the next message and finishes again.
  const state = await conversation.state();
  assert.equal(state.status, 'finished');
  assert.equal(state.lastError, null);
  await conversation.sendMessage('once more');
  assert.equal((await conversation.run()).status, 'finished');
  await waitFor('the second stop delivered (and refused) too', async () => webhookEvents(await conversation.events()).length === 2);
});

test('a private address is refused at create time, and by the webhook worker for a conversation that skipped the check', async () => {
  // At create time: loopback not on the list, private, metadata, and a host name that resolves to loopback.
  for (const url of ['http://127.0.0.2:9/hook', 'http://10.1.2.3/hook', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/']) {
    await assert.rejects(
      prepareWebhook(`wh-refused-${process.pid}`, { url, secret: SECRET }, { secrets, allow }),
      (err: unknown) => err instanceof WebhookTargetError && err.problem === 'forbidden',
      url,
    );
  }
  await assert.rejects(
    prepareWebhook(`wh-refused-${process.pid}`, { url: 'http://127.0.0.1:9/', secret: SECRET }, { secrets, allow: parseAllowList('') }),
    /loopback/,
  );
  assert.equal(await secrets.get(`wh-refused-${process.pid}`), undefined, 'no secret kept for a refused webhook');

  // Started through the SDK with a private URL (no prepareWebhook): the webhook worker refuses to send.
  const id = `wh-private-${process.pid}`;
  await secrets.put(id, SECRET);
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    id,
    firstMessage: 'say done',
    run: true,
    webhook: { url: 'http://10.255.255.1:9/hook' },
  });
  const refused = await waitFor('a refused delivery', async () => webhookEvents(await conversation.events())[0]);
  assert.deepEqual([refused.delivered, refused.attempts, refused.statusCode], [false, 1, undefined]);
  assert.match(refused.reason ?? '', /10\.255\.255\.1 is a private address/);
  assert.equal((await conversation.state()).status, 'finished');
});
