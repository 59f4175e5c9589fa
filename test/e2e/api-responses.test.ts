// The team API's OpenAI Responses shape, driven by the official `openai` SDK unchanged: a real dev
// server, a worker with a scripted model, `faheem api` as a process and keys from
// `faheem api-key create`. (test/e2e/responses.test.ts is about something else: the model client
// that calls OpenAI's Responses API.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { lastUserMessage, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';
import { startApiProcess, type ApiProcess } from '../support/api-process.js';

// Each message says which answer it wants; `hold:` answers only once the test opens the gate.
function script(request: RecordedRequest): ScriptedReply {
  const ask = lastUserMessage(request);
  // `tool:` runs a command first (an action that may wait for approval), then answers.
  const tool = /^tool:answer (.+)$/.exec(ask);
  if (tool) {
    const ran = request.body.messages[request.body.messages.length - 1]?.role === 'tool';
    return ran ? { content: `Answer ${tool[1]}.` } : { toolCalls: [{ name: 'terminal', arguments: { command: `echo ${tool[1]}` } }] };
  }
  const m = /^(?:(hold):)?answer (.+)$/.exec(ask);
  if (!m) return { content: `I do not know what "${ask}" asks.` };
  return { content: `Answer ${m[2]}.`, ...(m[1] ? { gate: `gate-${m[2]}` } : {}) };
}

let h: Harness;
let api: ApiProcess | undefined;
let acme: OpenAI;
let acmeKey: string;
let globex: OpenAI;

before(async () => {
  h = await startHarness({ name: 'api-responses', script });
  await h.startWorker();
  acmeKey = (await h.cli(['api-key', 'create', '--tenant', 'acme', '--scope', 'write'])).stdout.trim();
  const globexKey = (await h.cli(['api-key', 'create', '--tenant', 'globex', '--scope', 'write'])).stdout.trim();
  api = await startApiProcess(['--port', '0'], h.env);
  acme = new OpenAI({ apiKey: acmeKey, baseURL: `${api.url}/v1`, maxRetries: 0 });
  globex = new OpenAI({ apiKey: globexKey, baseURL: `${api.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await api?.stop();
  await h?.close();
});

/** Reads a response's stream from `startingAfter` until the server ends it (or `stopAt` says stop). */
async function streamOf(client: OpenAI, id: string, startingAfter?: number, stopAt?: (e: ResponseStreamEvent) => boolean) {
  const seen: ResponseStreamEvent[] = [];
  const stream = await client.responses.retrieve(id, {
    stream: true,
    ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}),
  });
  for await (const e of stream) {
    seen.push(e);
    if (stopAt?.(e)) break;
  }
  return seen;
}

const sequence = (events: ResponseStreamEvent[]) => events.map((e) => e.sequence_number);

let first: OpenAI.Responses.Response;
let conversationId: string;

test('create in the background, stream with starting_after picking up with no gap or repeat, retrieve completed with output_text', async () => {
  first = await acme.responses.create({ model: 'faheem', input: 'hold:answer one', background: true });
  assert.match(first.id, /^resp_/);
  assert.equal(first.object, 'response');
  assert.equal(first.status, 'queued');
  conversationId = first.conversation?.id ?? '';
  const owner = (await (await fetchApi(`/v1/conversations/${encodeURIComponent(conversationId)}`)).json()) as { tenant: string };
  assert.equal(owner.tenant, 'acme', "a response is a run of one of your tenant's conversations");

  // The answer is held at its gate: the stream has shown the run start and nothing after it.
  await h.model.reached('gate-one');
  const before = await streamOf(acme, first.id, undefined, (e) => e.type === 'response.in_progress');
  assert.deepEqual(
    before.map((e) => e.type),
    ['response.created', 'response.in_progress'],
  );
  assert.deepEqual(sequence(before), [0, 1]);
  assert.equal((await acme.responses.retrieve(first.id)).status, 'in_progress');

  h.model.release('gate-one');
  const rest = await streamOf(acme, first.id, 1);
  assert.equal(rest[0]?.sequence_number, 2, 'starting_after=1 picks up at 2');
  assert.equal(rest[rest.length - 1]?.type, 'response.completed', 'the stream ends when the run completes');
  const whole = await streamOf(acme, first.id);
  assert.deepEqual([...before, ...rest], whole, 'the two parts make the whole stream, nothing missed or said twice');
  assert.deepEqual(
    sequence(whole),
    whole.map((_, i) => i),
  );
  const deltas = whole.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
  assert.equal(deltas.join(''), 'Answer one.');

  const done = await acme.responses.retrieve(first.id);
  assert.equal(done.status, 'completed');
  assert.equal(done.output_text, 'Answer one.', 'the SDK derives output_text from output[].content[]');
  assert.equal(done.conversation?.id, conversationId);
  assert.equal(done.model, 'faheem');
  assert.equal(done.error, null);
  assert.ok((done.usage?.input_tokens ?? 0) > 0);
});

let second: OpenAI.Responses.Response;

test('previous_response_id continues the same conversation: a new message, a new run, its own output', async () => {
  second = await acme.responses.create({
    model: 'faheem',
    input: [{ role: 'user', content: 'answer two' }],
    previous_response_id: first.id,
    background: true,
  });
  assert.notEqual(second.id, first.id);
  assert.equal(second.conversation?.id, conversationId, 'the same conversation');
  const stream = await streamOf(acme, second.id);
  assert.equal(stream[stream.length - 1]?.type, 'response.completed');
  const done = await acme.responses.retrieve(second.id);
  assert.equal(done.status, 'completed');
  assert.equal(done.output_text, 'Answer two.');
  assert.equal((await acme.responses.retrieve(first.id)).output_text, 'Answer one.', 'the first response is still its own run');

  // One conversation, both messages in it.
  const events = (await (await fetchApi(`/v1/conversations/${encodeURIComponent(conversationId)}/events`)).json()) as {
    data: { kind: string; source: string; text?: string }[];
  };
  assert.deepEqual(
    events.data.filter((e) => e.kind === 'message' && e.source === 'user').map((e) => e.text),
    ['hold:answer one', 'answer two'],
  );
  // Continuing from a response that is no longer the latest is refused, and says why.
  await assert.rejects(
    acme.responses.create({ model: 'faheem', input: 'answer again', previous_response_id: first.id, background: true }),
    (err: unknown) => err instanceof OpenAI.APIError && err.status === 409,
  );
});

test('cancel pauses the conversation; the response is cancelled', async () => {
  const third = await acme.responses.create({
    model: 'faheem',
    input: 'hold:answer three',
    previous_response_id: second.id,
    background: true,
  });
  assert.equal(third.conversation?.id, conversationId);
  const held = await h.model.reached('gate-three');
  const cancelled = await acme.responses.cancel(third.id);
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.id, third.id);
  assert.equal((await acme.responses.retrieve(third.id)).status, 'cancelled');
  const status = (await (await fetchApi(`/v1/conversations/${encodeURIComponent(conversationId)}`)).json()) as { status: string };
  assert.equal(status.status, 'paused');
  // The model call under way was cancelled by the pause.
  await waitFor('the held model call cancelled', () => held.aborted);
  h.model.release('gate-three');
  assert.equal((await acme.responses.retrieve(third.id)).output_text, '');
  // A stopped response is answered as it is; the earlier one stays completed.
  assert.equal((await acme.responses.cancel(second.id)).status, 'completed');
});

test('a response waiting for approval is incomplete, its stream ends there, and it completes once approved', async () => {
  // `confirm` is faheem's own field (the SDK passes it on as it is).
  const waiting = await acme.responses.create({ model: 'faheem', input: 'tool:answer five', background: true, confirm: 'always' } as never);
  const untilIncomplete = await streamOf(acme, waiting.id);
  assert.equal(untilIncomplete[untilIncomplete.length - 1]?.type, 'response.incomplete', 'the stream ends while it waits');
  const now = await acme.responses.retrieve(waiting.id);
  assert.equal(now.status, 'incomplete');
  assert.equal((now.incomplete_details as { reason?: string } | null)?.reason, 'waiting_for_approval');
  const id = now.conversation?.id ?? '';
  const approved = await fetchApi(`/v1/conversations/${encodeURIComponent(id)}/approve`, { method: 'POST', body: '{}' });
  assert.equal(approved.status, 200);
  const rest = await streamOf(acme, waiting.id, untilIncomplete[untilIncomplete.length - 1]!.sequence_number);
  assert.deepEqual([rest[0]?.type, rest[rest.length - 1]?.type], ['response.in_progress', 'response.completed']);
  const done = await acme.responses.retrieve(waiting.id);
  assert.equal(done.status, 'completed');
  assert.equal(done.output_text, 'Answer five.');
});

test("another tenant's key gets 404 on every responses route; a malformed id is 404 too", async () => {
  const notFound = (err: unknown) => err instanceof OpenAI.APIError && err.status === 404;
  await assert.rejects(globex.responses.retrieve(first.id), notFound);
  await assert.rejects(streamOf(globex, first.id, 0), notFound);
  await assert.rejects(globex.responses.cancel(second.id), notFound);
  await assert.rejects(
    globex.responses.create({ model: 'faheem', input: 'answer four', previous_response_id: second.id, background: true }),
    notFound,
  );
  for (const bad of ['resp_nope', 'resp_', first.id.slice(0, -2), `${first.id}x`])
    await assert.rejects(acme.responses.retrieve(bad), notFound, bad);
  // The other tenant's tries changed nothing.
  assert.equal((await acme.responses.retrieve(first.id)).status, 'completed');
});

test('bad requests are 400 problems that say what to do; the routes are in /openapi.json', async () => {
  const bad = async (body: Record<string, unknown>, detail: RegExp) => {
    const r = await fetchApi('/v1/responses', { method: 'POST', body: JSON.stringify(body) });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.headers.get('content-type'), 'application/problem+json');
    const problem = (await r.json()) as { detail: string };
    assert.match(problem.detail, detail);
  };
  await bad({ model: 'faheem', input: 'x' }, /background: true/);
  await bad({ model: 'faheem', input: 'x', background: false }, /background: true/);
  await bad(
    { model: 'faheem', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://a/b.png' }] }], background: true },
    /only input_text/,
  );
  await bad({ model: 'gpt-9', input: 'x', background: true }, /not one the operator allows/);
  await bad({ model: 'faheem', input: 'x', background: true, temperature: 2 }, /temperature/);
  const doc = (await (await fetch(`${api!.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  for (const p of ['/v1/responses', '/v1/responses/{id}', '/v1/responses/{id}/cancel']) assert.ok(doc.paths[p], p);
});

/** A request to the API with acme's key. */
function fetchApi(p: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${api!.url}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${acmeKey}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
  });
}
