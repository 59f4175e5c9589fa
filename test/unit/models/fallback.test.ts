// Fallback chains: the pure rules (src/models/fallback.ts, src/models/workflow/model-chain.ts), the key rule
// of a chain's fallbacks (src/models/provider.ts), and ModelClients going along a chain against
// scripted servers in this process (no Temporal).
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { anthropicPrompt } from '../../../src/models/anthropic-messages.js';
import { ModelClients } from '../../../src/models/client.js';
import {
  callOrder,
  COOL_DOWN_MS,
  CoolDowns,
  coolingReason,
  MAX_QUICK_WAIT_MS,
  movesOn,
  quickRetryDelay,
  reasonLine,
} from '../../../src/models/fallback.js';
import { responsesPrompt } from '../../../src/models/openai-responses.js';
import { resolveModel } from '../../../src/models/provider.js';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../../src/testing/scripted-anthropic.js';
import { startScriptedModel, type ScriptedModel } from '../../../src/testing/scripted-model.js';
import type { ChatMessage, ReasoningBlock } from '../../../src/core/types.js';
import { chainOf, chainText, MAX_CHAIN, splitChain } from '../../../src/models/workflow/model-chain.js';
import { modelSettings } from '../../../src/settings/models.js';

test('a chain is split on commas, trimmed, without repeats; the conversation’s model wins over the worker’s', () => {
  assert.deepEqual(splitChain(' openai/a , anthropic/b,,openai/a '), ['openai/a', 'anthropic/b']);
  assert.deepEqual(splitChain(undefined), []);
  assert.deepEqual(chainOf({}, 'openai/a,anthropic/b'), ['openai/a', 'anthropic/b']);
  assert.deepEqual(chainOf({ fallbacks: ['ollama/c'] }, 'openai/a,anthropic/b'), ['openai/a', 'anthropic/b', 'ollama/c']);
  assert.deepEqual(chainOf({ model: 'x/y', fallbacks: ['anthropic/b'] }, 'openai/a'), ['x/y', 'anthropic/b']);
  assert.deepEqual(chainOf({ model: '  ' }, 'openai/a'), ['openai/a']);
  assert.equal(chainOf({ fallbacks: Array.from({ length: 20 }, (_, i) => `m${i}`) }, 'a').length, MAX_CHAIN);
  assert.deepEqual(chainOf({}, undefined), []);
  assert.equal(chainText(['openai/a', 'anthropic/b']), 'openai/a → anthropic/b');
});

test('only a failure that may pass moves the call on; two quick tries, Retry-After honoured up to the cap', () => {
  assert.ok(movesOn('ModelUnavailable'));
  for (const t of ['ModelRequestRejected', 'ContextWindowExceeded', 'ModelConfigError', 'ModelBadResponse', undefined])
    assert.ok(!movesOn(t));
  assert.equal(quickRetryDelay(1, undefined), 500);
  assert.equal(quickRetryDelay(1, 1_500), 1_500);
  assert.equal(quickRetryDelay(1, MAX_QUICK_WAIT_MS + 1), undefined, 'a longer Retry-After: move on at once');
  assert.equal(quickRetryDelay(2, undefined), undefined, 'two tries, then the next model');
});

test('cool-downs: a failed model is passed over until its time is up; calls start at the first one not cooling', () => {
  let now = 1_000_000;
  const c = new CoolDowns(COOL_DOWN_MS, () => now);
  c.mark('a', 'HTTP 503');
  assert.deepEqual(c.cooling('a'), { until: now + COOL_DOWN_MS, reason: 'HTTP 503' });
  assert.deepEqual(
    callOrder(3, (i) => c.cooling(['a', 'b', 'c'][i]!) !== undefined),
    [1, 2],
  );
  now += COOL_DOWN_MS;
  assert.equal(c.cooling('a'), undefined, 'the cool-down is over: first again');
  assert.deepEqual(
    callOrder(3, (i) => c.cooling(['a', 'b', 'c'][i]!) !== undefined),
    [0, 1, 2],
  );
  c.mark('b', 'x');
  c.clear('b');
  assert.equal(c.cooling('b'), undefined, 'a model that answered is not passed over');
  assert.deepEqual(
    callOrder(2, () => true),
    [0, 1],
    'everything cooling: try them all',
  );
  assert.match(coolingReason(Date.UTC(2026, 0, 1, 12, 1, 30), 'HTTP 529 overloaded'), /^cooling down until 12:01:30 UTC after: HTTP 529/);
  assert.equal(reasonLine('first\nsecond'), 'first');
  assert.equal(reasonLine('x'.repeat(1000)).length, 300);
});

test('keys in a chain: a fallback gets LLM_API_KEY only at the first model’s endpoint or under LLM_BASE_URL', () => {
  const first = resolveModel('openai/gpt-4o', undefined, modelSettings({ LLM_API_KEY: 'l' }));
  assert.equal(first.apiKey, 'l', 'the first model: as always');
  const firstEndpoint = first.baseUrl;
  // Another provider: only its own key variable, never the first model's key.
  assert.throws(
    () => resolveModel('anthropic/claude-sonnet-4-6', undefined, modelSettings({ LLM_API_KEY: 'l' }), { firstEndpoint }),
    /set ANTHROPIC_API_KEY on the worker \(a fallback gets LLM_API_KEY only/,
  );
  assert.equal(
    resolveModel('anthropic/claude-sonnet-4-6', undefined, modelSettings({ LLM_API_KEY: 'l', ANTHROPIC_API_KEY: 'a' }), { firstEndpoint })
      .apiKey,
    'a',
  );
  // The first model's own endpoint (same provider): its key.
  assert.equal(resolveModel('openai/gpt-4o-mini', undefined, modelSettings({ LLM_API_KEY: 'l' }), { firstEndpoint }).apiKey, 'l');
  // A local server needs none: none is sent.
  assert.equal(resolveModel('ollama/qwen', undefined, modelSettings({ LLM_API_KEY: 'l' }), { firstEndpoint }).apiKey, 'not-needed');
  // LLM_BASE_URL is the general key's endpoint: a fallback there gets it.
  const env = { LLM_API_KEY: 'l', LLM_BASE_URL: 'http://127.0.0.1:9/v1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:8/' };
  const viaBase = resolveModel('openrouter/x', undefined, modelSettings(env), { firstEndpoint: 'http://127.0.0.1:8/' });
  assert.deepEqual([viaBase.baseUrl, viaBase.apiKey], ['http://127.0.0.1:9/v1', 'l']);
  const anthropic = resolveModel('anthropic/claude', undefined, modelSettings(env), { firstEndpoint: 'http://127.0.0.1:9/v1' });
  assert.deepEqual([anthropic.baseUrl, anthropic.apiKey], ['http://127.0.0.1:8/', 'not-needed'], 'ANTHROPIC_BASE_URL is not LLM_BASE_URL');
});

test('reasoning across providers: Anthropic is sent no OpenAI items, the Responses API no thinking, each keeps its own', () => {
  const item = { type: 'reasoning' as const, id: 'rs_1', summary: [], encrypted_content: 'gAAAAB-enc' };
  const turn = (reasoning: ReasoningBlock[]): ChatMessage[] => [
    { role: 'system', content: 's' },
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: null,
      reasoning,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
  ];
  // openai → anthropic: the Responses item is left out; the tool turn stays whole.
  const toAnthropic = anthropicPrompt(turn([{ type: 'openai_reasoning', item, followedBy: 'call_1' }]), []);
  const sent = JSON.stringify(toAnthropic.messages);
  assert.ok(!sent.includes('encrypted_content') && !sent.includes('rs_1'), sent);
  assert.deepEqual(
    (toAnthropic.messages[1]!.content as { type: string }[]).map((b) => b.type),
    ['tool_use'],
  );
  // anthropic → openai: thinking blocks are left out, and the function call goes without an item id.
  const thinking: ReasoningBlock[] = [
    { type: 'thinking', thinking: 'plan', signature: 'sig' },
    { type: 'redacted_thinking', data: 'ENC' },
  ];
  const toOpenAI = responsesPrompt(turn(thinking), []);
  const input = JSON.stringify(toOpenAI.input);
  assert.ok(!input.includes('plan') && !input.includes('sig') && !input.includes('ENC'), input);
  assert.deepEqual(
    toOpenAI.input.map((i) => (i as { type?: string }).type ?? 'message'),
    ['message', 'function_call', 'function_call_output'],
  );
  // Each keeps its own: Anthropic's thinking goes back to Anthropic, the item to the Responses API.
  assert.equal((anthropicPrompt(turn(thinking), []).messages[1]!.content as { type: string }[])[0]!.type, 'thinking');
  assert.ok(JSON.stringify(responsesPrompt(turn([{ type: 'openai_reasoning', item, followedBy: 'call_1' }]), []).input).includes('rs_1'));
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('ModelClients along a chain', () => {
  const LLM_KEY = 'sk-general-key-1a2b3c4d5e';
  const ANT_KEY = 'sk-ant-own-key-9f8e7d6c5b';
  let down: ScriptedModel;
  let rejects: ScriptedModel;
  let up: ScriptedModel;
  let anthropic: ScriptedAnthropic;
  let closed: number;
  before(async () => {
    [down, rejects, up, anthropic, closed] = await Promise.all([
      startScriptedModel(() => ({ status: 503, error: 'upstream is down' })),
      startScriptedModel(() => ({ status: 400, error: 'bad request' })),
      startScriptedModel(() => ({ content: 'from the fallback' })),
      startScriptedAnthropic(() => ({ content: 'from anthropic' })),
      closedPort(),
    ]);
  });
  after(async () => {
    await Promise.all([down.close(), rejects.close(), up.close(), anthropic.close()]);
  });

  const messages: ChatMessage[] = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'hi' },
  ];
  // A signal per call, as each activity attempt has its own.
  const fresh = () => new AbortController().signal;

  function clients(env: Record<string, string> = {}) {
    let now = 5_000_000;
    const clock = {
      advance: (ms: number) => (now += ms),
    };
    const models = new ModelClients(
      modelSettings({ LLM_API_KEY: LLM_KEY, LLM_BASE_URL: up.baseUrl, FAHEEM_PRICES: '{"m":{"input":1,"output":2}}', ...env }),
      () => {},
      new CoolDowns(COOL_DOWN_MS, () => now),
    );
    return { models, clock };
  }

  test('a 503 moves the call on after two tries; the next call passes the model over while it cools down', async () => {
    const { models, clock } = clients();
    const notes: string[] = [];
    const before = down.requests.length;
    const llm = { usageId: 'u', model: 'openai/primary', baseUrl: down.baseUrl, fallbacks: ['openai/m'] };
    const first = await models.complete({ llm, messages, tools: [], conversationId: 'c', onRetry: (n) => notes.push(n) }, fresh());
    assert.equal(first.content, 'from the fallback');
    assert.equal(first.answeredBy, 'openai/m');
    assert.equal(first.model, 'm', 'the model that answered');
    assert.ok(first.cost > 0, "priced at the answering model's price");
    assert.equal(first.fallbacks?.length, 1);
    assert.equal(first.fallbacks![0]!.model, 'openai/primary');
    assert.match(first.fallbacks![0]!.reason, /HTTP 503 .*upstream is down/);
    assert.equal(down.requests.length - before, 2, 'two quick tries of the first model');
    assert.match(notes[0]!, /openai\/primary is unavailable .* asking it again/);
    assert.match(notes[1]!, /trying openai\/m/);
    // The fallback at LLM_BASE_URL gets the general key; the conversation's own endpoint none.
    assert.equal(up.requests.at(-1)!.authorization, `Bearer ${LLM_KEY}`);
    assert.ok(down.requests.slice(before).every((r) => !(r.authorization ?? '').includes(LLM_KEY)));

    const second = await models.complete({ llm, messages, tools: [], conversationId: 'c' }, fresh());
    assert.equal(down.requests.length - before, 2, 'cooling down: not asked');
    assert.match(second.fallbacks![0]!.reason, /^cooling down until .* after: HTTP 503/);

    clock.advance(COOL_DOWN_MS);
    await models.complete({ llm, messages, tools: [], conversationId: 'c' }, fresh());
    assert.equal(down.requests.length - before, 4, 'after the cool-down the first model is tried first again');
  });

  test('a 400 does not move the call on: it fails as for one model', async () => {
    const { models } = clients();
    const before = up.requests.length;
    const llm = { usageId: 'u', model: 'openai/primary', baseUrl: rejects.baseUrl, fallbacks: ['openai/m'] };
    await assert.rejects(models.complete({ llm, messages, tools: [], conversationId: 'c' }, fresh()), (err: unknown) => {
      assert.ok(err instanceof ApplicationFailure);
      assert.equal(err.type, 'ModelRequestRejected');
      assert.equal(err.nonRetryable, true);
      return true;
    });
    assert.equal(up.requests.length, before, 'the fallback was not asked');
  });

  test('unreachable moves on at once to Anthropic, which gets its own key and never LLM_API_KEY', async () => {
    const { models } = clients({ ANTHROPIC_BASE_URL: anthropic.baseUrl, ANTHROPIC_API_KEY: ANT_KEY });
    const llm = {
      usageId: 'u',
      model: 'openai/primary',
      baseUrl: `http://127.0.0.1:${closed}/v1`,
      fallbacks: ['anthropic/claude-sonnet-4-6'],
    };
    const reply = await models.complete({ llm, messages, tools: [], conversationId: 'c' }, fresh());
    assert.equal(reply.content, 'from anthropic');
    assert.equal(reply.answeredBy, 'anthropic/claude-sonnet-4-6');
    assert.match(reply.fallbacks![0]!.reason, /could not reach .*connection refused/);
    const sent = anthropic.requests.at(-1)!.authorization ?? '';
    assert.ok(sent.includes(ANT_KEY) && !sent.includes(LLM_KEY), sent);
  });

  test('every model unavailable: ModelUnavailable naming each; a fallback without its own key is passed over', async () => {
    // No ANTHROPIC_API_KEY: the Anthropic fallback would get LLM_API_KEY, so it gets nothing and is passed over.
    const { models } = clients({ LLM_BASE_URL: '' });
    const before = anthropic.requests.length;
    const llm = { usageId: 'u', model: 'openai/primary', baseUrl: down.baseUrl, fallbacks: ['anthropic/claude-sonnet-4-6'] };
    await assert.rejects(models.complete({ llm, messages, tools: [], conversationId: 'c' }, fresh()), (err: unknown) => {
      assert.ok(err instanceof ApplicationFailure);
      assert.equal(err.type, 'ModelUnavailable');
      assert.equal(err.nonRetryable, false, 'Temporal retries it');
      assert.match(err.message, /every model of the fallback chain is unavailable: openai\/primary: HTTP 503/);
      assert.match(err.message, /anthropic\/claude-sonnet-4-6: no API key .* set ANTHROPIC_API_KEY/);
      assert.ok(!err.message.includes(LLM_KEY));
      return true;
    });
    assert.equal(anthropic.requests.length, before);
  });

  test('a single model is asked once, as before (Temporal retries it)', async () => {
    const { models } = clients();
    const before = down.requests.length;
    await assert.rejects(
      models.complete(
        { llm: { usageId: 'u', model: 'openai/solo', baseUrl: down.baseUrl }, messages, tools: [], conversationId: 'c' },
        fresh(),
      ),
      /HTTP 503/,
    );
    assert.equal(down.requests.length - before, 1);
  });

  test('LLM_MODEL may be a chain', async () => {
    const { models } = clients({ LLM_MODEL: `openai/primary-env, openai/m` });
    // The worker's first model at a dead endpoint is not expressible through LLM_BASE_URL alone, so
    // the chain's second model answering after the first one's 503 is shown with a conversation base URL.
    const reply = await models.complete(
      { llm: { usageId: 'u', baseUrl: down.baseUrl }, messages, tools: [], conversationId: 'c' },
      fresh(),
    );
    assert.equal(reply.answeredBy, 'openai/m');
    assert.equal(reply.fallbacks![0]!.model, 'openai/primary-env');
  });
});
