import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anthropicPrompt, MAX_CACHE_BREAKPOINTS, stableSchema, thinkingAllowed } from '../../../src/models/anthropic-messages.js';
import { buildMessages, TRUNCATED_NOTE } from '../../../src/conversation/workflow/prompt.js';
import type { ChatMessage, ConversationEvent, ToolSpec } from '../../../src/core/types.js';

const spec = (
  name: string,
  parameters: Record<string, unknown> = { type: 'object', properties: { b: { type: 'string' }, a: { type: 'number' } } },
): ToolSpec => ({
  name,
  description: `${name} tool`,
  parameters,
  runsIn: 'host',
  needsApproval: false,
});

const breakpoints = (p: ReturnType<typeof anthropicPrompt>) =>
  JSON.stringify([p.tools, p.system, p.messages]).split('"cache_control"').length - 1;

function transcript(steps: number): ConversationEvent[] {
  const events: ConversationEvent[] = [];
  let index = 0;
  const at = '2026-12-01T00:00:00.000Z';
  events.push({ kind: 'message', source: 'user', text: 'count down', index: index++, timestamp: at });
  for (let s = 0; s < steps; s++) {
    events.push({
      kind: 'action',
      source: 'agent',
      tool: 'terminal',
      toolCallId: `t${s}`,
      arguments: { command: `echo ${s}` },
      replyId: `r${s}`,
      index: index++,
      timestamp: at,
      reasoning: [{ type: 'thinking', thinking: `think ${s}`, signature: `sig${s}` }],
      ...(s === 0 ? { thought: 'Starting.' } : {}),
    });
    events.push({
      kind: 'observation',
      source: 'environment',
      tool: 'terminal',
      toolCallId: `t${s}`,
      content: `${s}`,
      isError: false,
      index: index++,
      timestamp: at,
    });
  }
  return events;
}

test('tool calls become tool_use after the thinking, results tool_result in user turns, roles alternate', () => {
  const p = anthropicPrompt(buildMessages(transcript(3), 'SYSTEM'), [spec('terminal')]);
  assert.equal(p.system[0]?.text, 'SYSTEM');
  assert.deepEqual(
    p.messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'],
  );
  const a0 = p.messages[1]!.content as { type: string }[];
  assert.deepEqual(
    a0.map((b) => b.type),
    ['thinking', 'text', 'tool_use'],
  );
  assert.deepEqual(
    (p.messages[2]!.content as { type: string }[]).map((b) => b.type),
    ['tool_result'],
  );
  assert.ok(thinkingAllowed(p.messages));
});

test('at most four breakpoints: last tool, system, the newest two user turns; prefix bytes stable call to call', () => {
  const tools = [spec('terminal'), spec('file_editor')];
  const before = anthropicPrompt(buildMessages(transcript(4), 'SYSTEM'), tools);
  const after = anthropicPrompt(buildMessages(transcript(5), 'SYSTEM'), tools);
  assert.equal(breakpoints(before), MAX_CACHE_BREAKPOINTS);
  assert.equal(breakpoints(after), MAX_CACHE_BREAKPOINTS);
  assert.ok(before.tools[1]!.cache_control && !before.tools[0]!.cache_control);
  // The previous call's newest turn is marked again in the next one, with the same bytes before it.
  const lastOfBefore = before.messages.length - 1;
  const strip = (v: unknown) => JSON.stringify(v, (k, x: unknown) => (k === 'cache_control' ? undefined : x));
  assert.equal(strip(after.messages.slice(0, lastOfBefore + 1)), strip(before.messages));
  const marked = (after.messages[lastOfBefore]!.content as { cache_control?: unknown }[]).at(-1)!.cache_control;
  assert.ok(marked, 'the previous newest turn keeps its breakpoint');
  // Without tools: still at most four.
  assert.ok(breakpoints(anthropicPrompt(buildMessages(transcript(6), 'S'), [])) <= MAX_CACHE_BREAKPOINTS);
});

test('consecutive turns of one role are merged; empty text is not sent; the prompt starts and ends with the user', () => {
  const chat: ChatMessage[] = [
    { role: 'system', content: 's' },
    { role: 'assistant', content: 'hello' },
    { role: 'user', content: 'a' },
    { role: 'user', content: '' },
    { role: 'assistant', content: 'done' },
  ];
  const p = anthropicPrompt(chat, []);
  assert.deepEqual(
    p.messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant', 'user'],
  );
  const merged = p.messages[2]!.content as { type: string; text: string }[];
  assert.deepEqual(
    merged.map((b) => b.text),
    ['a', '(empty)'],
  );
});

test('a tool-use turn without its thinking cannot continue with thinking on', () => {
  const events = transcript(1).map((e) => (e.kind === 'action' ? { ...e, reasoning: undefined } : e)) as ConversationEvent[];
  assert.equal(thinkingAllowed(anthropicPrompt(buildMessages(events, 'S'), []).messages), false);
});

test('schemas: keys sorted for stable bytes, property order kept', () => {
  const s = stableSchema({
    type: 'object',
    required: ['b'],
    properties: { b: { type: 'string', description: 'x' }, a: { type: 'number' } },
  });
  assert.equal(
    JSON.stringify(s),
    '{"properties":{"b":{"description":"x","type":"string"},"a":{"type":"number"}},"required":["b"],"type":"object"}',
  );
});

test('unparsable tool arguments are kept as text; a truncated reply is told to the model after its results', () => {
  const at = '2026-12-01T00:00:00.000Z';
  const events: ConversationEvent[] = [
    { kind: 'message', source: 'user', text: 'go', index: 0, timestamp: at },
    {
      kind: 'action',
      source: 'agent',
      tool: 'terminal',
      toolCallId: 't',
      arguments: '{"command": "ec',
      replyId: 'r',
      truncated: true,
      index: 1,
      timestamp: at,
    },
    {
      kind: 'observation',
      source: 'environment',
      tool: 'terminal',
      toolCallId: 't',
      content: 'bad args',
      isError: true,
      index: 2,
      timestamp: at,
    },
  ];
  const chat = buildMessages(events, 'S');
  assert.deepEqual(
    chat.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'user'],
  );
  assert.equal(chat.at(-1)!.content, TRUNCATED_NOTE);
  const p = anthropicPrompt(chat, []);
  const use = (p.messages[1]!.content as { type: string; input?: unknown }[]).find((b) => b.type === 'tool_use');
  assert.deepEqual(use?.input, { raw_arguments: '{"command": "ec' });
});
