import assert from 'node:assert/strict';
import { test } from 'node:test';
import { previousReplyTruncated, truncationVerdict } from '../../../../src/conversation/workflow/truncation.js';
import type { ConversationEvent } from '../../../../src/core/types.js';

const base = (index: number) => ({ index, timestamp: '2026-12-01T00:00:00.000Z' });
const user = (index: number): ConversationEvent => ({ ...base(index), kind: 'message', source: 'user', text: 'go' });
const agent = (index: number, truncated = false): ConversationEvent => ({
  ...base(index),
  kind: 'message',
  source: 'agent',
  text: 'words',
  ...(truncated ? { truncated: true as const } : {}),
});
const action = (index: number, replyId: string, truncated = false): ConversationEvent => ({
  ...base(index),
  kind: 'action',
  source: 'agent',
  tool: 'terminal',
  toolCallId: `c${index}`,
  arguments: {},
  replyId,
  ...(truncated ? { truncated: true as const } : {}),
});
const obs = (index: number): ConversationEvent => ({
  ...base(index),
  kind: 'observation',
  source: 'environment',
  tool: 'terminal',
  toolCallId: `c${index - 1}`,
  content: '',
  isError: false,
});

test('previousReplyTruncated: the newest reply since the user last wrote', () => {
  assert.equal(previousReplyTruncated([]), false);
  assert.equal(previousReplyTruncated([user(0)]), false);
  assert.equal(previousReplyTruncated([user(0), agent(1, true)]), true);
  assert.equal(previousReplyTruncated([user(0), agent(1, true), user(2)]), false, 'the user wrote since');
  assert.equal(previousReplyTruncated([user(0), action(1, 'r1', true), obs(2)]), true);
  // The cut mark is on the reply's first action; later actions of the reply do not carry it.
  assert.equal(previousReplyTruncated([user(0), action(1, 'r1', true), action(2, 'r1'), obs(3), obs(4)]), true);
  assert.equal(previousReplyTruncated([user(0), action(1, 'r1', true), obs(2), action(3, 'r2'), obs(4)]), false);
  assert.equal(previousReplyTruncated([user(0), agent(1, true), action(2, 'r2'), obs(3)]), false);
});

test('truncationVerdict: a cut text reply finishes, cut tool calls go on once, twice in a row is stuck', () => {
  assert.deepEqual(truncationVerdict(false, false), { kind: 'finish' });
  assert.deepEqual(truncationVerdict(true, false), { kind: 'retry' });
  for (const calls of [true, false]) {
    const v = truncationVerdict(calls, true);
    assert.equal(v.kind, 'stuck');
    assert.match(v.kind === 'stuck' ? v.reason : '', /LLM_MAX_OUTPUT_TOKENS/);
  }
});
