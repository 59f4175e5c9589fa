import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  answerDue,
  finishAsks,
  MAX_OUTPUT_TRIES,
  outputCheckText,
  outputTries,
} from '../../../../src/conversation/workflow/output-check.js';
import type { ConversationEvent } from '../../../../src/core/types.js';

let index = 0;
const at = '2026-12-06T00:00:00.000Z';
const user = (text: string): ConversationEvent => ({ index: index++, timestamp: at, kind: 'message', source: 'user', text });
const agent = (text: string): ConversationEvent => ({ index: index++, timestamp: at, kind: 'message', source: 'agent', text });
const check = (n: number): ConversationEvent => ({
  index: index++,
  timestamp: at,
  kind: 'message',
  source: 'environment',
  text: outputCheckText(['x'], n),
  outputCheck: { try: n, errors: ['x'] },
});

test('tries count the output checks since the last user message', () => {
  assert.equal(outputTries([user('a'), agent('prose'), check(1), agent('{}'), check(2)]), 2);
  assert.equal(outputTries([check(1), check(2), user('again'), agent('prose')]), 0, 'a new message starts again');
  assert.equal(outputTries([]), 0);
});

test("finish's asks for the answer are counted apart: they use none of the misses allowed", () => {
  const asked: ConversationEvent = {
    index: index++,
    timestamp: at,
    kind: 'message',
    source: 'environment',
    text: outputCheckText([], 0),
    outputCheck: { try: 0, errors: [] },
  };
  const events = [user('a'), asked, agent('prose'), check(1)];
  assert.equal(outputTries(events), 1);
  assert.equal(finishAsks(events), 1);
  assert.equal(finishAsks([asked, user('again')]), 0, 'a new message starts again');
});

test('the answer is due right after an output check, not once the model went on with tools', () => {
  assert.equal(answerDue([user('a'), agent('prose'), check(1)]), true);
  assert.equal(answerDue([user('a'), agent('prose')]), false);
  const action: ConversationEvent = {
    index: index++,
    timestamp: at,
    kind: 'action',
    source: 'agent',
    tool: 'terminal',
    toolCallId: 'c1',
    arguments: {},
    replyId: 'r',
  };
  assert.equal(answerDue([check(1), action]), false);
});

test('the text names the try, the limit and every error; with none it asks for the answer', () => {
  const text = outputCheckText(["the answer must have required property 'ok'", 'the answer/files must be integer'], 2);
  assert.match(text, new RegExp(`try 2 of ${MAX_OUTPUT_TRIES}`));
  assert.match(text, /- the answer must have required property 'ok'\n- the answer\/files must be integer/);
  assert.match(outputCheckText([], 0), /Give the final answer now/);
});
