// Fallback chains end to end (real dev server and worker, scripted model servers for all three wire
// APIs): a call whose model answers 529, 503, 429 or nothing moves to the next model of the chain,
// the conversation finishes, a `fallback` event and `metrics.calls[].model` say which model answered;
// a 400 does not move on. Each provider's model gets only its own key. The worker's LLM_BASE_URL is a
// small router in front of the chat-completions and Responses servers, so that both can answer as a
// fallback of the same worker.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../src/testing/scripted-anthropic.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startScriptedResponses, type ScriptedResponses } from '../../src/testing/scripted-responses.js';
import type { ConversationEvent, FallbackEvent } from '../../src/core/types.js';
import { FAKE_KEY, freePort, startHarness, type Harness } from '../support/harness.js';

const ANT_KEY = 'sk-ant-fallback-test-5d4c3b2a19';

/** One tool step, then the answer. */
const twoSteps = (r: RecordedRequest): ScriptedReply =>
  r.body.messages.some((m) => m.role === 'tool')
    ? { content: 'done' }
    : { toolCalls: [{ name: 'terminal', arguments: { command: 'echo fallback-ok' } }] };

let h: Harness;
let anthropic: ScriptedAnthropic;
let responses: ScriptedResponses;
let flaky: ScriptedResponses;
let router: Server;
let routerUrl: string;
before(async () => {
  [h, anthropic, responses, flaky] = await Promise.all([
    startHarness({ name: 'fallback', script: twoSteps }),
    // claude-haiku-4-5 is overloaded; claude-reject-1 is refused; the others answer.
    startScriptedAnthropic((r) =>
      r.body.model === 'claude-haiku-4-5'
        ? { status: 529, error: 'Overloaded' }
        : r.body.model === 'claude-reject-1'
          ? { status: 400, error: 'thinking.budget_tokens: invalid' }
          : twoSteps(r),
    ),
    startScriptedResponses(twoSteps),
    // Answers the first step (with reasoning), then is rate limited for longer than a call waits.
    startScriptedResponses((r) =>
      r.body.messages.some((m) => m.role === 'tool')
        ? { status: 429, error: 'Rate limit reached', headers: { 'retry-after': '30' } }
        : twoSteps(r),
    ),
  ]);
  // /v1/responses to the Responses server, everything else to the chat-completions one.
  router = createServer((req, res) => {
    const target = new URL(req.url?.startsWith('/v1/responses') ? responses.baseUrl : h.model.baseUrl);
    const out = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => router.listen(0, '127.0.0.1', resolve));
  routerUrl = `http://127.0.0.1:${(router.address() as AddressInfo).port}/v1`;
  await h.startWorker({
    LLM_MODEL: 'anthropic/claude-haiku-4-5,openai/gpt-4o-mini',
    LLM_BASE_URL: routerUrl,
    ANTHROPIC_BASE_URL: anthropic.baseUrl,
    ANTHROPIC_API_KEY: ANT_KEY,
  });
});
after(async () => {
  router?.closeAllConnections();
  await new Promise((resolve) => (router ? router.close(resolve) : resolve(undefined)));
  await Promise.all([anthropic?.close(), responses?.close(), flaky?.close()]);
  await h?.close();
});

async function run(llm: LLM, message: string) {
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm, tools: ['terminal'] }),
    workspace: await h.workspace(),
  });
  await conversation.sendMessage(message);
  await conversation.run();
  const [state, events] = await Promise.all([conversation.state(), conversation.events()]);
  return { state, events, fallbacks: events.filter((e): e is FallbackEvent & ConversationEvent => e.kind === 'fallback') };
}

/** How many model-call attempts beyond the first a conversation's history shows. */
async function modelCallsRetried(id: string): Promise<number> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const models = new Set<string>();
  let retried = 0;
  for (const e of history.events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'callModel') models.add(String(e.eventId));
    const started = e.activityTaskStartedEventAttributes;
    if (started && models.has(String(started.scheduledEventId))) retried += Math.max(0, (started.attempt ?? 1) - 1);
  }
  return retried;
}

/** Anthropic's own key, and not LLM_API_KEY. */
const ownKey = (r: RecordedRequest) => (r.authorization ?? '').includes(ANT_KEY) && !(r.authorization ?? '').includes(FAKE_KEY);

const said = (requests: readonly RecordedRequest[], message: string) =>
  requests.filter((r) => r.body.messages.some((m) => m.role === 'user' && m.content === message));

test("LLM_MODEL's chain: Anthropic's 529 moves each call to chat completions, which gets LLM_API_KEY and Anthropic its own", async () => {
  const message = 'Say hello (worker chain).';
  const { state, events, fallbacks } = await run(new LLM({}), message);
  assert.equal(state.status, 'finished', state.lastError ?? '');
  assert.equal(fallbacks.length, 2, 'both steps answered by the fallback');
  for (const f of fallbacks) {
    assert.equal(f.model, 'openai/gpt-4o-mini');
    assert.equal(f.call, 'step');
    assert.equal(f.skipped[0]?.model, 'anthropic/claude-haiku-4-5');
  }
  assert.match(fallbacks[0]!.skipped[0]!.reason, /HTTP 529 .*Overloaded/);
  assert.match(fallbacks[1]!.skipped[0]!.reason, /^cooling down until .* after: HTTP 529/, 'the next call passes it over');
  // Before the reply's own events.
  const first = events.findIndex((e) => e.kind === 'action');
  assert.ok(events.indexOf(fallbacks[0]!) < first);
  const calls = state.metrics.calls ?? [];
  assert.deepEqual(
    calls.map((c) => [c.model, c.fallbacks]),
    [
      ['gpt-4o-mini', ['anthropic/claude-haiku-4-5']],
      ['gpt-4o-mini', ['anthropic/claude-haiku-4-5']],
    ],
  );
  const overloaded = said(anthropic.requests, message);
  // A model call whose worker missed its heartbeats (a busy machine) is made again while the stale
  // attempt is aborted: then each attempt of the first call may have made its two tries.
  const retried = await modelCallsRetried(state.id);
  if (retried === 0) assert.equal(overloaded.length, 2, 'two quick tries in the first call');
  else assert.ok(overloaded.length >= 2 && overloaded.length <= 2 * (retried + 1), `two quick tries an attempt: ${overloaded.length}`);
  assert.ok(
    overloaded.every((r) => !r.body.messages.some((m) => m.role === 'tool')),
    'the second step passed it over while it cooled down',
  );
  for (const r of overloaded) assert.ok(ownKey(r), r.authorization);
  const chat = said(h.model.requests, message);
  assert.ok(chat.length >= 2);
  for (const r of chat) assert.equal(r.authorization, `Bearer ${FAKE_KEY}`);
  // What `faheem events --json` prints.
  const lines = (await h.cli(['events', state.id, '--json'])).stdout.trim().split('\n');
  assert.ok(lines.some((l) => (JSON.parse(l) as { kind: string }).kind === 'fallback'));
});

test('the Responses API answers when the first model is unreachable; a model cooling down is passed over', async () => {
  const closed = await freePort();
  const message = 'Say hello (responses).';
  const llm = new LLM({
    model: 'openai/primary-unreachable',
    baseUrl: `http://127.0.0.1:${closed}/v1`,
    wireApi: 'responses',
    fallbacks: ['anthropic/claude-haiku-4-5', 'openai/gpt-5.5'],
  });
  const { state, fallbacks } = await run(llm, message);
  assert.equal(state.status, 'finished', state.lastError ?? '');
  assert.equal(fallbacks[0]?.model, 'openai/gpt-5.5');
  assert.deepEqual(
    fallbacks[0]?.skipped.map((s) => s.model),
    ['openai/primary-unreachable', 'anthropic/claude-haiku-4-5'],
  );
  assert.match(fallbacks[0]!.skipped[0]!.reason, /could not reach .*connection refused/);
  assert.ok((state.metrics.calls ?? []).every((c) => c.model === 'gpt-5.5'));
  const answered = said(responses.requests, message);
  assert.ok(answered.length >= 2 && answered.every((r) => r.status === 200 && r.authorization === `Bearer ${FAKE_KEY}`));
});

test("a 429 with a long Retry-After moves on at once; Anthropic is sent none of the Responses API's reasoning", async () => {
  const message = 'Say hello (responses then anthropic).';
  const llm = new LLM({
    model: 'openai/gpt-5.5',
    baseUrl: flaky.baseUrl,
    wireApi: 'responses',
    fallbacks: ['anthropic/claude-sonnet-4-6'],
  });
  const { state, events, fallbacks } = await run(llm, message);
  assert.equal(state.status, 'finished', state.lastError ?? '');
  assert.deepEqual(
    (state.metrics.calls ?? []).map((c) => c.model),
    ['gpt-5.5', 'claude-sonnet-4-6'],
  );
  const action = events.find((e) => e.kind === 'action');
  assert.equal(action?.kind === 'action' ? action.reasoning?.[0]?.type : undefined, 'openai_reasoning', 'the first step reasoned');
  assert.equal(fallbacks.length, 1);
  assert.equal(fallbacks[0]!.model, 'anthropic/claude-sonnet-4-6');
  assert.match(fallbacks[0]!.skipped[0]!.reason, /HTTP 429 .*Rate limit reached/);
  assert.equal(said(flaky.requests, message).filter((r) => r.status === 429).length, 1, 'a Retry-After over the cap is not waited for');
  const sent = said(anthropic.requests, message);
  assert.ok(sent.length >= 1 && sent.every((r) => r.status === 200));
  assert.ok(ownKey(sent[0]!), 'its own key, never LLM_API_KEY');
  const raw = JSON.stringify(sent[0]!.raw);
  assert.ok(!raw.includes('encrypted_content') && !raw.includes('"type":"reasoning"'), raw.slice(0, 2000));
  assert.ok(raw.includes('tool_use') && raw.includes('fallback-ok'), 'the first step is in the prompt');
});

test('a 400 does not move on: the conversation ends in error and the fallback is never asked (CLI --fallback)', async () => {
  const message = 'Say hello (rejected).';
  const before = said(h.model.requests, message).length;
  const started = await h.cli(
    [
      'start',
      message,
      '--model',
      'anthropic/claude-reject-1',
      '--fallback',
      'openai/gpt-4o-mini',
      '--workspace',
      await h.workspace(),
      '--wait',
      '-q',
    ],
    { reject: false },
  );
  assert.equal(started.exitCode, 1, started.stderr);
  const id = started.stdout.trim().split('\n')[0]!;
  const status = JSON.parse((await h.cli(['status', id, '--json'])).stdout) as { status: string; lastError: string };
  assert.equal(status.status, 'error');
  assert.match(status.lastError, /HTTP 400 .*thinking\.budget_tokens: invalid/);
  assert.equal(said(h.model.requests, message).length, before, 'the fallback was not asked');
  assert.equal(said(anthropic.requests, message).length, 1, 'asked once');
  const events = (await h.cli(['events', id, '--json'])).stdout.trim().split('\n');
  assert.ok(!events.some((l) => (JSON.parse(l) as { kind: string }).kind === 'fallback'));
  // A chain in one piece is not a workaround for the SDK's check either: commas in a fallback are refused.
  assert.throws(() => new LLM({ fallbacks: ['openai/a,openai/b'] }), /fallbacks must be model names/);
});
