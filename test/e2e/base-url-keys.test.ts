// A conversation's own `llm.baseUrl` gets the worker's key only when the worker allows that endpoint
// (LLM_BASE_URL, the provider's own, FAHEEM_ALLOWED_BASE_URLS). Real dev server and worker; the
// endpoints are scripted model servers that record the Authorization header they were sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model.js';
import { FAKE_KEY, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let foreign: ScriptedModel;
let allowed: ScriptedModel;
let keyed: ScriptedModel;
before(async () => {
  [h, foreign, allowed, keyed] = await Promise.all([
    startHarness({ name: 'base-url-keys', script: () => ({ content: 'done' }), record: false }),
    startScriptedModel(() => ({ content: 'done' })),
    startScriptedModel(() => ({ content: 'done' })),
    // An endpoint that needs a key, as a hosted one does.
    startScriptedModel((req) =>
      req.authorization === `Bearer ${FAKE_KEY}` ? { content: 'done' } : { status: 401, error: 'Incorrect API key provided' },
    ),
  ]);
  await h.startWorker({ FAHEEM_ALLOWED_BASE_URLS: `${allowed.baseUrl}/` });
});
after(async () => {
  await Promise.all([foreign?.close(), allowed?.close(), keyed?.close()]);
  await h?.close();
});

async function run(baseUrl: string) {
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini', baseUrl }), tools: ['terminal'] }),
    workspace: await h.workspace(),
  });
  await conversation.sendMessage('Say done.');
  return conversation.run().then(() => conversation.state());
}

test("a conversation's own base URL gets no worker key; an allowed one and the worker's own do", async () => {
  const [mine, theirs, listed] = await Promise.all([run(h.model.baseUrl), run(foreign.baseUrl), run(allowed.baseUrl)]);
  for (const final of [mine, theirs, listed]) assert.equal(final.status, 'finished', final.lastError ?? '');

  assert.ok(foreign.requests.length > 0);
  for (const r of foreign.requests) {
    assert.ok(!(r.authorization ?? '').includes(FAKE_KEY), `the foreign endpoint was sent the key: ${r.authorization}`);
  }
  assert.ok(allowed.requests.length > 0);
  for (const r of allowed.requests) assert.equal(r.authorization, `Bearer ${FAKE_KEY}`, 'FAHEEM_ALLOWED_BASE_URLS');
  assert.ok(h.model.requests.length > 0);
  for (const r of h.model.requests) assert.equal(r.authorization, `Bearer ${FAKE_KEY}`, 'LLM_BASE_URL');
});

test('an endpoint that needs the key the worker held back: the error says so and how to allow it', async () => {
  const final = await run(keyed.baseUrl);
  assert.equal(final.status, 'error');
  assert.match(final.lastError ?? '', /HTTP 401/);
  assert.match(final.lastError ?? '', /did not send its API key/);
  assert.ok((final.lastError ?? '').includes(`FAHEEM_ALLOWED_BASE_URLS=${new URL(keyed.baseUrl).origin}`), final.lastError ?? '');
  assert.ok(!(final.lastError ?? '').includes(FAKE_KEY));
});
