// src/workflows/status.ts: the status transitions as pure decisions (and the Web UI details, details.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConversationStatus } from '../../../src/types.js';
import { emptyMetrics } from '../../../src/types.js';
import { detailsText } from '../../../src/workflows/details.js';
import { PAUSABLE, pauseOutcome, runOutcome, statusAfterMessage } from '../../../src/workflows/status.js';

describe('status transitions', () => {
  const statuses: ConversationStatus[] = ['idle', 'running', 'paused', 'waiting_for_confirmation', 'finished', 'error', 'stuck'];
  test('a pause pauses only running or waiting conversations; before the start it is kept for it', () => {
    for (const s of statuses) {
      assert.equal(pauseOutcome(s, true), PAUSABLE.includes(s) ? 'pause' : 'ignore', s);
      assert.equal(pauseOutcome(s, false), PAUSABLE.includes(s) ? 'pause' : 'at-start', s);
    }
  });
  test('run: approves while waiting, goes back to waiting when paused with actions, starts a new run otherwise', () => {
    const base = { pendingActions: 0, pendingMessages: 0, childPaused: false };
    assert.deepEqual(runOutcome({ ...base, status: 'waiting_for_confirmation' }), { kind: 'approve' });
    assert.deepEqual(runOutcome({ ...base, status: 'paused', pendingActions: 2 }), { kind: 'back-to-confirmation' });
    assert.deepEqual(runOutcome({ ...base, status: 'paused' }), { kind: 'start', wasPaused: true });
    assert.deepEqual(runOutcome({ ...base, status: 'running' }), { kind: 'nothing' });
    assert.deepEqual(runOutcome({ ...base, status: 'running', childPaused: true }), { kind: 'resume-children' });
    assert.deepEqual(runOutcome({ ...base, status: 'finished' }), { kind: 'nothing' }, 'nothing new to work on');
    assert.deepEqual(runOutcome({ ...base, status: 'finished', pendingMessages: 1 }), { kind: 'start', wasPaused: false });
    for (const s of ['idle', 'error', 'stuck'] as const)
      assert.deepEqual(runOutcome({ ...base, status: s }), { kind: 'start', wasPaused: false }, s);
  });
  test('a message makes a finished or stuck conversation idle and leaves the others as they are', () => {
    for (const s of statuses) assert.equal(statusAfterMessage(s), s === 'finished' || s === 'stuck' ? 'idle' : s);
  });
  test('the Web UI details name the status, the step, the last action and the cost', () => {
    const text = detailsText({
      status: 'stuck',
      lastError: 'stuck: looping',
      iterations: 3,
      maxIterations: 50,
      runNumber: 2,
      lastAction: {
        index: 1,
        timestamp: '',
        kind: 'action',
        source: 'agent',
        tool: 'terminal',
        toolCallId: 'c',
        arguments: { command: 'make   test' },
        replyId: 'r',
      },
      waitingForHost: 'faheem-tools@h',
      pendingMessages: 1,
      children: [{ id: 'x.sub-1', status: 'running', cost: 0, task: 't' }],
      parentId: undefined,
      metrics: emptyMetrics(),
    });
    for (const part of [
      '**Status:** stuck — stuck: looping',
      '**Step:** 3 of 50 (run 2)',
      '`terminal` make test',
      'faheem-tools@h',
      '**Pending messages:** 1',
      '`x.sub-1` running',
      '$0.0000',
    ]) {
      assert.ok(text.includes(part), `${part} in:\n${text}`);
    }
    assert.ok(!text.includes('Parent'));
  });
});
