// Our events and live lines as ACP session updates: each thing shown once, whether it streamed live
// or comes from the durable record (a replay), with kinds, titles, locations, diffs and plans.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { UpdateMapper, editDiff, planEntries, toolCallView } from '../../../src/acp/updates.js';
import type { ConversationEvent } from '../../../src/core/types.js';
import type { LiveDelta } from '../../../src/live/types.js';

const ws = '/work/project';
const base = { timestamp: '2026-12-01T00:00:00Z' };
const call = { model: 'openai/gpt-4o-mini', promptTokens: 100, completionTokens: 20, cacheReadTokens: 0, cost: 0.5, latencyMs: 10 };
let offset = 0;
const line = (l: Omit<LiveDelta, 'live' | 'offset'>): LiveDelta => ({ live: true, offset: offset++, ...l });
const texts = (updates: SessionUpdate[], kind: SessionUpdate['sessionUpdate']) =>
  updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => ('content' in u && u.content && !Array.isArray(u.content) && u.content.type === 'text' ? u.content.text : ''))
    .join('');
const run = (m: UpdateMapper, items: (ConversationEvent | LiveDelta)[]) => items.flatMap((i) => m.map(i));

test('a streamed reply is shown as it streams; its event adds nothing, or only what the lines missed', () => {
  const m = new UpdateMapper({ workspace: ws });
  const updates = run(m, [
    line({ kind: 'model_delta', text: 'Hello ', step: 1, eventCount: 1 }),
    line({ kind: 'model_delta', text: 'wor', step: 1, eventCount: 1 }),
    { ...base, index: 1, source: 'agent', kind: 'message', text: 'Hello world.', call },
  ]);
  assert.deepEqual(
    updates.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => (u as { content: { text: string } }).content.text),
    ['Hello ', 'wor', 'ld.'],
  );
  assert.deepEqual(
    updates.find((u) => u.sessionUpdate === 'usage_update'),
    { sessionUpdate: 'usage_update', used: 120, size: 128_000, cost: { amount: 0.5, currency: 'USD' } },
  );
});

test('a replay shows user messages, replies, thinking and tool calls with their final status', () => {
  const m = new UpdateMapper({ workspace: ws, contextWindow: () => 1_000_000 });
  const updates = run(m, [
    { ...base, index: 0, source: 'user', kind: 'message', text: 'list files' },
    {
      ...base,
      index: 1,
      source: 'agent',
      kind: 'action',
      tool: 'terminal',
      toolCallId: 'c1',
      arguments: { command: 'ls -la' },
      replyId: 'r1',
      thought: 'Looking.',
      reasoning: [{ type: 'thinking', thinking: 'I should list.', signature: 's' }],
      call,
    },
    {
      ...base,
      index: 2,
      source: 'environment',
      kind: 'observation',
      tool: 'terminal',
      toolCallId: 'c1',
      content: 'a.txt',
      isError: false,
      exitCode: 0,
    },
    { ...base, index: 3, source: 'agent', kind: 'message', text: 'One file.', call },
  ]);
  assert.equal(texts(updates, 'user_message_chunk'), 'list files');
  assert.equal(texts(updates, 'agent_thought_chunk'), 'I should list.');
  assert.equal(texts(updates, 'agent_message_chunk'), 'Looking.One file.');
  const toolCall = updates.find((u) => u.sessionUpdate === 'tool_call');
  assert.deepEqual(toolCall, {
    sessionUpdate: 'tool_call',
    toolCallId: 'c1',
    title: 'Run: ls -la',
    kind: 'execute',
    status: 'pending',
    rawInput: { command: 'ls -la' },
    locations: [],
  });
  const done = updates.find((u) => u.sessionUpdate === 'tool_call_update');
  assert.deepEqual(done, {
    sessionUpdate: 'tool_call_update',
    toolCallId: 'c1',
    status: 'completed',
    content: [{ type: 'content', content: { type: 'text', text: 'a.txt' } }],
    rawOutput: { content: 'a.txt', isError: false, exitCode: 0 },
  });
  assert.equal((updates.filter((u) => u.sessionUpdate === 'usage_update').at(-1) as { cost: { amount: number } }).cost.amount, 1);
  assert.deepEqual(m.openToolCalls(), []);
});

test('a user message the client sent itself is not echoed; a refusal is remembered', () => {
  const m = new UpdateMapper({ workspace: ws });
  m.skipUserMessage(4);
  assert.deepEqual(m.map({ ...base, index: 4, source: 'user', kind: 'message', text: 'hi' }), []);
  const refused = m.map({ ...base, index: 5, source: 'environment', kind: 'refused', messageIndex: 4, reason: 'no secrets' });
  assert.match(texts(refused, 'agent_message_chunk'), /refused.*no secrets/);
  assert.equal(m.refused.get(4), 'no secrets');
});

test("a command's output shows as it comes, cut to its end; lines of a recorded call (a late follower's) are dropped", () => {
  const m = new UpdateMapper({ workspace: ws });
  m.map({
    ...base,
    index: 1,
    source: 'agent',
    kind: 'action',
    tool: 'terminal',
    toolCallId: 'c9',
    arguments: { command: 'make' },
    replyId: 'r',
    call,
  });
  const first = m.map(line({ kind: 'output_delta', text: 'building\n', toolCallId: 'c9' }));
  const second = m.map(line({ kind: 'output_delta', text: 'linking\n', toolCallId: 'c9' }));
  assert.deepEqual(first, [
    {
      sessionUpdate: 'tool_call_update',
      toolCallId: 'c9',
      status: 'in_progress',
      content: [{ type: 'content', content: { type: 'text', text: 'building\n' } }],
    },
  ]);
  assert.equal((second[0] as { content: { content: { text: string } }[] }).content[0]!.content.text, 'building\nlinking\n');
  assert.deepEqual(m.openToolCalls(), ['c9']);
  // The call's reply was event 1: a line of that call arriving now (come late) is old news.
  assert.deepEqual(m.map(line({ kind: 'model_delta', text: 'stale', step: 1, eventCount: 1 })), []);
  m.map({
    ...base,
    index: 2,
    source: 'environment',
    kind: 'observation',
    tool: 'terminal',
    toolCallId: 'c9',
    content: 'done',
    isError: true,
    exitCode: 2,
  });
  assert.deepEqual(m.map(line({ kind: 'output_delta', text: 'late\n', toolCallId: 'c9' })), [], 'after its result, nothing more');
});

test('a retried model call repeats nothing the client has seen', () => {
  const m = new UpdateMapper({ workspace: ws });
  const updates = run(m, [
    line({ kind: 'model_delta', text: 'Hello ', step: 1, eventCount: 1 }),
    line({ kind: 'retry', text: '', step: 1, eventCount: 1, attempt: 2 }),
    line({ kind: 'model_delta', text: 'Hel', step: 1, eventCount: 1 }),
    line({ kind: 'model_delta', text: 'lo there', step: 1, eventCount: 1 }),
    { ...base, index: 1, source: 'agent', kind: 'message', text: 'Hello there' },
  ]);
  assert.equal(texts(updates, 'agent_message_chunk'), 'Hello there');
});

test('tool kinds and titles a person can read, with file locations', () => {
  assert.deepEqual(toolCallView('file_editor', { command: 'view', path: 'src/a.ts', view_range: [10, 20] }, ws), {
    title: 'Read src/a.ts (lines 10–20)',
    kind: 'read',
    rawInput: { command: 'view', path: 'src/a.ts', view_range: [10, 20] },
    locations: [{ path: '/work/project/src/a.ts', line: 10 }],
    content: [],
  });
  assert.equal(toolCallView('file_editor', { command: 'str_replace', path: '/work/project/b.md' }, ws).title, 'Edit b.md');
  assert.equal(toolCallView('file_editor', { command: 'create', path: '/etc/x' }, ws).title, 'Create /etc/x');
  assert.equal(toolCallView('file_editor', { command: 'insert', path: 'b.md', insert_line: 3 }, ws).locations[0]?.line, 3);
  assert.equal(toolCallView('think', { thought: 'hmm' }, ws).kind, 'think');
  assert.equal(toolCallView('terminal', { command: 'C-c', is_input: true }, ws).title, 'Send input: C-c');
  assert.deepEqual(
    [toolCallView('mcp__github__search', {}, ws).title, toolCallView('mcp__github__search', {}, ws).kind],
    ['search (MCP github)', 'other'],
  );
  assert.equal(toolCallView('terminal', 'not json', ws).title, 'Run a command', 'malformed arguments still get a title');
});

test('edits as diffs, task lists as plans', () => {
  assert.deepEqual(editDiff({ command: 'str_replace', path: 'a.txt', old_str: 'x', new_str: 'y' }, ws), {
    type: 'diff',
    path: '/work/project/a.txt',
    oldText: 'x',
    newText: 'y',
  });
  assert.deepEqual(editDiff({ command: 'create', path: 'n.txt', file_text: 'new' }, ws), {
    type: 'diff',
    path: '/work/project/n.txt',
    oldText: null,
    newText: 'new',
  });
  assert.equal(editDiff({ command: 'view', path: 'n.txt' }, ws), undefined);
  assert.deepEqual(planEntries({ task_list: [{ title: 'a', status: 'done' }, { title: 'b' }, { nope: 1 }] }), [
    { content: 'a', priority: 'medium', status: 'completed' },
    { content: 'b', priority: 'medium', status: 'pending' },
  ]);
  const m = new UpdateMapper({ workspace: ws });
  const args = { command: 'plan', task_list: [{ title: 'a', status: 'in_progress' }] };
  m.map({ ...base, index: 1, source: 'agent', kind: 'action', tool: 'task_tracker', toolCallId: 't', arguments: args, replyId: 'r' });
  const after = m.map({
    ...base,
    index: 2,
    source: 'environment',
    kind: 'observation',
    tool: 'task_tracker',
    toolCallId: 't',
    content: 'ok',
    isError: false,
  });
  assert.deepEqual(after.at(-1), { sessionUpdate: 'plan', entries: [{ content: 'a', priority: 'medium', status: 'in_progress' }] });
});

/** A first step at events 1 and 2: a `think` action whose reply text is `thought`, and its observation. */
const thinkStep = (thought: string): ConversationEvent[] => [
  {
    ...base,
    index: 1,
    source: 'agent',
    kind: 'action',
    tool: 'think',
    toolCallId: 'k',
    arguments: { thought: 'x' },
    replyId: 'r',
    thought,
    call,
  },
  { ...base, index: 2, source: 'environment', kind: 'observation', tool: 'think', toolCallId: 'k', content: '', isError: false },
];

test("a later call's lines before an earlier call's events (a follower under load): each reply still shown once", () => {
  const m = new UpdateMapper({ workspace: ws });
  const updates = run(m, [
    line({ kind: 'model_delta', text: 'First.', step: 1, eventCount: 1 }),
    line({ kind: 'model_delta', text: 'Second.', step: 2, eventCount: 3 }),
    ...thinkStep('First.'),
    { ...base, index: 3, source: 'agent', kind: 'message', text: 'Second.', call },
  ]);
  assert.equal(texts(updates, 'agent_message_chunk'), 'First.Second.');
});

test("a final reply's lines before the first step's events (one core): the plan's text still comes first", () => {
  const m = new UpdateMapper({ workspace: ws });
  const updates = run(m, [
    { ...base, index: 0, source: 'user', kind: 'message', text: 'go' },
    line({ kind: 'model_delta', text: 'All ', step: 2, eventCount: 3 }),
    line({ kind: 'output_delta', text: 'ran\n', toolCallId: 'x' }),
    line({ kind: 'model_delta', text: 'done.', step: 2, eventCount: 3 }),
    ...thinkStep('First the plan.'),
    { ...base, index: 3, source: 'agent', kind: 'message', text: 'All done.', call },
  ]);
  assert.equal(texts(updates, 'user_message_chunk'), 'go');
  assert.equal(texts(updates, 'agent_message_chunk'), 'First the plan.All done.');
  // A line with no call behind a held one keeps its place: after the plan, before "done.".
  const at = (found: (u: SessionUpdate) => boolean) => updates.findIndex(found);
  const chunk = (t: string) => at((u) => u.sessionUpdate === 'agent_message_chunk' && texts([u], 'agent_message_chunk') === t);
  const output = at((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === 'x');
  assert.ok(chunk('First the plan.') < output && output < chunk('done.'), 'the command output between the plan and "done."');
});

test("a later call's lines wait for the earlier events: the text keeps the conversation's order", () => {
  const m = new UpdateMapper({ workspace: ws });
  const updates = run(m, [
    line({ kind: 'model_delta', text: 'Later ', step: 2, eventCount: 3 }),
    { ...base, index: 1, source: 'agent', kind: 'message', text: 'Earlier.', truncated: true, call },
    { ...base, index: 3, source: 'agent', kind: 'message', text: 'Later reply.', call },
  ]);
  assert.equal(texts(updates, 'agent_message_chunk'), 'Earlier.Later reply.');
});

test("a replay shows the Responses API's reasoning summaries, and a final reply's thinking, as thought chunks before the text", () => {
  const m = new UpdateMapper({ workspace: ws });
  const item = {
    type: 'reasoning' as const,
    id: 'rs_1',
    summary: [{ type: 'summary_text' as const, text: 'Check the tree first.' }],
    encrypted_content: 'enc',
  };
  const updates = run(m, [
    {
      ...base,
      index: 1,
      source: 'agent',
      kind: 'action',
      tool: 'terminal',
      toolCallId: 'c1',
      arguments: { command: 'ls' },
      replyId: 'r1',
      reasoning: [{ type: 'openai_reasoning', item, followedBy: 'c1' }],
      call,
    },
    { ...base, index: 2, source: 'agent', kind: 'message', text: 'Done.', thinking: 'All there.', call },
  ]);
  assert.equal(texts(updates, 'agent_thought_chunk'), 'Check the tree first.All there.');
  const kinds = updates.map((u) => u.sessionUpdate);
  assert.ok(kinds.lastIndexOf('agent_thought_chunk') < kinds.indexOf('agent_message_chunk'), kinds.join(', '));
});
