import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnthropicAssembler, OpenAIAssembler, type PartialReply } from '../../../src/models/stream.js';
import { cacheUsage, prefixBlocks, refusal, scriptedSignature } from '../../../src/testing/scripted-anthropic.js';

test('Anthropic events: thinking with signature, text, tool input split mid-string, cumulative usage, max_tokens', () => {
  const seen: PartialReply[] = [];
  const a = new AnthropicAssembler((p) => seen.push(p));
  const events = [
    {
      type: 'message_start',
      message: {
        id: 'm1',
        model: 'claude-x',
        usage: { input_tokens: 10, cache_read_input_tokens: 500, cache_creation_input_tokens: 20, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm ' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'ok' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'SIG' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'ENC' } },
    { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Hel' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'lo' } },
    { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'tu', name: 'terminal', input: {} } },
    { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"command": "ec' } },
    { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: 'ho hi"}' } },
    { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 42 } },
    { type: 'message_stop' },
  ];
  for (const e of events) a.push(e as never);
  const r = a.result();
  assert.equal(r.text, 'Hello');
  assert.deepEqual(r.toolCalls, [{ id: 'tu', name: 'terminal', arguments: '{"command": "echo hi"}' }]);
  assert.deepEqual(r.reasoning, [
    { type: 'thinking', thinking: 'hmm ok', signature: 'SIG' },
    { type: 'redacted_thinking', data: 'ENC' },
  ]);
  assert.deepEqual([r.inputTokens, r.cacheReadTokens, r.cacheWriteTokens, r.outputTokens], [10, 500, 20, 42]);
  assert.equal(r.truncated, true);
  assert.equal(r.complete, true);
  assert.ok(
    seen.some((p) => p.toolCalls[0]?.arguments === '{"command": "ec'),
    'the partial reply shows the fragment',
  );
  assert.equal(seen.find((p) => p.thinking === 'hmm ')?.text, '');
});

test('OpenAI chunks: tool-call fragments by index, usage with cached tokens, finish length', () => {
  const o = new OpenAIAssembler();
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'c1',
    model: 'gpt',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  o.push(chunk({ role: 'assistant', content: 'Hi ' }) as never);
  o.push(chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'terminal', arguments: '{"comm' } }] }) as never);
  o.push(chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'think', arguments: '' } }] }) as never);
  o.push(chunk({ tool_calls: [{ index: 0, function: { arguments: 'and":"ls"}' } }] }) as never);
  o.push(chunk({}, 'length') as never);
  o.push({
    id: 'c1',
    model: 'gpt',
    choices: [],
    usage: { prompt_tokens: 1000, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 600 } },
  } as never);
  const r = o.result();
  assert.equal(r.text, 'Hi ');
  assert.deepEqual(
    r.toolCalls.map((c) => [c.id, c.name, c.arguments]),
    [
      ['a', 'terminal', '{"command":"ls"}'],
      ['b', 'think', ''],
    ],
  );
  assert.deepEqual([r.inputTokens, r.cacheReadTokens, r.outputTokens, r.truncated, r.complete], [400, 600, 7, true, true]);
});

test('scripted cache: a prefix is read only when an earlier request wrote those exact bytes', () => {
  const seen = new Set<string>();
  const big = 'x'.repeat(8000);
  const body = (turns: string[]) => ({
    model: 'm',
    max_tokens: 100,
    system: [{ type: 'text', text: big, cache_control: { type: 'ephemeral' } }],
    messages: turns.map((t, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: [{ type: 'text', text: t, ...(i === turns.length - 1 ? { cache_control: { type: 'ephemeral' } } : {}) }],
    })),
  });
  const first = cacheUsage(prefixBlocks(body(['a'])), seen, {});
  assert.equal(first.cache_read_input_tokens, 0);
  assert.ok(first.cache_creation_input_tokens > 2000);
  const second = cacheUsage(prefixBlocks(body(['a', 'b', 'c'])), seen, {});
  assert.equal(second.cache_read_input_tokens, first.cache_creation_input_tokens, "the first request's whole prefix is read");
  // A changed system prompt (a timestamp in it, say) reads nothing.
  const changed = body(['a', 'b', 'c']);
  changed.system[0]!.text = `${big}!`;
  assert.equal(cacheUsage(prefixBlocks(changed), seen, {}).cache_read_input_tokens, 0);
});

test('scripted refusals: more than four breakpoints, a dropped thinking block, a forged signature', () => {
  const cc = { cache_control: { type: 'ephemeral' } };
  const five = {
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: [1, 2, 3, 4, 5].map((n) => ({ type: 'text', text: `${n}`, ...cc })) }],
  };
  assert.match(refusal(five as never) ?? '', /maximum of 4 blocks/);
  const use = { type: 'tool_use', id: 't', name: 'x', input: {} };
  const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] };
  const thinking = { type: 'enabled', budget_tokens: 1024 };
  const dropped = {
    model: 'm',
    max_tokens: 2048,
    thinking,
    messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [use] }, result],
  };
  assert.match(refusal(dropped as never) ?? '', /Expected `thinking` or `redacted_thinking`/);
  const forged = {
    ...dropped,
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'a', signature: 'nope' }, use] },
      result,
    ],
  };
  assert.match(refusal(forged as never) ?? '', /Invalid `signature`/);
  const good = {
    ...dropped,
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'a', signature: scriptedSignature('a') }, use] },
      result,
    ],
  };
  assert.equal(refusal(good as never), undefined);
});
