// Webhooks without a server: the signature, the address rules (IPv4, IPv6, IPv4 carried in IPv6,
// ranges, the allow list), the URL check, the host check over every address, the secrets folder,
// and the workflow's side (which stops are delivered, in what order, what the event says) through
// ConversationRun with a recording port.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { InvalidRequestError } from '../../../src/core/errors.js';
import type { ConversationInput, WebhookDeliveryInput } from '../../../src/core/types.js';
import {
  addressRefusal,
  blockedReason,
  embeddedIpv4,
  formatIp,
  inRange,
  NO_EXTRA_ALLOWED,
  parseAllowList,
  parseCidr,
  parseIp,
} from '../../../src/webhooks/addresses.js';
import {
  checkWebhookSecret,
  checkWebhookUrl,
  FileWebhookSecrets,
  prepareWebhook,
  resolveWebhookTarget,
  signWebhook,
  verifyWebhookSignature,
  WebhookTargetError,
} from '../../../src/webhooks/index.js';
import { checkMessageText } from '../../../src/conversation/workflow/messages.js';
import {
  close,
  pause,
  requestRun,
  setStatus,
  start,
  fail,
  markStuck,
  message,
} from '../../../src/conversation/workflow/runner/commands.js';
import { ConversationRun, MAX_WEBHOOK_BACKLOG, type RunEnvironment } from '../../../src/conversation/workflow/runner/conversation-run.js';
import type { EffectsPort } from '../../../src/conversation/workflow/runner/effects.js';
import { failedDelivery, WebhookDeliveries } from '../../../src/webhooks/workflow/webhooks.js';
import { conversationStart, Agent, LLM } from '../../../src/client/client.js';
import type { PatchId } from '../../../src/conversation/workflow/legacy/patches.js';

const ip = (text: string) => {
  const parsed = parseIp(text);
  assert.ok(parsed, `${text} parses`);
  return parsed;
};
const refused = (text: string, allow = NO_EXTRA_ALLOWED) => addressRefusal(ip(text), allow);

describe('the signature', () => {
  test('sha256= and the hex HMAC-SHA256 of the exact body with the secret', () => {
    const body = '{"id":"c1","status":"finished","event":{"index":3}}';
    const expected = createHmac('sha256', 'it is a secret').update(body).digest('hex');
    assert.equal(signWebhook(body, 'it is a secret'), `sha256=${expected}`);
    assert.equal(signWebhook(Buffer.from(body), 'it is a secret'), `sha256=${expected}`, 'bytes sign the same');
  });

  test('verification: the right signature passes; another body, secret or a cut header does not', () => {
    const body = '{"a":1}';
    const header = signWebhook(body, 's3cret');
    assert.equal(verifyWebhookSignature(body, 's3cret', header), true);
    assert.equal(verifyWebhookSignature('{"a": 1}', 's3cret', header), false, 'one space more');
    assert.equal(verifyWebhookSignature(body, 's3cret!', header), false);
    assert.equal(verifyWebhookSignature(body, 's3cret', header.slice(0, -1)), false);
    assert.equal(verifyWebhookSignature(body, 's3cret', undefined), false);
  });
});

describe('addresses', () => {
  test('IPv4 and IPv6 parse to their bytes; zones and brackets are dropped; others are not addresses', () => {
    assert.deepEqual(ip('10.1.2.3').bytes, [10, 1, 2, 3]);
    assert.equal(formatIp(ip('::1')), '0:0:0:0:0:0:0:1');
    assert.equal(formatIp(ip('[fe80::1%eth0]')), 'fe80:0:0:0:0:0:0:1');
    assert.equal(formatIp(ip('2001:db8::8:800:200c:417a')), '2001:db8:0:0:8:800:200c:417a');
    assert.deepEqual(ip('::ffff:127.0.0.1').bytes.slice(10), [0xff, 0xff, 127, 0, 0, 1]);
    assert.deepEqual(ip('1:2:3:4:5:6:1.2.3.4').bytes.slice(12), [1, 2, 3, 4]);
    for (const bad of ['example.com', '1.2.3', '1.2.3.256', '::g', '']) assert.equal(parseIp(bad), undefined, bad);
  });

  test('IPv4 refused by default: loopback, private, shared, link-local (metadata), this network, multicast, reserved', () => {
    const cases: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.255.0.9', /loopback/],
      ['10.0.0.5', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.1.1', /private/],
      ['100.100.100.200', /shared/],
      ['169.254.169.254', /link-local \(cloud metadata\)/],
      ['0.0.0.0', /this network/],
      ['224.0.0.1', /multicast/],
      ['255.255.255.255', /reserved/],
      ['198.18.0.1', /benchmarking/],
    ];
    for (const [address, why] of cases) assert.match(refused(address) ?? '', why, address);
  });

  test('public IPv4 passes, also next to the private ranges', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '192.169.0.1', '100.128.0.1', '11.0.0.1'])
      assert.equal(refused(address), undefined, address);
  });

  test('IPv6 refused by default: loopback, unspecified, link-local, unique-local (metadata), site-local, multicast, documentation', () => {
    const cases: [string, RegExp][] = [
      ['::1', /loopback/],
      ['::', /unspecified/],
      ['fe80::1', /link-local/],
      ['fd00:ec2::254', /unique-local/],
      ['fc00::1', /unique-local/],
      ['fec0::1', /site-local/],
      ['ff02::1', /multicast/],
      ['2001:db8::1', /documentation/],
      ['64:ff9b:1::a00:1', /local-use NAT64/],
    ];
    for (const [address, why] of cases) assert.match(refused(address) ?? '', why, address);
    assert.equal(refused('2606:4700:4700::1111'), undefined, 'public IPv6 passes');
  });

  test('IPv4 carried in IPv6 is judged as IPv4: mapped (both spellings), compatible, NAT64, 6to4', () => {
    assert.match(refused('::ffff:127.0.0.1') ?? '', /loopback/);
    assert.match(refused('::ffff:7f00:1') ?? '', /loopback/, 'the hex spelling a URL normalises to');
    assert.match(refused('::ffff:a9fe:a9fe') ?? '', /metadata/);
    assert.match(refused('::10.0.0.1') ?? '', /private/);
    assert.match(refused('64:ff9b::a9fe:a9fe') ?? '', /metadata/);
    assert.match(refused('2002:c0a8:0101::1') ?? '', /private/, '6to4 of 192.168.1.1');
    assert.equal(refused('::ffff:8.8.8.8'), undefined);
    assert.equal(refused('2002:0808:0808::1'), undefined);
    assert.deepEqual(embeddedIpv4(ip('::ffff:1.2.3.4'))?.bytes, [1, 2, 3, 4]);
    assert.equal(embeddedIpv4(ip('2606:4700::1')), undefined);
  });

  test('ranges: bits compared; an IPv4 range holds the mapped IPv6 form; bad ranges do not parse', () => {
    assert.ok(inRange(ip('10.200.3.4'), parseCidr('10.0.0.0/8')!));
    assert.ok(!inRange(ip('11.0.0.0'), parseCidr('10.0.0.0/8')!));
    assert.ok(inRange(ip('172.20.0.1'), parseCidr('172.16.0.0/12')!));
    assert.ok(!inRange(ip('172.32.0.1'), parseCidr('172.16.0.0/12')!));
    assert.ok(inRange(ip('::ffff:10.0.0.1'), parseCidr('10.0.0.0/8')!));
    assert.ok(inRange(ip('fd12:3456::1'), parseCidr('fd12::/16')!));
    assert.ok(!inRange(ip('10.0.0.1'), parseCidr('fd12::/16')!), 'IPv4 is never in an IPv6 range');
    assert.equal(parseCidr('127.0.0.1')!.bits, 32);
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/8/1', '10.0.0.0/x', 'host/8']) assert.equal(parseCidr(bad), undefined, bad);
  });

  test('the allow list: hosts, addresses and ranges; what it lists passes, nothing else does', () => {
    const allow = parseAllowList(' 127.0.0.1 , 10.0.0.0/8,hooks.internal., fd00::/8,::1 ');
    assert.deepEqual(allow.hosts, ['hooks.internal']);
    assert.equal(allow.ranges.length, 4);
    assert.equal(addressRefusal(ip('127.0.0.1'), allow), undefined);
    assert.equal(addressRefusal(ip('::ffff:127.0.0.1'), allow), undefined, 'the mapped form of a listed address');
    assert.match(addressRefusal(ip('127.0.0.2'), allow) ?? '', /loopback/, 'only the address listed');
    assert.equal(addressRefusal(ip('10.9.9.9'), allow), undefined);
    assert.match(addressRefusal(ip('192.168.0.1'), allow) ?? '', /private/);
    assert.equal(addressRefusal(ip('fd00:ec2::254'), allow), undefined);
    assert.equal(addressRefusal(ip('::1'), allow), undefined);
    assert.equal(addressRefusal(ip('192.168.0.1'), allow, true), undefined, 'a listed host reaches any of its addresses');
    assert.deepEqual(parseAllowList(''), { hosts: [], ranges: [] });
    assert.throws(() => parseAllowList('10.0.0.0/40'), /neither a host name/);
    assert.throws(() => parseAllowList('http://x'), /neither a host name/);
    assert.equal(blockedReason(ip('8.8.4.4')), undefined);
  });
});

describe('the URL', () => {
  const problem = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof WebhookTargetError && err instanceof InvalidRequestError, String(err));
      return `${err.problem}: ${err.message}`;
    }
    return 'accepted';
  };

  test('http and https with a host, no credentials; the fragment is dropped', () => {
    assert.equal(checkWebhookUrl('https://hooks.example.com/faheem?x=1#part').href, 'https://hooks.example.com/faheem?x=1');
    assert.equal(checkWebhookUrl('http://example.com:8080').href, 'http://example.com:8080/');
    assert.match(
      problem(() => checkWebhookUrl('ftp://example.com/')),
      /^invalid: .*http or https, not ftp/,
    );
    assert.match(
      problem(() => checkWebhookUrl('file:///etc/passwd')),
      /^invalid: .*not file/,
    );
    assert.match(
      problem(() => checkWebhookUrl('https://user:pw@example.com/')),
      /^invalid: .*user name or password/,
    );
    assert.match(
      problem(() => checkWebhookUrl('https://user@example.com/')),
      /^invalid/,
    );
    assert.match(
      problem(() => checkWebhookUrl('/relative')),
      /^invalid: .*absolute URL/,
    );
    assert.match(
      problem(() => checkWebhookUrl('')),
      /^invalid/,
    );
    assert.match(
      problem(() => checkWebhookUrl(42)),
      /^invalid/,
    );
    assert.match(
      problem(() => checkWebhookUrl(`https://example.com/${'a'.repeat(2100)}`)),
      /^invalid: .*longer/,
    );
  });

  test('with an allow list, an address written in the URL is held to the rules, in every spelling', () => {
    assert.match(
      problem(() => checkWebhookUrl('http://127.0.0.1:9/', NO_EXTRA_ALLOWED)),
      /^forbidden: .*loopback/,
    );
    assert.match(
      problem(() => checkWebhookUrl('http://2130706433/', NO_EXTRA_ALLOWED)),
      /^forbidden: .*loopback/,
      'decimal',
    );
    assert.match(
      problem(() => checkWebhookUrl('http://0x7f.1/', NO_EXTRA_ALLOWED)),
      /^forbidden: .*loopback/,
      'hex',
    );
    assert.match(
      problem(() => checkWebhookUrl('http://[::ffff:169.254.169.254]/', NO_EXTRA_ALLOWED)),
      /^forbidden: .*metadata/,
    );
    assert.match(
      problem(() => checkWebhookUrl('http://[::1]/', NO_EXTRA_ALLOWED)),
      /^forbidden/,
    );
    assert.equal(
      problem(() => checkWebhookUrl('http://127.0.0.1:9/', parseAllowList('127.0.0.1'))),
      'accepted',
    );
    assert.equal(
      problem(() => checkWebhookUrl('http://127.0.0.1:9/')),
      'accepted',
      'without one: syntax only (the SDK)',
    );
  });

  test('every address a host resolves to is checked: one private among public ones refuses it', async () => {
    const dns = (answers: Record<string, string[]>) => async (host: string) => {
      const found = answers[host];
      if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    const lookup = dns({
      'public.test': ['93.184.216.34', '2606:2800:220:1::1'],
      'rebind.test': ['93.184.216.34', '10.0.0.7'],
      'meta.test': ['::ffff:169.254.169.254'],
      'inside.test': ['192.168.3.4'],
    });
    const ok = await resolveWebhookTarget('https://public.test/h', NO_EXTRA_ALLOWED, lookup);
    assert.deepEqual(
      ok.addresses.map((a) => a.family),
      [4, 6],
    );
    await assert.rejects(resolveWebhookTarget('https://rebind.test/h', NO_EXTRA_ALLOWED, lookup), (e: unknown) => {
      return e instanceof WebhookTargetError && e.problem === 'forbidden' && /10\.0\.0\.7 is a private address/.test(e.message);
    });
    await assert.rejects(resolveWebhookTarget('https://meta.test/h', NO_EXTRA_ALLOWED, lookup), /metadata/);
    await assert.rejects(resolveWebhookTarget('https://nowhere.test/h', NO_EXTRA_ALLOWED, lookup), (e: unknown) => {
      return e instanceof WebhookTargetError && e.problem === 'unresolved' && /ENOTFOUND/.test(e.message);
    });
    const inside = await resolveWebhookTarget('https://inside.test/h', parseAllowList('inside.test'), lookup);
    assert.equal(inside.addresses[0]?.address, '192.168.3.4', 'a listed host reaches its private address');
    const byRange = await resolveWebhookTarget('https://inside.test/h', parseAllowList('192.168.0.0/16'), lookup);
    assert.equal(byRange.addresses.length, 1);
  });

  test('localhost resolves (the system resolver) to loopback and is refused unless allowed', async () => {
    await assert.rejects(resolveWebhookTarget('http://localhost:9/'), /loopback/);
    const allowed = await resolveWebhookTarget('http://localhost:9/', parseAllowList('localhost'));
    assert.ok(allowed.addresses.length >= 1);
  });
});

describe('secrets', () => {
  test('a file per conversation, 0600 in a 0700 folder; replaced whole; unknown ids have none', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'faheem-webhook-secrets-'));
    try {
      const dir = path.join(root, 'api', 'webhooks');
      const secrets = new FileWebhookSecrets(dir);
      assert.equal(await secrets.get('conv-1'), undefined);
      await secrets.put('team:conv-1', 'first');
      await secrets.put('team:conv-1', 'second');
      assert.equal(await secrets.get('team:conv-1'), 'second');
      assert.equal((await stat(dir)).mode & 0o777, 0o700);
      const files = await readdir(dir);
      assert.deepEqual(files, ['team%3Aconv-1.secret']);
      assert.equal((await stat(path.join(dir, files[0]!))).mode & 0o777, 0o600);
      await assert.rejects(secrets.get('../etc/passwd'), InvalidRequestError, 'a conversation id, never a path');
      await secrets.delete('team:conv-1');
      assert.equal(await secrets.get('team:conv-1'), undefined);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  test('a secret is 1 to 1024 characters without line breaks', () => {
    assert.equal(checkWebhookSecret('x'), 'x');
    for (const bad of ['', 'a\nb', 'a'.repeat(1025), undefined, 7]) assert.throws(() => checkWebhookSecret(bad), InvalidRequestError);
  });

  test('prepareWebhook checks the URL and the secret before it stores the secret', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'faheem-webhook-secrets-'));
    try {
      const secrets = new FileWebhookSecrets(root);
      const allow = parseAllowList('127.0.0.1');
      assert.deepEqual(await prepareWebhook('c1', { url: 'http://127.0.0.1:9/h#x', secret: 'k' }, { secrets, allow }), {
        url: 'http://127.0.0.1:9/h',
      });
      assert.equal(await secrets.get('c1'), 'k');
      await assert.rejects(prepareWebhook('c2', { url: 'http://10.0.0.1/', secret: 'k' }, { secrets, allow }), /private/);
      await assert.rejects(prepareWebhook('c3', { url: 'http://127.0.0.1/', secret: '' }, { secrets, allow }), /secret/);
      assert.equal(await secrets.get('c2'), undefined, 'nothing kept for a refused webhook');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('the conversation', () => {
  const base = (webhook?: ConversationInput['options']['webhook'], over: Partial<ConversationInput> = {}): ConversationInput => ({
    options: {
      workspace: '/w',
      agent: { llm: { usageId: 'u', model: 'm' }, tools: ['terminal', 'finish'] },
      toolTaskQueue: 'host',
      maxIterations: 50,
      confirmationPolicy: 'never',
      idleTimeoutMs: 1000,
      ...(webhook ? { webhook } : {}),
    },
    firstMessage: 'hello',
    run: true,
    ...over,
  });

  /** A run whose port records deliveries; each delivery resolves when the test says. */
  function recorded(input: ConversationInput) {
    const asked: PatchId[] = [];
    const sent: { queue: string; request: WebhookDeliveryInput; answer: (delivered: boolean) => void }[] = [];
    const effects: EffectsPort = {
      searchAttributes: () => undefined,
      details: () => undefined,
      signalParent: () => undefined,
      deliverWebhook: (queue, request) =>
        new Promise((resolve) =>
          sent.push({
            queue,
            request,
            answer: (delivered) =>
              resolve(
                delivered
                  ? { delivered, attempts: 2, statusCode: 200 }
                  : { delivered, attempts: 1, statusCode: 400, reason: 'answered 400' },
              ),
          }),
        ),
    };
    const env: RunEnvironment = {
      workflowId: 'conv-w',
      runId: 'r',
      effects,
      patched: (id) => (asked.push(id), true),
      targetVersionChanged: () => false,
    };
    const run = ConversationRun.fromInput(input, env);
    run.apply(start, input, checkMessageText);
    return { run, sent, asked };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  test('each stop is delivered (finished, paused, waiting for approval, error, stuck); running and idle are not', async () => {
    const { run, sent, asked } = recorded(base({ url: 'https://hooks.example.com/h', taskQueue: 'q-webhooks' }));
    assert.equal(sent.length, 0, 'running is no stop');
    run.apply(pause, { reason: 'x' });
    assert.equal(sent.length, 1, 'sent at once');
    assert.deepEqual(asked, ['webhook-deliveries']);
    const first = sent[0]!;
    assert.equal(first.queue, 'q-webhooks');
    assert.equal(first.request.url, 'https://hooks.example.com/h');
    assert.equal(first.request.payload.id, 'conv-w');
    assert.equal(first.request.payload.status, 'paused');
    assert.deepEqual(
      { kind: first.request.payload.event.kind, index: first.request.payload.event.index },
      { kind: 'status', index: 2 },
      'the status event that stopped it',
    );
    assert.equal(first.request.deliveryId, 'conv-w/2');
    // The next stops wait for the first delivery (a receiver sees them in order).
    run.apply(requestRun);
    run.apply(setStatus, 'waiting_for_confirmation');
    run.apply(setStatus, 'running');
    run.apply(fail, 'boom', { event: true });
    run.apply(message, 'again'); // error stays error (a message makes only finished and stuck idle)
    run.apply(requestRun);
    run.apply(markStuck, 'stuck: loops');
    run.apply(message, 'once more'); // stuck -> idle: no stop
    run.apply(requestRun);
    run.apply(setStatus, 'finished');
    assert.equal(sent.length, 1);
    assert.ok(run.webhooks.pending);
    assert.equal(run.webhooks.unfinished.length, 5);
    for (let i = 0; i < 5; i++) {
      sent[i]!.answer(i !== 1);
      await settle();
    }
    assert.deepEqual(
      sent.map((s) => s.request.payload.status),
      ['paused', 'waiting_for_confirmation', 'error', 'stuck', 'finished'],
    );
    await run.webhooks.settled();
    assert.equal(run.webhooks.pending, false);
    const events = run.log.held().filter((e) => e.kind === 'webhook');
    assert.deepEqual(
      events.map((e) => (e.kind === 'webhook' ? [e.status, e.delivered, e.attempts, e.statusCode, e.reason] : [])),
      [
        ['paused', true, 2, 200, undefined],
        ['waiting_for_confirmation', false, 1, 400, 'answered 400'],
        ['error', true, 2, 200, undefined],
        ['stuck', true, 2, 200, undefined],
        ['finished', true, 2, 200, undefined],
      ],
    );
    const first_ = events[0]!;
    assert.ok(first_.kind === 'webhook' && first_.eventIndex === 2);
  });

  test('a receiver that hangs holds at most MAX_WEBHOOK_BACKLOG stops; later ones are recorded as not sent', async () => {
    const { run, sent } = recorded(base({ url: 'https://hooks.example.com/h', taskQueue: 'q-webhooks' }));
    for (let i = 0; i < MAX_WEBHOOK_BACKLOG + 3; i++) {
      run.apply(pause, { reason: `p${i}` });
      run.apply(requestRun);
    }
    await settle();
    assert.equal(sent.length, 1, 'the first is in flight, the receiver never answers');
    assert.equal(run.webhooks.unfinished.length, MAX_WEBHOOK_BACKLOG);
    const skipped = run.log.held().filter((e) => e.kind === 'webhook');
    assert.equal(skipped.length, 3);
    assert.ok(skipped.every((e) => e.kind === 'webhook' && !e.delivered && e.attempts === 0 && /not sent/.test(e.reason ?? '')));
  });

  test('without a webhook nothing is sent and the patch is never asked (old histories replay)', () => {
    const { run, sent, asked } = recorded(base());
    run.apply(pause, { reason: 'x' });
    run.apply(close);
    assert.equal(sent.length, 0);
    assert.deepEqual(asked, []);
    assert.equal(run.webhooks.pending, false);
  });

  test('a run continued as new with deliveries under way sends them again', () => {
    const request: WebhookDeliveryInput = {
      conversationId: 'conv-w',
      url: 'https://h.example/',
      payload: {
        id: 'conv-w',
        status: 'paused',
        event: { index: 4, timestamp: 't', kind: 'status', source: 'environment', status: 'paused' },
      },
      deliveryId: 'conv-w/4',
    };
    const { run, sent } = recorded(base({ url: 'https://h.example/', taskQueue: 'q-webhooks' }, { run: false, firstMessage: undefined }));
    run.deliver(request);
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0]!.request, request);
  });

  test('a failed activity is read by shape: the last attempt, its status code, or no webhook worker in time', () => {
    const appFailure = {
      name: 'ApplicationFailure',
      type: 'WebhookRejected',
      message: 'webhook h answered 400',
      details: [{ attempts: 1, statusCode: 400 }],
    };
    assert.deepEqual(failedDelivery({ name: 'ActivityFailure', cause: appFailure }, 'q'), {
      delivered: false,
      attempts: 1,
      statusCode: 400,
      reason: 'webhook h answered 400',
    });
    const retriedOut = {
      name: 'ActivityFailure',
      cause: { name: 'TimeoutFailure', cause: { ...appFailure, type: 'WebhookUnavailable', details: [{ attempts: 9, statusCode: 503 }] } },
    };
    assert.match(failedDelivery(retriedOut, 'q').reason ?? '', /gave up after 10 minutes of retries; last: webhook h answered 400/);
    assert.equal(failedDelivery(retriedOut, 'q').attempts, 9);
    const noWorker = failedDelivery({ name: 'ActivityFailure', cause: { name: 'TimeoutFailure' } }, 'q-webhooks');
    assert.match(noWorker.reason ?? '', /no webhook worker on task queue q-webhooks/);
    assert.equal(noWorker.attempts, 0);
  });

  test('the queue runs one delivery at a time, in order, and a failing send does not stop the next', async () => {
    const order: string[] = [];
    const q = new WebhookDeliveries();
    const req = (id: string) => ({ deliveryId: id }) as WebhookDeliveryInput;
    q.queue(req('a'), async () => {
      order.push('a');
      throw new Error('lost');
    });
    q.queue(req('b'), async () => void order.push('b'));
    assert.deepEqual(order, ['a'], 'the second waits');
    await q.settled();
    assert.deepEqual(order, ['a', 'b']);
    assert.deepEqual(q.unfinished, []);
  });

  test('conversationStart keeps the URL and the webhook queue, never a secret', () => {
    const agent = new Agent({ llm: new LLM({ usageId: 'a', model: 'm' }), tools: [] });
    const given = { url: 'https://hooks.example.com/x#frag', secret: 'never-in-history' } as unknown as { url: string };
    const { workflow } = conversationStart({ agent, workspace: '/tmp', webhook: given, taskQueue: 'main-q' });
    assert.deepEqual(workflow.args[0].options.webhook, { url: 'https://hooks.example.com/x', taskQueue: 'main-q-webhooks' });
    assert.ok(!JSON.stringify(workflow).includes('never-in-history'));
    assert.throws(() => conversationStart({ agent, workspace: '/tmp', webhook: { url: 'ftp://x/' } }), InvalidRequestError);
  });
});
