// The Responses wire: the prompt in its terms, which model wants which API, the stream assembled,
// and ModelClients against the scripted Responses server (reasoning kept and sent back, usage,
// cached tokens, cost, truncation, the API's refusals as errors).
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { after, before, describe, test } from 'node:test';
import { LLM } from '../../../src/client/client.js';
import { FaheemError } from '../../../src/core/errors.js';
import { ModelClients } from '../../../src/models/client.js';
import {
  chatRefusesTools,
  isReasoningModel,
  responsesPrompt,
  ResponsesAssembler,
  wireApiFor,
} from '../../../src/models/openai-responses.js';
import { costOf } from '../../../src/models/prices.js';
import type { PartialReply } from '../../../src/models/stream.js';
import {
  chatRefusal,
  responsesRefusal,
  scriptedEncryptedContent,
  startScriptedResponses,
  type ScriptedResponses,
} from '../../../src/testing/scripted-responses.js';
import type { ChatMessage, OpenAIReasoningItem, ToolSpec } from '../../../src/core/types.js';
import { modelSettings } from '../../../src/settings/models.js';

const KEY = 'sk-unit-responses-secret-91cc';
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
const item: OpenAIReasoningItem = {
  type: 'reasoning',
  id: 'rs_1',
  summary: [{ type: 'summary_text', text: 'Look first.' }],
  encrypted_content: 'gAAAAB-enc',
};

test('responsesPrompt: instructions, messages, reasoning items exactly as received before their function calls, outputs', () => {
  const chat: ChatMessage[] = [
    { role: 'system', content: 'Be careful.' },
    { role: 'user', content: 'List the files.' },
    {
      role: 'assistant',
      content: 'Listing.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' }, item_id: 'fc_1' }],
      reasoning: [
        { type: 'thinking', thinking: 'anthropic', signature: 's' },
        { type: 'openai_reasoning', item },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'terminal', arguments: '{}' }, item_id: 'fc_2' }],
    },
    { role: 'tool', tool_call_id: 'call_2', content: 'ok' },
  ];
  const p = responsesPrompt(chat, tools);
  assert.equal(p.instructions, 'Be careful.');
  assert.deepEqual(p.input, [
    { role: 'user', content: 'List the files.' },
    item,
    { role: 'assistant', content: 'Listing.' },
    { type: 'function_call', call_id: 'call_1', name: 'terminal', arguments: '{"command":"ls"}', id: 'fc_1' },
    { type: 'function_call_output', call_id: 'call_1', output: '(no output)' },
    // No reasoning beside it: no item id either (the API pairs them by id).
    { type: 'function_call', call_id: 'call_2', name: 'terminal', arguments: '{}' },
    { type: 'function_call_output', call_id: 'call_2', output: 'ok' },
  ]);
  assert.equal(p.tools[0]?.type, 'function');
  assert.equal(p.tools[0]?.name, 'terminal');
  assert.equal(JSON.stringify(responsesPrompt(chat, tools)), JSON.stringify(p), 'the same bytes each time (a stable prefix)');
});

test('new LLM({ wireApi }) is checked and kept on the spec', () => {
  assert.equal(new LLM({ wireApi: 'responses' }).spec.wireApi, 'responses');
  assert.equal(new LLM({}).spec.wireApi, undefined);
  assert.throws(
    () => new LLM({ wireApi: 'soap' as never }),
    (err: unknown) => err instanceof FaheemError && /wireApi must be responses or chat/.test(err.message),
  );
});

test('which API: responses on OpenAI itself, chat elsewhere, LLM_WIRE_API and the conversation choose; reasoning models', () => {
  const openai = { provider: 'openai', baseUrl: 'https://api.openai.com/v1' };
  const local = { provider: 'openai', baseUrl: 'http://127.0.0.1:8080/v1' };
  assert.equal(wireApiFor(openai, undefined, modelSettings({})), 'responses');
  assert.equal(wireApiFor({ ...openai, baseUrl: 'https://api.openai.com/v1/' }, undefined, modelSettings({})), 'responses');
  assert.equal(wireApiFor(local, undefined, modelSettings({})), 'chat');
  assert.equal(wireApiFor({ provider: 'custom', baseUrl: 'http://x/v1' }, undefined, modelSettings({})), 'chat');
  assert.equal(wireApiFor(local, undefined, modelSettings({ LLM_WIRE_API: 'responses' })), 'responses');
  assert.equal(wireApiFor(openai, undefined, modelSettings({ LLM_WIRE_API: 'chat' })), 'chat');
  assert.equal(wireApiFor(openai, 'chat', modelSettings({ LLM_WIRE_API: 'responses' })), 'chat');
  assert.equal(wireApiFor(local, undefined, modelSettings({ LLM_WIRE_API: 'nonsense' })), 'chat');
  const warnings: string[] = [];
  new ModelClients(modelSettings({ LLM_WIRE_API: 'soap' }), (l) => warnings.push(l));
  assert.deepEqual(warnings, [
    "LLM_WIRE_API=soap is not responses or chat: the default applies (responses on OpenAI's own endpoint, chat elsewhere)",
  ]);
  // Any case is read the same way by the warning and the choice.
  new ModelClients(modelSettings({ LLM_WIRE_API: 'Responses' }), (l) => warnings.push(l));
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.equal(wireApiFor(local, undefined, modelSettings({ LLM_WIRE_API: 'Responses' })), 'responses');
  assert.equal(wireApiFor({ provider: 'anthropic', baseUrl: 'https://api.anthropic.com/v1/' }, 'responses', modelSettings({})), undefined);
  for (const m of ['gpt-5.6', 'gpt-5.4', 'gpt-5', 'gpt-5-mini', 'o3', 'o4-mini', 'codex-mini-latest']) assert.ok(isReasoningModel(m), m);
  for (const m of ['gpt-4o', 'gpt-4.1', 'gpt-5-chat-latest', 'llama3']) assert.ok(!isReasoningModel(m), m);
  for (const m of ['gpt-5.4', 'gpt-5.6', 'gpt-5.4-mini', 'gpt-6']) assert.ok(chatRefusesTools(m), m);
  for (const m of ['gpt-5.2', 'gpt-5', 'gpt-4o', 'o3']) assert.ok(!chatRefusesTools(m), m);
});

test('the scripted server refuses what the API refuses', () => {
  const issued = { reasoning: new Map([['rs_1', 'gAAAAB-enc']]), calls: new Map([['call_1', { itemId: 'fc_1', reasoningId: 'rs_1' }]]) };
  const call = { type: 'function_call', call_id: 'call_1', name: 'terminal', arguments: '{}', id: 'fc_1' };
  const output = { type: 'function_call_output', call_id: 'call_1', output: 'ok' };
  const body = (input: Record<string, unknown>[]) => ({ model: 'gpt-5.5', store: false, input });
  assert.equal(responsesRefusal(body([{ ...item }, call, output]), issued), undefined);
  assert.deepEqual(responsesRefusal(body([call, output]), issued), {
    status: 400,
    message: "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_1'.",
  });
  assert.equal(responsesRefusal(body([{ ...item, encrypted_content: 'gAAAAB-other' }, call, output]), issued)?.status, 400);
  assert.equal(responsesRefusal(body([{ ...item, encrypted_content: null }, call, output]), issued)?.status, 404);
  assert.match(responsesRefusal(body([{ ...item }]), issued)?.message ?? '', /without its required following item/);
  assert.match(
    responsesRefusal({ model: 'gpt-4o', include: ['reasoning.encrypted_content'], input: [] }, issued)?.message ?? '',
    /not supported with this model/,
  );
  const chat = { model: 'gpt-5.6', messages: [], tools: [{}] };
  assert.match(chatRefusal(chat) ?? '', /^Function tools with reasoning_effort are not supported for gpt-5.6 in \/v1\/chat\/completions/);
  assert.equal(chatRefusal({ ...chat, reasoning_effort: 'none' }), undefined);
  assert.equal(chatRefusal({ ...chat, model: 'gpt-5.5' }), undefined, "gpt-5.5's default effort is none");
  assert.ok(chatRefusal({ ...chat, model: 'gpt-5.5', reasoning_effort: 'low' }));
  assert.equal(chatRefusal({ ...chat, tools: [] }), undefined);
  assert.equal(scriptedEncryptedContent('rs_1', 'x', 5_000).length, 5_000);
});

test('ResponsesAssembler: the done copy of a reasoning item, summaries as thinking, arguments in fragments, usage, incomplete', () => {
  const partials: PartialReply[] = [];
  const a = new ResponsesAssembler((p) => partials.push(p));
  const resp = { id: 'resp_1', model: 'gpt-5.5' };
  const events = [
    { type: 'response.created', sequence_number: 0, response: resp },
    { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAA' } },
    { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Look ' },
    { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'first.' },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.output_text.delta', output_index: 1, content_index: 0, item_id: 'msg_1', delta: 'Listing' },
    {
      type: 'response.output_item.added',
      output_index: 2,
      item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'terminal', arguments: '' },
    },
    { type: 'response.function_call_arguments.delta', output_index: 2, item_id: 'fc_1', delta: '{"comm' },
    { type: 'response.function_call_arguments.delta', output_index: 2, item_id: 'fc_1', delta: 'and":"ls"}' },
    {
      type: 'response.incomplete',
      response: {
        ...resp,
        incomplete_details: { reason: 'max_output_tokens' },
        usage: {
          input_tokens: 1_000,
          input_tokens_details: { cached_tokens: 600 },
          output_tokens: 50,
          output_tokens_details: { reasoning_tokens: 30 },
        },
      },
    },
  ];
  for (const e of events) a.push(e as never);
  const r = a.result();
  assert.equal(r.id, 'resp_1');
  assert.deepEqual(r.reasoning, [{ type: 'openai_reasoning', item }]);
  assert.equal(r.text, 'Listing');
  assert.deepEqual(r.toolCalls, [{ id: 'call_1', name: 'terminal', arguments: '{"command":"ls"}', itemId: 'fc_1' }]);
  assert.deepEqual([r.inputTokens, r.cacheReadTokens, r.outputTokens, r.truncated, r.complete], [400, 600, 50, true, true]);
  assert.ok(
    partials.some((p) => p.thinking === 'Look '),
    'thinking streams',
  );
  assert.ok(
    partials.some((p) => p.toolCalls[0]?.arguments === '{"comm'),
    'arguments stream',
  );
  const b = new ResponsesAssembler();
  b.push({ type: 'response.failed', response: { ...resp, error: { code: 'server_error', message: 'boom' }, usage: null } } as never);
  assert.equal(b.failure?.code, 'server_error');
});

describe('ModelClients.complete through the Responses API', () => {
  let server: ScriptedResponses;
  before(async () => {
    server = await startScriptedResponses((r) =>
      r.body.messages.some((m) => m.role === 'tool')
        ? { content: 'All done.' }
        : { content: 'Listing.', toolCalls: [{ name: 'terminal', arguments: { command: 'ls -la' } }] },
    );
  });
  after(async () => server.close());

  const env = () => ({ LLM_API_KEY: KEY, LLM_BASE_URL: server.baseUrl, LLM_WIRE_API: 'responses', LLM_REASONING_EFFORT: 'low' });
  const llm = { usageId: 'u', model: 'openai/gpt-5.5' };

  test('store:false, encrypted reasoning asked for and sent back, summaries streamed, cached tokens, cost at list prices', async () => {
    const models = new ModelClients(modelSettings(env()), () => {});
    const partials: PartialReply[] = [];
    const messages: ChatMessage[] = [
      { role: 'system', content: system },
      { role: 'user', content: 'List the files.' },
    ];
    const from = server.requests.length;
    const first = await models.complete(
      { llm, messages, tools, conversationId: 'conv-1', onPartial: (p) => partials.push(p) },
      new AbortController().signal,
    );
    assert.equal(first.toolCalls.length, 1);
    assert.match(first.toolCalls[0]?.itemId ?? '', /^fc_scripted_\d+_0$/);
    assert.equal(first.reasoning.length, 1);
    const reasoning = first.reasoning[0];
    assert.ok(reasoning?.type === 'openai_reasoning' && (reasoning.item.encrypted_content ?? '').length === 2_048, 'the done copy, whole');
    assert.ok(
      partials.some((p) => p.thinking.startsWith('Step')),
      'summary as thinking while it streams',
    );
    const raw = server.requests[from]?.raw as Record<string, unknown>;
    assert.equal(raw.store, false);
    assert.deepEqual(raw.include, ['reasoning.encrypted_content']);
    assert.deepEqual(raw.reasoning, { effort: 'low', summary: 'auto' });
    assert.equal(raw.prompt_cache_key, 'conv-1');
    assert.equal(raw.parallel_tool_calls, true);
    assert.ok(Number(raw.max_output_tokens) > 0);
    assert.equal(raw.stream, true);
    // The continuation: reasoning, the call, its output.
    const call = first.toolCalls[0]!;
    const next: ChatMessage[] = [
      ...messages,
      {
        role: 'assistant',
        content: first.content,
        tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments }, item_id: call.itemId! }],
        reasoning: first.reasoning,
      },
      { role: 'tool', tool_call_id: call.id, content: 'a\nb' },
    ];
    const second = await models.complete({ llm, messages: next, tools, conversationId: 'conv-1' }, new AbortController().signal);
    assert.equal(second.content, 'All done.');
    const sent = (server.requests[from + 1]?.raw as { input: Record<string, unknown>[] }).input;
    assert.deepEqual(sent[1], reasoning.item, 'the reasoning item exactly as received');
    assert.equal(sent[3]?.id, call.itemId);
    const usage = server.requests[from + 1]!.usage!;
    assert.ok((usage.cached_tokens ?? 0) > 1_024, `cached tokens ${usage.cached_tokens}`);
    assert.equal(second.usage.promptTokens, usage.input_tokens);
    assert.equal(second.usage.cacheReadTokens, usage.cached_tokens);
    assert.equal(second.usage.completionTokens, usage.output_tokens);
    // gpt-5.5 list prices: $5 input, $0.50 cached input, $30 output per million tokens.
    const list = ((usage.input_tokens! - usage.cached_tokens!) * 5 + usage.cached_tokens! * 0.5 + usage.output_tokens! * 30) / 1e6;
    assert.ok(Math.abs(second.cost - list) < 1e-12, `${second.cost} vs ${list}`);
    assert.equal(second.cost, costOf('gpt-5.5', second.usage, {}, 'openai'));
  });

  test('a dropped reasoning item is the API 400, not retried; incomplete is truncated; 429 honours Retry-After', async () => {
    const models = new ModelClients(modelSettings(env()), () => {});
    const messages: ChatMessage[] = [
      { role: 'system', content: system },
      { role: 'user', content: 'List the files.' },
    ];
    const first = await models.complete({ llm, messages, tools, conversationId: 'conv-2' }, new AbortController().signal);
    const call = first.toolCalls[0]!;
    const dropped: ChatMessage[] = [
      ...messages,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
      },
      { role: 'tool', tool_call_id: call.id, content: 'a\nb' },
    ];
    await assert.rejects(
      models.complete({ llm, messages: dropped, tools, conversationId: 'conv-2' }, new AbortController().signal),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.nonRetryable &&
        /HTTP 400 .*of type 'function_call' was provided without its required 'reasoning' item: 'rs_scripted_/.test(err.message),
    );
    server.setScript(() => ({ content: 'I will now write a very long', truncated: true }));
    const cut = await models.complete({ llm, messages, tools, conversationId: 'conv-2' }, new AbortController().signal);
    assert.equal(cut.truncated, true);
    server.setScript(() => ({ status: 429, headers: { 'retry-after': '3' }, error: 'Rate limit reached' }));
    await assert.rejects(
      models.complete({ llm, messages, tools, conversationId: 'conv-2' }, new AbortController().signal),
      (err: unknown) => err instanceof ApplicationFailure && !err.nonRetryable && err.nextRetryDelay === 3_000,
    );
    server.setScript(() => ({ status: 503, error: 'The server is overloaded' }));
    await assert.rejects(
      models.complete({ llm, messages, tools, conversationId: 'conv-2' }, new AbortController().signal),
      (err: unknown) => err instanceof ApplicationFailure && !err.nonRetryable && /HTTP 503/.test(err.message),
      'a 5xx is retried',
    );
    server.setScript(() => ({ content: 'ok' }));
  });

  test('chat completions for gpt-5.6 with tools: the API 400 as the error, and one worker warning naming LLM_WIRE_API', async () => {
    const warnings: string[] = [];
    const models = new ModelClients(modelSettings({ LLM_API_KEY: KEY, LLM_BASE_URL: server.baseUrl, LLM_WIRE_API: 'chat' }), (l) =>
      warnings.push(l),
    );
    const chatLlm = { usageId: 'u', model: 'openai/gpt-5.6' };
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    const from = server.requests.length;
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        models.complete({ llm: chatLlm, messages, tools, conversationId: 'c' }, new AbortController().signal),
        (err: unknown) =>
          err instanceof ApplicationFailure &&
          err.nonRetryable &&
          /Function tools with reasoning_effort are not supported for gpt-5.6/.test(err.message),
      );
    }
    assert.equal(warnings.filter((w) => w.includes('LLM_WIRE_API=responses')).length, 1);
    // Never a silent downgrade: the effort is not set to 'none' to get past the refusal.
    const sent = server.requests.slice(from).map((r) => (r.raw as { reasoning_effort?: unknown }).reasoning_effort);
    assert.equal(sent.length, 2, 'both calls reached the server');
    assert.ok(!sent.includes('none'), JSON.stringify(sent));
  });
});

test('reasoning interleaved with parallel function calls goes back in the order it came', () => {
  const a = new ResponsesAssembler();
  const rs = (id: string) => ({ type: 'reasoning', id, summary: [], encrypted_content: `gAAAAB-${id}` });
  const fc = (n: number) => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'terminal', arguments: '{}' });
  const out = [rs('rs_1'), fc(1), rs('rs_2'), fc(2)];
  out.forEach((item, i) => a.push({ type: 'response.output_item.done', output_index: i, item } as never));
  a.push({ type: 'response.completed', response: { id: 'resp_2', model: 'gpt-5.5', usage: null } } as never);
  const r = a.result();
  assert.deepEqual(
    r.reasoning.map((b) => (b.type === 'openai_reasoning' ? b.followedBy : undefined)),
    ['call_1', 'call_2'],
  );
  const p = responsesPrompt(
    [
      { role: 'user', content: 'Two at once.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: r.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: c.arguments },
          item_id: c.itemId!,
        })),
        reasoning: r.reasoning,
      },
    ],
    [],
  );
  assert.deepEqual(
    p.input.map((i) => ('id' in i ? i.id : 'role' in i ? i.role : '')),
    ['user', 'rs_1', 'fc_1', 'rs_2', 'fc_2'],
  );
});
