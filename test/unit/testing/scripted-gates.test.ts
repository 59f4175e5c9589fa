// The scripted models' gates: a reply that names a gate is held (a streamed one with its stream
// open) until the test releases it; a client that goes away meanwhile frees it; the gate can be
// opened over HTTP too. Real servers, real HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../../src/testing/scripted-anthropic.js';
import { countdownScript, samePromptSameReply, startScriptedModel, type ScriptedModel } from '../../../src/testing/scripted-model.js';

let model: ScriptedModel;
let anthropic: ScriptedAnthropic;
before(async () => {
  model = await startScriptedModel(() => ({ gate: 'g', content: 'held reply' }));
  anthropic = await startScriptedAnthropic(() => ({ gate: 'a', content: 'held reply' }));
});
after(async () => {
  await model?.close();
  await anthropic?.close();
});

const chat = (stream: boolean, signal?: AbortSignal) =>
  fetch(`${model.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream }),
    ...(signal ? { signal } : {}),
  });

test('a streamed reply opens its stream, holds at the gate, and goes on once released', async () => {
  model.hold('g');
  const res = await chat(true);
  assert.equal(res.status, 200, 'the stream is open while held');
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  assert.match(first, /"role":"assistant"/);
  const held = await model.reached('g');
  assert.equal(held.heldAt, 'g');
  assert.equal(model.held('g').length, 1);
  let rest = '';
  const reading = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      rest += new TextDecoder().decode(value);
    }
  })();
  assert.ok(!rest.includes('held reply'.slice(0, 3)), 'nothing of the content before the release');
  model.release('g');
  await reading;
  assert.match(rest, /\[DONE\]/);
  assert.equal(model.held('g').length, 0);
});

test('a released gate stays open until held again; a plain reply is held before it is written', async () => {
  model.release('g');
  const open = await chat(false);
  assert.equal(((await open.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, 'held reply');

  model.hold('g');
  const pending = chat(false);
  await model.reached('g');
  model.release('g');
  assert.equal((await pending).status, 200);
});

test('a client that goes away while held frees the gate, and the request is marked aborted', async () => {
  model.hold('g');
  const ac = new AbortController();
  const pending = chat(true, ac.signal);
  const held = await model.reached('g');
  ac.abort();
  await assert.rejects(pending.then((r) => r.text()));
  for (const until = Date.now() + 30_000; model.held('g').length > 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 10));
  assert.equal(model.held('g').length, 0);
  assert.equal(held.aborted, true);
});

test('POST /gates/<name>/release opens a gate from another process', async () => {
  model.hold('g');
  const pending = chat(false);
  await model.reached('g');
  const origin = model.baseUrl.replace(/\/v1$/, '');
  const r = await fetch(`${origin}/gates/g/release`, { method: 'POST' });
  assert.deepEqual(await r.json(), { gate: 'g', open: true });
  assert.equal((await pending).status, 200);
});

test('reached() rejects after its deadline when nothing comes', async () => {
  await assert.rejects(model.reached('nobody', 50), /no request reached the gate "nobody"/);
});

test('the Anthropic server holds at its gates the same way', async () => {
  const pending = fetch(`${anthropic.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true }),
  });
  const res = await pending;
  assert.equal(res.status, 200);
  await anthropic.reached('a');
  anthropic.release('a');
  assert.match(await res.text(), /message_stop/);
});

test("countdownScript's gates hold the reply after the given step", async () => {
  const script = countdownScript({ delayMs: 0, gates: { 1: 'after-one' } });
  const base = { index: 0, authorization: undefined, startedAt: 0, aborted: false };
  const user = { role: 'user', content: 'Create countdown.txt' };
  const zero = await script({ ...base, body: { model: 'm', messages: [user] } });
  const one = await script({ ...base, body: { model: 'm', messages: [user, { role: 'tool', content: 'ok' }] } });
  assert.equal(zero.gate, undefined);
  assert.equal(one.gate, 'after-one');
});

test('samePromptSameReply: a prompt asked again gets the same reply; errors are not kept', async () => {
  let turn = 0;
  const script = samePromptSameReply(() => (turn++ === 0 ? { status: 500, error: 'busy' } : { content: `turn ${turn}` }));
  const base = { index: 0, authorization: undefined, startedAt: 0, aborted: false };
  const ask = (content: string) => script({ ...base, body: { model: 'm', messages: [{ role: 'user', content }] } });
  assert.equal((await ask('a')).status, 500);
  assert.equal((await ask('a')).content, 'turn 2', 'the error was not kept: the same prompt asked again');
  assert.equal((await ask('a')).content, 'turn 2', 'a retried prompt: the same reply, not the next turn');
  assert.equal((await ask('b')).content, 'turn 3');
});
