// The object store against a real S3 server (SeaweedFS, test/support/seaweedfs.ts): the store's own
// operations, and a conversation whose large payloads go there, encrypted, through Temporal's S3
// driver, readable by a client with the same settings and by nothing else.
import proto from '@temporalio/proto';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Readable } from 'node:stream';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { ENCRYPTED_ENCODING } from '../../src/security/codec.js';
import { objectStore, ObjectStoreError, type ObjectStore } from '../../src/storage/object-store.js';
import { samePromptSameReply } from '../../src/testing/scripted-model.js';
import { historyText, startHarness, waitFor, type Harness } from '../support/harness.js';
import { startSeaweedS3, type SeaweedS3 } from '../support/seaweedfs.js';
import { storeSettings } from '../../src/settings/store.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;

let s3: SeaweedS3;
before(async () => {
  s3 = await startSeaweedS3();
});
after(async () => {
  await s3?.stop();
});

function storeAt(prefix: string, extra: Record<string, string> = {}): ObjectStore {
  return objectStore(storeSettings({ ...s3.env, FAHEEM_OBJECT_STORE: `s3://${s3.bucket}/${prefix}`, ...extra }))!;
}

describe('an S3 object store (SeaweedFS)', () => {
  test('put, get, head and list, each under its own prefix', async () => {
    const a = storeAt('team-a');
    const b = storeAt('team-b');
    await a.put('conversations/c1/one', new TextEncoder().encode('one'));
    await a.put('conversations/c1/two', Readable.from([Buffer.from('t'), Buffer.from('wo')]));
    await b.put('conversations/c1/one', new TextEncoder().encode('other'));
    assert.equal(Buffer.from(await a.getBytes('conversations/c1/one')).toString(), 'one');
    assert.equal(Buffer.from(await b.getBytes('conversations/c1/one')).toString(), 'other');
    assert.deepEqual(await a.list('conversations/'), ['conversations/c1/one', 'conversations/c1/two']);
    assert.deepEqual(await a.head('conversations/c1/two'), { key: 'conversations/c1/two', size: 3 });
    assert.equal(await a.head('conversations/c1/none'), undefined);
    await assert.rejects(
      a.getBytes('conversations/c1/none'),
      (err: unknown) => err instanceof ObjectStoreError && err.reason === 'not_found',
    );
  });

  test('a large stream goes up in parts and comes back whole', async () => {
    const store = storeAt('big');
    const parts = Array.from({ length: 12 }, () => randomBytes(1024 * 1024));
    await store.put('stream.bin', Readable.from(parts));
    const back = Buffer.from(await store.getBytes('stream.bin'));
    assert.equal(back.length, 12 * 1024 * 1024);
    assert.ok(back.equals(Buffer.concat(parts)));
  });

  test('past the cap the store refuses with a clear error and keeps nothing', async () => {
    const store = storeAt('capped', { FAHEEM_OBJECT_MAX_BYTES: String(1024 * 1024) });
    await assert.rejects(
      store.put('x.bin', Readable.from([randomBytes(700 * 1024), randomBytes(700 * 1024)])),
      (err: unknown) => err instanceof ObjectStoreError && err.reason === 'too_large' && /FAHEEM_OBJECT_MAX_BYTES/.test(err.message),
    );
    assert.equal(await store.head('x.bin'), undefined);
  });

  test('wrong credentials: a clear error naming the store', async () => {
    const store = storeAt('denied', { AWS_SECRET_ACCESS_KEY: 'not-the-secret' });
    await assert.rejects(
      store.put('x', new Uint8Array([1])),
      (err: unknown) => err instanceof ObjectStoreError && err.reason === 'denied' && err.message.includes(`s3://${s3.bucket}/denied`),
    );
  });
});

describe('large payloads in the S3 store', () => {
  let h: Harness;
  const key = randomBytes(32).toString('base64');
  before(async () => {
    h = await startHarness({
      name: 'object-store',
      script: () => ({ content: 'done' }),
      env: { ...s3.env, FAHEEM_OBJECT_STORE: `s3://${s3.bucket}/payloads-test`, FAHEEM_ENCRYPTION_KEY: key },
    });
    await h.startWorker();
  });
  after(async () => {
    await h?.close();
  });

  test('a carried state over the threshold is stored in S3, encrypted, and read back', async () => {
    // Six messages of 95,000 characters: each under the 512 KB threshold, the carried state over it.
    const marker = (i: number) => `papaya-${i}-`.repeat(95_000 / 10).slice(0, 95_000);
    let calls = 0;
    h.model.setScript(
      samePromptSameReply(() =>
        calls++ < 2 ? { toolCalls: [{ name: 'think', arguments: { thought: 'thinking' } }] } : { content: 'done' },
      ),
    );
    const conversation = await Conversation.create(h.client, {
      agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
      workspace: await h.workspace(),
      firstMessage: marker(0),
      continueAsNewEverySteps: 1,
    });
    for (let i = 1; i < 6; i++) await conversation.sendMessage(marker(i));
    const final = await conversation.run().then(() => conversation.state());
    assert.equal(final.status, 'finished', final.lastError ?? '');
    const store = storeAt('payloads-test');
    const keys = await waitFor('payloads in the store', async () => {
      const found = await store.list('payloads/');
      return found.length > 0 ? found : undefined;
    });
    for (const k of keys) {
      const bytes = Buffer.from(await store.getBytes(k));
      assert.ok(!bytes.toString('latin1').includes('papaya-'), `${k} holds plain text`);
      assert.equal(Buffer.from(ProtoPayload.decode(bytes).metadata!.encoding!).toString(), ENCRYPTED_ENCODING);
    }
    assert.ok(!existsSync(path.join(h.home, 'payloads')), 'nothing went to the local payload folder');
    const events = await conversation.events();
    for (let i = 0; i < 6; i++)
      assert.ok(
        events.some((e) => e.kind === 'message' && e.text === marker(i)),
        `message ${i}`,
      );
    assert.ok(!historyText(await h.client.workflow.getHandle(conversation.id).fetchHistory()).includes('papaya-'));
  });
});
