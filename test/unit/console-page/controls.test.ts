// The console's controls: which apply in which status (one table the buttons read).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONTROL_TABLE, enabledControls, type Control } from '../../../console-page/controls.js';
import { CONVERSATION_STATUSES } from '../../../src/core/types.js';

const on = (status: string | null, extra: { closed?: boolean; pendingMessages?: number } = {}) =>
  Object.entries(enabledControls({ status, closed: extra.closed ?? false, pendingMessages: extra.pendingMessages }))
    .filter(([, enabled]) => enabled)
    .map(([c]) => c as Control)
    .sort();

test('every status has a row', () => {
  assert.deepEqual(Object.keys(CONTROL_TABLE).sort(), [...CONVERSATION_STATUSES].sort());
});

test('Pause and Pause now only while running; Approve and Reject only while a confirmation waits', () => {
  assert.deepEqual(on('running'), ['close', 'pause', 'pauseNow', 'send']);
  assert.deepEqual(on('waiting_for_confirmation'), ['approve', 'close', 'reject', 'send']);
  for (const s of CONVERSATION_STATUSES.filter((s) => s !== 'running'))
    assert.ok(!on(s).includes('pause') && !on(s).includes('pauseNow'), s);
});

test('Resume while paused, idle or finished with messages waiting, or after an error or stuck', () => {
  assert.deepEqual(on('paused'), ['close', 'resume', 'send']);
  assert.deepEqual(on('idle'), ['close', 'send']);
  assert.deepEqual(on('idle', { pendingMessages: 2 }), ['close', 'resume', 'send']);
  assert.deepEqual(on('finished'), ['close', 'send']);
  assert.deepEqual(on('finished', { pendingMessages: 1 }), ['close', 'resume', 'send']);
  assert.deepEqual(on('error'), ['close', 'resume', 'send']);
  assert.deepEqual(on('stuck'), ['close', 'resume', 'send']);
});

test('a closed conversation has no control; an unknown status only Send and Close', () => {
  for (const s of [...CONVERSATION_STATUSES, null]) assert.deepEqual(on(s, { closed: true, pendingMessages: 3 }), [], String(s));
  assert.deepEqual(on(null), ['close', 'send']);
  assert.deepEqual(on('toString'), ['close', 'send']);
  assert.deepEqual(on('unknown'), ['close', 'send']);
});
