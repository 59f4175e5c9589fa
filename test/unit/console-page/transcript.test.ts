// The console's transcript: events and live lines folded into blocks (the page renders these as text).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyItem, buildBlocks, emptyTranscript, fileEditDiff, type StreamItem } from '../../../console-page/transcript.js';
import type { ConversationEvent } from '../../../src/core/types/public.js';

const t = '2026-01-01T10:00:00.000Z';
const fold = (items: StreamItem[]) => items.reduce(applyItem, emptyTranscript());
const user = (index: number, text: string): ConversationEvent => ({ index, timestamp: t, source: 'user', kind: 'message', text });
const agent = (index: number, text: string): ConversationEvent => ({ index, timestamp: t, source: 'agent', kind: 'message', text });
const live = (offset: number, kind: 'model_delta' | 'thinking_delta' | 'output_delta' | 'retry', text: string, more: object = {}) =>
  ({ live: true, kind, text, offset, ...more }) as StreamItem;

test('a streamed reply shows as it comes, and the landing event replaces it', () => {
  let s = fold([
    user(0, 'hi'),
    live(0, 'thinking_delta', 'hmm', { step: 1 }),
    live(1, 'model_delta', 'Hel', { step: 1 }),
    live(2, 'model_delta', 'lo', { step: 1 }),
  ]);
  const streaming = buildBlocks(s).at(-1);
  assert.deepEqual(streaming && { ...streaming }, { type: 'streaming', key: 'live1', text: 'Hello', thinking: 'hmm', tools: [] });
  assert.equal(s.liveOffset, 2);
  s = applyItem(s, agent(1, 'Hello'));
  const blocks = buildBlocks(s);
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['message', 'message'],
  );
  // A late line of the landed step does not bring the streamed text back.
  s = applyItem(s, live(3, 'model_delta', 'lo', { step: 1 }));
  assert.equal(buildBlocks(s).length, 2);
  // The next step streams again.
  s = applyItem(s, live(4, 'model_delta', 'Next', { step: 2 }));
  assert.equal(buildBlocks(s).at(-1)?.type, 'streaming');
});

test('a retry drops the partial text of the lost attempt', () => {
  const s = fold([
    live(0, 'model_delta', 'The answer is 4', { step: 1 }),
    live(1, 'retry', '', { step: 1, attempt: 2 }),
    live(2, 'model_delta', 'The', { step: 1 }),
  ]);
  const b = buildBlocks(s).at(-1);
  assert.ok(b?.type === 'streaming');
  assert.equal(b.text, 'The');
});

test("a running command's output shows under its call until the observation lands; a retried command starts over", () => {
  const action: ConversationEvent = {
    index: 0,
    timestamp: t,
    source: 'agent',
    kind: 'action',
    tool: 'terminal',
    toolCallId: 'c1',
    replyId: 'r1',
    arguments: { command: 'npm test' },
  };
  let s = fold([
    action,
    live(0, 'output_delta', 'line 1\n', { toolCallId: 'c1' }),
    live(1, 'output_delta', 'line 2\n', { toolCallId: 'c1' }),
  ]);
  let tool = buildBlocks(s)[0];
  assert.ok(tool?.type === 'tool');
  assert.equal(tool.title, '$ npm test');
  assert.equal(tool.output, 'line 1\nline 2\n');
  assert.equal(tool.running, true);
  s = applyItem(s, live(2, 'retry', '', { toolCallId: 'c1', attempt: 2 }));
  s = applyItem(s, live(3, 'output_delta', 'again\n', { toolCallId: 'c1' }));
  tool = buildBlocks(s)[0];
  assert.ok(tool?.type === 'tool');
  assert.equal(tool.output, 'again\n');
  s = applyItem(s, {
    index: 1,
    timestamp: t,
    source: 'environment',
    kind: 'observation',
    tool: 'terminal',
    toolCallId: 'c1',
    content: 'all passed',
    isError: false,
    exitCode: 0,
  });
  tool = buildBlocks(s)[0];
  assert.ok(tool?.type === 'tool');
  assert.equal(tool.output, 'all passed');
  assert.equal(tool.running, false);
  assert.equal(tool.exitCode, 0);
  assert.deepEqual(s.outputs, {});
});

test('events seen already (a reconnect) are not shown twice; the next index and offset resume the stream', () => {
  let s = fold([user(0, 'a'), agent(1, 'b')]);
  s = applyItem(s, user(0, 'a'));
  s = applyItem(s, agent(1, 'b'));
  assert.equal(s.events.length, 2);
  assert.equal(s.nextIndex, 2);
  s = applyItem(s, { end: true, closed: true });
  assert.equal(s.events.length, 2);
});

test('thoughts go in their own block; file edits become diffs; model text stays text', () => {
  const s = fold([
    {
      index: 0,
      timestamp: t,
      source: 'agent',
      kind: 'action',
      tool: 'file_editor',
      toolCallId: 'c1',
      replyId: 'r1',
      thought: '<b>not bold</b>',
      reasoning: [{ type: 'thinking', thinking: 'let me see', signature: 's' }],
      arguments: { command: 'str_replace', path: 'a.py', old_str: 'x = 1', new_str: 'x = 2\ny = 3' },
    },
  ]);
  const blocks = buildBlocks(s);
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['thinking', 'message', 'tool'],
  );
  assert.ok(blocks[1]?.type === 'message' && blocks[1].text === '<b>not bold</b>');
  const tool = blocks[2];
  assert.ok(tool?.type === 'tool');
  assert.equal(tool.title, 'str_replace a.py');
  // Before the edit has landed, the diff has no line numbers (the fragment's own would mislead).
  assert.deepEqual(tool.diff, [
    { sign: '@', text: '@@ a.py' },
    { sign: '-', text: 'x = 1' },
    { sign: '+', text: 'x = 2' },
    { sign: '+', text: 'y = 3' },
  ]);
  // Landed: the observation's snippet says where, and the hunk header says so.
  const landed = buildBlocks(
    applyItem(s, {
      index: 1,
      timestamp: t,
      source: 'environment',
      kind: 'observation',
      tool: 'file_editor',
      toolCallId: 'c1',
      content: 'Edited a.py.\n     4\ta\n     5\tb\n     6\timport os\n     7\tx = 2\n     8\ty = 3\n     9\tz',
      isError: false,
    }),
  ).at(-1);
  assert.ok(landed?.type === 'tool');
  assert.equal(landed.diff?.[0]?.text, '@@ -7,1 +7,2 @@ a.py');
  // A failed edit changed nothing: no diff, its error shows.
  const failed = buildBlocks(
    applyItem(s, {
      index: 1,
      timestamp: t,
      source: 'environment',
      kind: 'observation',
      tool: 'file_editor',
      toolCallId: 'c1',
      content: '"old_str" does not occur in a.py.',
      isError: true,
    }),
  ).at(-1);
  assert.ok(failed?.type === 'tool');
  assert.equal(failed.diff, undefined);
  assert.equal(failed.output, '"old_str" does not occur in a.py.');
  assert.deepEqual(fileEditDiff({ command: 'create', path: 'n', file_text: 'a\nb\n' }), [
    { sign: '@', text: '@@ -0,0 +1,2 @@ n' },
    { sign: '+', text: 'a' },
    { sign: '+', text: 'b' },
  ]);
  // Lines both sides share are context; only what changed is marked.
  assert.deepEqual(
    fileEditDiff(
      { command: 'str_replace', path: 'p', old_str: 'a\nb\nc', new_str: 'a\nB\nc' },
      'Edited p.\n     7\tq\n     8\tr\n     9\ts\n    10\ta\n    11\tB\n    12\tc\n    13\tt',
    ),
    [
      { sign: '@', text: '@@ -10,3 +10,3 @@ p' },
      { sign: ' ', text: 'a' },
      { sign: '-', text: 'b' },
      { sign: '+', text: 'B' },
      { sign: ' ', text: 'c' },
    ],
  );
  assert.deepEqual(fileEditDiff({ command: 'insert', path: 'p', insert_line: 4, new_str: 'z' }), [
    { sign: '@', text: '@@ -4,0 +5,1 @@ p' },
    { sign: '+', text: 'z' },
  ]);
  // A replacement inside a line shows as whole lines of the file (from the snippet); the same text
  // earlier in the context is not taken for it.
  assert.deepEqual(
    fileEditDiff(
      { command: 'str_replace', path: 'g.py', old_str: 'Hello', new_str: 'Hi' },
      'Edited g.py.\n     5\tprint("Hi")\n     6\tx\n     7\ty\n     8\t    return f"Hi, {name}"\n     9\tz',
    ),
    [
      { sign: '@', text: '@@ -8,1 +8,1 @@ g.py' },
      { sign: '-', text: '    return f"Hello, {name}"' },
      { sign: '+', text: '    return f"Hi, {name}"' },
    ],
  );
  // Markup in a diff is text like any other.
  assert.deepEqual(fileEditDiff({ command: 'create', path: '<p>', file_text: '<script>x</script>' })?.[1], {
    sign: '+',
    text: '<script>x</script>',
  });
  assert.equal(fileEditDiff({ command: 'view', path: 'n' }), undefined);
  assert.equal(fileEditDiff('garbage'), undefined);
});

test('no streaming box is left once a call has ended, however late its live lines come', () => {
  const action: ConversationEvent = {
    index: 1,
    timestamp: t,
    source: 'agent',
    kind: 'action',
    tool: 'finish',
    toolCallId: 'c1',
    replyId: 'r1',
    arguments: { message: 'done' },
  };
  const finished: ConversationEvent = { index: 3, timestamp: t, source: 'environment', kind: 'status', status: 'finished' };
  // Opening a finished conversation: every event first, then the live stream from its start.
  let s = fold([
    user(0, 'hi'),
    action,
    finished,
    live(0, 'model_delta', 'Do', { step: 1, eventCount: 1 }),
    live(1, 'model_delta', 'ne', { step: 1, eventCount: 1 }),
  ]);
  assert.ok(!buildBlocks(s).some((b) => b.type === 'streaming'));
  // The reply landed before any of its lines were seen: they come late, and stay out.
  s = fold([user(0, 'hi'), agent(1, 'Hello'), live(0, 'model_delta', 'Hel', { step: 1, eventCount: 1 })]);
  assert.ok(!buildBlocks(s).some((b) => b.type === 'streaming'));
  // A call cut by a pause: its late lines too.
  s = fold([
    user(0, 'hi'),
    live(0, 'model_delta', 'Par', { step: 1, eventCount: 1 }),
    { index: 1, timestamp: t, source: 'user', kind: 'pause', now: false },
    live(1, 'model_delta', 'tial', { step: 1, eventCount: 1 }),
  ]);
  assert.ok(!buildBlocks(s).some((b) => b.type === 'streaming'));
  // The next call (it began after those events) streams.
  s = applyItem(s, live(2, 'model_delta', 'Again', { step: 1, eventCount: 3 }));
  const last = buildBlocks(s).at(-1);
  assert.ok(last?.type === 'streaming' && last.text === 'Again');
  // A retry of an ended call brings nothing back either.
  s = applyItem(s, agent(3, 'Again and done'));
  s = applyItem(s, live(3, 'retry', '', { step: 1, eventCount: 3, attempt: 2 }));
  assert.ok(!buildBlocks(s).some((b) => b.type === 'streaming'));
});

test('errors and status changes are their own blocks', () => {
  const s = fold([
    { index: 0, timestamp: t, source: 'environment', kind: 'error', message: 'model call failed' },
    { index: 1, timestamp: t, source: 'environment', kind: 'status', status: 'paused', reason: 'budget' },
    { index: 2, timestamp: t, source: 'user', kind: 'pause', now: true },
  ]);
  assert.deepEqual(
    buildBlocks(s).map((b) => [b.type, 'text' in b ? b.text : '']),
    [
      ['error', 'model call failed'],
      ['note', 'status → paused (budget)'],
      ['note', 'paused (now)'],
    ],
  );
});

test("a final reply's thinking (summaries of the Responses API, Anthropic's thinking) shows in a block of its own before it", () => {
  const blocks = buildBlocks(
    fold([{ index: 0, timestamp: t, source: 'agent', kind: 'message', text: 'Done.', thinking: '<i>weighed</i>' }]),
  );
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['thinking', 'message'],
  );
  assert.ok(blocks[0]?.type === 'thinking' && blocks[0].text === '<i>weighed</i>');
});
