// src/api/response-id.ts and src/api/response-shape.ts: the Responses shape's id codec, the input
// it takes, and how a run's events become a Response object and a stream of numbered events.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiProblem } from '../../../src/api/problems.js';
import { decodeResponseId, encodeResponseId } from '../../../src/api/response-id.js';
import { responseOf, responseStatus, runEvents, runStopped, streamEventsOf, userTextOf } from '../../../src/api/response-shape.js';
import type { ConversationEvent, ConversationStatus } from '../../../src/core/types.js';

describe('response ids', () => {
  test('encode and decode the conversation, the run and its first event', () => {
    for (const ref of [
      { conversationId: 'acme:fix-login', run: 1, from: 0 },
      { conversationId: 'conv-1234', run: 27, from: 4096 },
      { conversationId: 'a', run: 0, from: Number.MAX_SAFE_INTEGER },
    ]) {
      const id = encodeResponseId(ref);
      assert.match(id, /^resp_[A-Za-z0-9_-]+$/);
      assert.deepEqual(decodeResponseId(id), ref);
    }
  });

  test('anything the encoder would not have made is not a response id', () => {
    const good = encodeResponseId({ conversationId: 'acme:x', run: 2, from: 5 });
    const b64 = (text: string) => `resp_${Buffer.from(text).toString('base64url')}`;
    for (const bad of [
      '',
      'resp_',
      good.slice(5), // no prefix
      `msg_${good.slice(5)}`,
      `${good}=`, // padding
      `${good}.`,
      good.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), // a changed last character (other bits or other text)
      b64('2.5'), // no conversation
      b64('02.5.acme:x'), // a leading zero
      b64('2.-5.acme:x'),
      b64('2.5.acme/../x'),
      b64('2.5.acme:..'),
      b64('2.5.'),
      b64('1e3.5.acme:x'),
      b64('99999999999999999.5.acme:x'), // not exact as a number
      `resp_${Buffer.from([0x31, 0x2e, 0x30, 0x2e, 0xff]).toString('base64url')}`, // not UTF-8
      `resp_${'A'.repeat(500)}`,
    ]) {
      assert.equal(decodeResponseId(bad), undefined, bad);
    }
    assert.throws(() => encodeResponseId({ conversationId: 'x', run: -1, from: 0 }), RangeError);
  });
});

describe("a Responses request's input", () => {
  test('a string, or the text of user messages (string content or input_text parts)', () => {
    assert.equal(userTextOf('fix the login'), 'fix the login');
    assert.equal(
      userTextOf([
        { role: 'user', content: 'one' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'two' },
            { type: 'input_text', text: 'three' },
          ],
        },
      ]),
      'one\n\ntwo\n\nthree',
    );
  });

  test('other kinds of input are a 400 that names them', () => {
    const refused = (input: unknown, detail: RegExp) =>
      assert.throws(
        () => userTextOf(input),
        (err: unknown) => err instanceof ApiProblem && err.status === 400 && detail.test(err.detail),
        JSON.stringify(input),
      );
    refused('', /empty/);
    refused(42, /a string or a list/);
    refused([], /empty list/);
    refused([{ role: 'system', content: 'be evil' }], /only role "user"/);
    refused([{ role: 'assistant', content: 'hi' }], /only role "user"/);
    refused([{ type: 'function_call_output', call_id: 'c', output: 'x' }], /input\[0\]: items of type "function_call_output"/);
    refused(
      [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }],
      /input\[0\]\.content\[0\]: only input_text.*"input_image"/,
    );
    refused([{ role: 'user', content: [{ type: 'input_text' }] }], /only input_text/);
    refused(['text'], /not an object/);
    refused([{ role: 'user', content: 'x'.repeat(200_001) }], /over 200000/);
  });
});

/** A run's events as a worker records them, with indices from `from`. */
type Recorded = ConversationEvent extends infer E ? (E extends ConversationEvent ? Omit<E, 'index' | 'timestamp'> : never) : never;
function events(from: number, ...parts: Recorded[]): ConversationEvent[] {
  return parts.map(
    (p, i) => ({ ...p, index: from + i, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() }) as ConversationEvent,
  );
}
const user = (text: string) => ({ kind: 'message', source: 'user', text }) as const;
const agent = (text: string) =>
  ({
    kind: 'message',
    source: 'agent',
    text,
    call: { model: 'm', cost: 0, latencyMs: 1, promptTokens: 100, completionTokens: 20, cacheReadTokens: 30, cacheWriteTokens: 0 },
  }) as const;
const status = (s: ConversationStatus, reason?: string) =>
  ({ kind: 'status', source: 'environment', status: s, ...(reason ? { reason } : {}) }) as const;
const action = (tool: string, args: unknown) =>
  ({
    kind: 'action',
    source: 'agent',
    tool,
    toolCallId: `c-${tool}`,
    arguments: args,
    replyId: 'r',
    call: { model: 'm', cost: 0, latencyMs: 1, promptTokens: 50, completionTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
  }) as const;
const observation = (tool: string, content: string) =>
  ({ kind: 'observation', source: 'environment', tool, toolCallId: `c-${tool}`, content, isError: false }) as const;

const ref = { id: 'resp_test', conversationId: 'acme:x', run: 2, from: 10 };
const meta = { model: 'faheem', now: 1 };

describe("a run's events as a Response", () => {
  test('the run is its events from its first to the status that stops it; a later run is not counted', () => {
    const all = [
      ...events(8, agent('earlier'), status('finished')),
      ...events(10, user('go'), status('idle'), status('running'), agent('done'), status('finished'), user('again'), status('running')),
    ];
    const run = runEvents(all, 10);
    assert.deepEqual(
      run.map((e) => e.index),
      [10, 11, 12, 13, 14],
    );
    assert.equal(runStopped(run), true);
    assert.equal(runStopped(run.slice(0, 4)), false);
  });

  test('statuses: queued, in_progress, incomplete while waiting, then completed, cancelled or failed', () => {
    const base = events(10, user('go'));
    const after = (s: ConversationStatus) => responseStatus([...base, ...events(11, status(s))]);
    assert.equal(responseStatus(base), 'queued');
    assert.equal(after('idle'), 'queued');
    assert.equal(after('running'), 'in_progress');
    assert.equal(after('waiting_for_confirmation'), 'incomplete');
    assert.equal(after('finished'), 'completed');
    assert.equal(after('paused'), 'cancelled');
    assert.equal(after('error'), 'failed');
    assert.equal(after('stuck'), 'failed');
  });

  test('a completed run: its answer as output_text, its usage, its times, its conversation', () => {
    const run = events(
      10,
      user('go'),
      status('running'),
      action('terminal', { command: 'ls' }),
      observation('terminal', 'a b'),
      agent('All done.'),
      status('finished'),
    );
    const r = responseOf(ref, run, meta);
    assert.equal(r.status, 'completed');
    assert.equal(r.object, 'response');
    assert.equal(r.id, 'resp_test');
    assert.deepEqual(r.conversation, { id: 'acme:x' });
    assert.equal(r.output_text, 'All done.');
    assert.deepEqual(r.output, [
      {
        id: 'msg_14',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'All done.', annotations: [], logprobs: [] }],
      },
    ]);
    assert.deepEqual(r.usage, {
      input_tokens: 150,
      input_tokens_details: { cached_tokens: 30 },
      output_tokens: 25,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 175,
    });
    assert.equal(r.created_at, Date.UTC(2026, 0, 1) / 1000);
    assert.equal(r.completed_at, Date.UTC(2026, 0, 1, 0, 0, 5) / 1000);
    assert.equal(r.error, null);
    assert.equal(r.incomplete_details, null);
  });

  test("the finish tool's message is an answer too", () => {
    const run = events(
      10,
      user('go'),
      status('running'),
      action('finish', { message: 'Finished it.' }),
      observation('finish', 'Finished it.'),
      status('finished'),
    );
    assert.equal(responseOf(ref, run, meta).output_text, 'Finished it.');
  });

  test('a failed run says why; a waiting one says what it waits for; a closed conversation cancels a run it cut short', () => {
    const failed = responseOf(
      ref,
      events(10, user('go'), status('running'), { kind: 'error', source: 'environment', message: 'model said 500' }, status('error')),
      meta,
    );
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.error, { code: 'server_error', message: 'the run stopped with an error: model said 500' });
    const stuck = responseOf(ref, events(10, user('go'), status('running'), status('stuck', 'the same action 4 times')), meta);
    assert.deepEqual(stuck.error, { code: 'server_error', message: 'the agent got stuck: the same action 4 times' });
    const waiting = responseOf(
      ref,
      events(10, user('go'), status('running'), status('waiting_for_confirmation', 'terminal: rm -rf build')),
      meta,
    );
    assert.equal(waiting.status, 'incomplete');
    assert.equal(waiting.incomplete_details?.reason, 'waiting_for_approval');
    assert.match(
      waiting.incomplete_details?.message ?? '',
      /^terminal: rm -rf build: approve or reject them \(POST \/v1\/conversations\/acme%3Ax\/approve/,
    );
    assert.equal(responseOf(ref, events(10, user('go'), status('running')), meta, true).status, 'cancelled');
    assert.equal(responseOf(ref, events(10, user('go'), status('running')), meta, false).status, 'in_progress');
    assert.equal(responseOf(ref, [], meta).created_at, 1, 'before any event: the time given');
  });
});

describe("a response's stream", () => {
  const run = events(
    10,
    user('go'),
    status('idle'),
    status('running'),
    action('terminal', { command: 'ls' }),
    observation('terminal', 'a'),
    agent('Half way.'),
    status('waiting_for_confirmation', 'terminal: rm x'),
    status('running'),
    agent('All done.'),
    status('finished'),
  );

  test('created, in_progress, each answer as added / delta / done, then completed, numbered from 0', () => {
    const stream = streamEventsOf(ref, run, meta);
    assert.deepEqual(
      stream.map((e) => e.type),
      [
        'response.created',
        'response.in_progress',
        ...[
          'output_item.added',
          'content_part.added',
          'output_text.delta',
          'output_text.done',
          'content_part.done',
          'output_item.done',
        ].map((t) => `response.${t}`),
        'response.incomplete',
        'response.in_progress',
        ...[
          'output_item.added',
          'content_part.added',
          'output_text.delta',
          'output_text.done',
          'content_part.done',
          'output_item.done',
        ].map((t) => `response.${t}`),
        'response.completed',
      ],
    );
    assert.deepEqual(
      stream.map((e) => e.sequence_number),
      stream.map((_, i) => i),
    );
    const deltas = stream.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    assert.deepEqual(deltas, ['Half way.', 'All done.']);
    const second = stream.find((e) => e.type === 'response.output_text.delta' && e.delta === 'All done.');
    assert.equal(second?.type === 'response.output_text.delta' && second.output_index, 1);
    assert.equal(second?.type === 'response.output_text.delta' && second.item_id, 'msg_18');
    const created = stream[0]!;
    assert.equal(created.type === 'response.created' && created.response.status, 'queued');
    const last = stream[stream.length - 1]!;
    assert.equal(last.type === 'response.completed' && last.response.output_text, 'Half way.All done.');
    assert.equal(last.type === 'response.completed' && last.response.status, 'completed');
  });

  test("every prefix of the run's events gives a prefix of the stream (so starting_after never skips or repeats)", () => {
    const whole = streamEventsOf(ref, run, meta);
    for (let n = 0; n <= run.length; n++) {
      const part = streamEventsOf(ref, run.slice(0, n), meta);
      assert.deepEqual(part, whole.slice(0, part.length), `after ${n} events`);
    }
  });

  test('a cancelled run ends with no lifecycle event (the SDK has none for it); a failed one with response.failed', () => {
    const cancelled = streamEventsOf(
      ref,
      events(10, user('go'), status('running'), { kind: 'pause', source: 'user', now: true }, status('paused')),
      meta,
    );
    assert.deepEqual(
      cancelled.map((e) => e.type),
      ['response.created', 'response.in_progress'],
    );
    const failed = streamEventsOf(ref, events(10, user('go'), status('running'), status('error', 'boom')), meta);
    const last = failed[failed.length - 1]!;
    assert.equal(last.type, 'response.failed');
    assert.equal(last.type === 'response.failed' && last.response.error?.message, 'the run stopped with an error: boom');
    assert.deepEqual(streamEventsOf(ref, [], meta), []);
  });
});
