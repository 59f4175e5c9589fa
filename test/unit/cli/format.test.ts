// `faheem events` lines: a reply's thinking (Anthropic's, the Responses API's summaries) on its own line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatEvent } from '../../../src/cli/format.js';

const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex
const base = { timestamp: '2026-12-02T10:00:00.000Z', source: 'agent' as const };

test("an action's reasoning summaries and a final reply's thinking show as thinking lines", () => {
  const item = { type: 'reasoning' as const, id: 'rs_1', summary: [{ type: 'summary_text' as const, text: 'Look first.' }] };
  const action = plain(
    formatEvent({
      ...base,
      index: 1,
      kind: 'action',
      tool: 'terminal',
      toolCallId: 'c1',
      arguments: { command: 'ls' },
      replyId: 'r1',
      reasoning: [{ type: 'openai_reasoning', item }],
    }),
  );
  assert.match(action, /thinking: Look first\.\n.*terminal ls/);
  const reply = plain(formatEvent({ ...base, index: 2, kind: 'message', text: 'Done.', thinking: 'All there.' }));
  assert.match(reply, /thinking: All there\.\n.*agent.*: Done\./);
  assert.doesNotMatch(plain(formatEvent({ ...base, index: 3, kind: 'message', text: 'Plain.' })), /thinking/);
});
