import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replyDeltas } from '../../../src/live/deltas.js';

test('each growth of the partial reply gives what is new: thinking, text, tool-call arguments', () => {
  const a = { text: 'He', thinking: 'hm', toolCalls: [] };
  assert.deepEqual(replyDeltas(undefined, a, 3), [
    { kind: 'thinking_delta', text: 'hm', step: 3 },
    { kind: 'model_delta', text: 'He', step: 3 },
  ]);
  const b = { text: 'Hello', thinking: 'hm', toolCalls: [{ id: 't1', name: 'terminal', arguments: '{"comm' }] };
  assert.deepEqual(replyDeltas(a, b, 3), [
    { kind: 'model_delta', text: 'llo', step: 3 },
    { kind: 'model_delta', text: '{"comm', step: 3, toolCallId: 't1', toolName: 'terminal' },
  ]);
  const c = { ...b, toolCalls: [{ id: 't1', name: 'terminal', arguments: '{"command":"ls"}' }] };
  assert.deepEqual(replyDeltas(b, c, 3), [{ kind: 'model_delta', text: 'and":"ls"}', step: 3, toolCallId: 't1', toolName: 'terminal' }]);
  assert.deepEqual(replyDeltas(c, c, 3), []);
});
