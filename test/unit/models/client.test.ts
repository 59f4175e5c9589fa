import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ModelClients, maxOutputTokens } from '../../../src/models/client.js';
import type { PartialReply } from '../../../src/models/stream.js';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../../src/testing/scripted-anthropic.js';
import { startScriptedModel, type ScriptedModel } from '../../../src/testing/scripted-model.js';
import type { ChatMessage, ToolSpec } from '../../../src/core/types.js';
import { modelSettings } from '../../../src/settings/models.js';

const KEY = 'sk-unit-secret-77aa';
const tools: ToolSpec[] = [
  {
    name: 'terminal',
    description: 'Run a command. '.repeat(200),
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    runsIn: 'host',
    needsApproval: false,
  },
];
const system = 'You are a careful engineer. '.repeat(100);

describe('ModelClients.complete', () => {
  let anthropic: ScriptedAnthropic;
  let openai: ScriptedModel;
  before(async () => {
    anthropic = await startScriptedAnthropic((r) =>
      r.body.messages.some((m) => m.role === 'tool')
        ? { content: 'All done.' }
        : { content: 'Listing.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo "a b c" && ls -la /tmp' } }] },
    );
    openai = await startScriptedModel((r) =>
      r.body.messages.some((m) => m.role === 'tool')
        ? { content: 'All done.' }
        : { toolCalls: [{ name: 'terminal', arguments: { command: 'ls -la' } }] },
    );
  });
  after(async () => {
    await anthropic.close();
    await openai.close();
  });

  test('anthropic: streamed, tool input assembled, cache written then read, thinking kept and sent back', async () => {
    const warnings: string[] = [];
    const models = new ModelClients(
      modelSettings({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.baseUrl, LLM_REASONING_EFFORT: 'low' }),
      (l) => warnings.push(l),
    );
    const partials: PartialReply[] = [];
    const llm = { usageId: 'u', model: 'anthropic/claude-sonnet-4-6' };
    const messages: ChatMessage[] = [
      { role: 'system', content: system },
      { role: 'user', content: 'List the files.' },
    ];
    const first = await models.complete(
      { llm, messages, tools, conversationId: 'c1', onPartial: (p) => partials.push(p) },
      new AbortController().signal,
    );
    assert.equal(first.toolCalls.length, 1);
    assert.deepEqual(JSON.parse(first.toolCalls[0]!.arguments), { command: 'echo "a b c" && ls -la /tmp' });
    assert.ok(partials.length > 3, 'partial replies while streaming');
    assert.ok(
      partials.some(
        (p) =>
          p.toolCalls[0] && p.toolCalls[0].arguments.length > 0 && p.toolCalls[0].arguments.length < first.toolCalls[0]!.arguments.length,
      ),
    );
    assert.equal(first.reasoning[0]?.type, 'thinking');
    assert.ok((first.usage.cacheWriteTokens ?? 0) > 1024);
    assert.equal(first.usage.cacheReadTokens, 0);
    const raw = anthropic.requests[0]!.raw as { thinking?: { type: string; budget_tokens: number }; max_tokens: number };
    assert.equal(raw.thinking?.type, 'enabled');
    assert.ok(raw.thinking.budget_tokens < raw.max_tokens);
    // sonnet 4.6 list prices: 3 in, 3.75 write, 0.3 read, 15 out (USD per million).
    const u = first.usage;
    const expected =
      ((u.promptTokens - u.cacheReadTokens - (u.cacheWriteTokens ?? 0)) * 3 +
        (u.cacheWriteTokens ?? 0) * 3.75 +
        u.cacheReadTokens * 0.3 +
        u.completionTokens * 15) /
      1e6;
    assert.ok(Math.abs(first.cost - expected) < 1e-12, `${first.cost} vs ${expected}`);

    const next: ChatMessage[] = [
      ...messages,
      {
        role: 'assistant',
        content: first.content,
        tool_calls: first.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: c.arguments },
        })),
        reasoning: first.reasoning,
      },
      { role: 'tool', tool_call_id: first.toolCalls[0]!.id, content: 'a b c\nfile1 file2' },
    ];
    const second = await models.complete({ llm, messages: next, tools, conversationId: 'c1' }, new AbortController().signal);
    assert.equal(second.content, 'All done.');
    assert.ok(second.usage.cacheReadTokens >= (first.usage.cacheWriteTokens ?? 0), "the first call's prefix is read");
    // Without the thinking block the API refuses the continuation (the scripted server does too).
    const dropped = next.map((m) => (m.role === 'assistant' ? { ...m, reasoning: undefined } : m)) as ChatMessage[];
    // …but the client then turns thinking off for that call rather than be refused.
    const third = await models.complete({ llm, messages: dropped, tools, conversationId: 'c1' }, new AbortController().signal);
    assert.equal(third.content, 'All done.');
    assert.equal((anthropic.requests[2]!.raw as { thinking?: unknown }).thinking, undefined);
    assert.deepEqual(warnings, []);
  });

  test('anthropic: 529 retryable, 401 not, key masked; prompt too long is ContextWindowExceeded', async () => {
    const models = new ModelClients(modelSettings({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.baseUrl }), () => {});
    const llm = { usageId: 'u', model: 'anthropic/claude-sonnet-4-6' };
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    const cases: [number, string, RegExp, boolean][] = [
      [529, 'Overloaded', /ModelUnavailable/, false],
      [401, `invalid x-api-key ${KEY}`, /ModelRequestRejected/, true],
      [400, 'prompt is too long: 210000 tokens > 200000 maximum', /ContextWindowExceeded/, true],
    ];
    for (const [status, error, type, nonRetryable] of cases) {
      anthropic.setScript(() => ({ status, error }));
      const err = (await models
        .complete({ llm, messages, tools: [], conversationId: 'c' }, new AbortController().signal)
        .catch((e: unknown) => e)) as { type: string; nonRetryable: boolean; message: string };
      assert.match(err.type, type);
      assert.equal(err.nonRetryable, nonRetryable, `${status}`);
      assert.ok(!err.message.includes(KEY), err.message);
    }
  });

  test('openai-compatible: streamed with usage, output capped, arguments assembled', async () => {
    const models = new ModelClients(modelSettings({ LLM_API_KEY: KEY, LLM_BASE_URL: openai.baseUrl }), () => {});
    const llm = { usageId: 'u', model: 'openai/gpt-4o-mini' };
    const reply = await models.complete(
      { llm, messages: [{ role: 'user', content: 'go' }], tools, conversationId: 'c' },
      new AbortController().signal,
    );
    assert.deepEqual(JSON.parse(reply.toolCalls[0]!.arguments), { command: 'ls -la' });
    assert.equal(reply.usage.promptTokens, 100);
    const body = openai.requests[0]!.body;
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.max_tokens, maxOutputTokens(modelSettings({}), 128_000));
    assert.equal(body.prompt_cache_key, undefined, "only on OpenAI's own endpoint");
    assert.equal(body.reasoning_effort, undefined);
    const reasoning = new ModelClients(
      modelSettings({ LLM_API_KEY: KEY, LLM_BASE_URL: openai.baseUrl, LLM_REASONING_EFFORT: 'medium' }),
      () => {},
    );
    await reasoning.complete(
      { llm, messages: [{ role: 'user', content: 'go' }], tools, conversationId: 'c' },
      new AbortController().signal,
    );
    assert.equal(openai.requests.at(-1)!.body.reasoning_effort, 'medium');
    await reasoning.complete(
      { llm: { ...llm, reasoningEffort: 'high' }, messages: [{ role: 'user', content: 'go' }], tools, conversationId: 'c' },
      new AbortController().signal,
    );
    assert.equal(openai.requests.at(-1)!.body.reasoning_effort, 'high', "the conversation's effort wins");
  });

  test("a deprecated model: our warning once, not the SDK's on every call", async () => {
    const ours: string[] = [];
    const models = new ModelClients(modelSettings({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.baseUrl }), (l) => ours.push(l));
    anthropic.setScript(() => ({ content: 'ok' }));
    const printed: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => printed.push(args.join(' '));
    try {
      for (let i = 0; i < 2; i++) {
        const r = await models.complete(
          {
            llm: { usageId: 'u', model: 'anthropic/claude-sonnet-4-5-20250929' },
            messages: [{ role: 'user', content: 'hi' }],
            tools: [],
            conversationId: 'c',
          },
          new AbortController().signal,
        );
        assert.equal(r.content, 'ok');
      }
    } finally {
      console.warn = warn;
    }
    assert.equal(ours.length, 1);
    assert.match(ours[0]!, /claude-sonnet-4-5-20250929 was retired on November 30th, 2026; use claude-sonnet-4-6 instead/);
    assert.deepEqual(printed, []);
  });

  test('a model with no known price is said once, and costs 0', async () => {
    const warnings: string[] = [];
    const models = new ModelClients(modelSettings({ LLM_API_KEY: KEY, LLM_BASE_URL: openai.baseUrl }), (l) => warnings.push(l));
    openai.setScript(() => ({ content: 'ok', truncated: true }));
    const llm = { usageId: 'u', model: 'my-local-model' };
    for (let i = 0; i < 2; i++) {
      const r = await models.complete(
        { llm, messages: [{ role: 'user', content: 'go' }], tools: [], conversationId: 'c' },
        new AbortController().signal,
      );
      assert.equal(r.cost, 0);
      assert.equal(r.truncated, true);
    }
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /no price known for model my-local-model/);
    assert.equal(openai.requests.at(-1)!.body.max_tokens, 4096);
  });

  test("openai-compatible: a 400 saying the prompt passes the model's context is ContextWindowExceeded, not retried", async () => {
    const models = new ModelClients(modelSettings({ LLM_API_KEY: KEY, LLM_BASE_URL: openai.baseUrl }), () => {});
    openai.setScript(() => ({
      status: 400,
      error: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    }));
    const err = (await models
      .complete(
        { llm: { usageId: 'u', model: 'openai/gpt-4o-mini' }, messages: [{ role: 'user', content: 'go' }], tools: [], conversationId: 'c' },
        new AbortController().signal,
      )
      .catch((e: unknown) => e)) as { type: string; nonRetryable: boolean; message: string };
    assert.equal(err.type, 'ContextWindowExceeded');
    assert.equal(err.nonRetryable, true);
    assert.match(err.message, /HTTP 400 .*maximum context length/);
  });
});

test('a cancelled call aborts the streaming request under way', { timeout: 120_000 }, async () => {
  // The reply is held at a gate that never opens: only the abort can end the call.
  const anthropic = await startScriptedAnthropic(() => ({ gate: 'never', content: 'late' }));
  try {
    const models = new ModelClients(modelSettings({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.baseUrl }), () => {});
    const abort = new AbortController();
    const call = models.complete(
      {
        llm: { usageId: 'u', model: 'anthropic/claude-sonnet-4-6' },
        messages: [{ role: 'user', content: 'hi' }],
        tools: [],
        conversationId: 'c',
      },
      abort.signal,
    );
    await anthropic.reached('never');
    abort.abort();
    const err = (await call.catch((e: unknown) => e)) as Error;
    assert.equal(err.name, 'CancelledFailure');
    const deadline = Date.now() + 30_000;
    while (!anthropic.requests[0]!.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(anthropic.requests[0]!.aborted, true, 'the server saw the connection close');
  } finally {
    await anthropic.close();
  }
});
