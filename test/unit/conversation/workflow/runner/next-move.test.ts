// src/conversation/workflow/runner/next-move.ts: the loop's decisions, and the order it asks the view in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConversationStatus } from '../../../../../src/core/types.js';
import { nextMove, type LoopView, type MoveFrom } from '../../../../../src/conversation/workflow/runner/next-move.js';

interface Facts {
  processesStopDue?: boolean;
  rewindPending?: boolean;
  status?: ConversationStatus;
  closeRequested?: boolean;
  isSubAgent?: boolean;
  runLimitReached?: boolean;
  versionMoveDue?: boolean;
  hibernationBound?: number;
}

/** A view over plain facts that notes which of its methods were asked, in order. */
function viewOf(facts: Facts): { view: LoopView; asked: string[] } {
  const asked: string[] = [];
  const view: LoopView = {
    processesStopDue: facts.processesStopDue ?? false,
    rewindPending: facts.rewindPending ?? false,
    status: facts.status ?? 'running',
    closeRequested: facts.closeRequested ?? false,
    isSubAgent: facts.isSubAgent ?? false,
    runLimitReached: () => (asked.push('runLimitReached'), facts.runLimitReached ?? false),
    versionMoveDue: () => (asked.push('versionMoveDue'), facts.versionMoveDue ?? false),
    hibernationBound: () => (asked.push('hibernationBound'), facts.hibernationBound),
  };
  return { view, asked };
}

const move = (facts: Facts, from: MoveFrom = 'top') => nextMove(viewOf(facts).view, from);

describe('the loop’s next move', () => {
  test('from the top: stop processes, then a rewind, then the run’s end, then a wait, then a turn', () => {
    assert.deepEqual(move({ processesStopDue: true, rewindPending: true }), { kind: 'stop-processes' });
    assert.deepEqual(move({ processesStopDue: true, rewindPending: true }, 'stopped-processes'), { kind: 'rewind' });
    assert.deepEqual(move({ rewindPending: true, runLimitReached: true }), { kind: 'rewind' });
    assert.deepEqual(move({ runLimitReached: true }), { kind: 'end', end: 'continue-as-new', moving: false });
    assert.deepEqual(move({ runLimitReached: true, versionMoveDue: true }), { kind: 'end', end: 'continue-as-new', moving: true });
    assert.deepEqual(move({ versionMoveDue: true, status: 'paused' }), { kind: 'end', end: 'continue-as-new', moving: true });
    assert.deepEqual(move({ status: 'paused' }), { kind: 'wait-idle' });
    assert.deepEqual(move({ status: 'paused', hibernationBound: 0 }), { kind: 'hibernate', bound: 0 });
    assert.deepEqual(move({ status: 'finished', hibernationBound: 60_000 }), { kind: 'hibernate', bound: 60_000 });
    assert.deepEqual(move({ status: 'paused', closeRequested: true }), { kind: 'end', end: 'closed', moving: false });
    assert.deepEqual(move({ status: 'running', closeRequested: true }), { kind: 'end', end: 'closed', moving: false });
    assert.deepEqual(move({ status: 'running' }), { kind: 'take-turn' });
  });
  test('after a wait: a rewind goes back to the top; otherwise a close, a turn, or a sub-agent’s end', () => {
    assert.deepEqual(move({ status: 'paused', rewindPending: true }, 'woke'), { kind: 'again' });
    assert.deepEqual(move({ status: 'paused', closeRequested: true }, 'woke'), { kind: 'end', end: 'closed', moving: false });
    assert.deepEqual(move({ status: 'running' }, 'woke'), { kind: 'take-turn' });
    // Woken by news that does not start a run (a message while paused): the top decides again.
    assert.deepEqual(move({ status: 'paused' }, 'woke'), { kind: 'again' });
    assert.deepEqual(move({ status: 'finished', isSubAgent: true }, 'woke'), { kind: 'end', end: 'sub-agent-done', moving: false });
    assert.deepEqual(move({ status: 'paused' }, 'idle-timed-out'), { kind: 'end', end: 'idle-timeout', moving: false });
  });
  test('after a turn: a sub-agent that ended ends its run; anything else goes back to the top', () => {
    for (const status of ['finished', 'error', 'stuck'] as const) {
      assert.deepEqual(move({ status, isSubAgent: true }, 'turn'), { kind: 'end', end: 'sub-agent-done', moving: false }, status);
      assert.deepEqual(move({ status }, 'turn'), { kind: 'again' }, status);
    }
    assert.deepEqual(move({ status: 'paused', isSubAgent: true }, 'turn'), { kind: 'again' });
    // Even with a close asked meanwhile: the top ends the run (after a stop or a rewind due first).
    assert.deepEqual(move({ status: 'running', closeRequested: true }, 'turn'), { kind: 'again' });
  });
  test('asks what may write a patch marker only where the loop always asked it, in its order', () => {
    const ask = (facts: Facts, from: MoveFrom = 'top') => {
      const { view, asked } = viewOf(facts);
      nextMove(view, from);
      return asked;
    };
    assert.deepEqual(ask({ rewindPending: true }), []);
    assert.deepEqual(ask({ processesStopDue: true }), []);
    assert.deepEqual(ask({ runLimitReached: true }), ['runLimitReached', 'versionMoveDue']);
    assert.deepEqual(ask({ status: 'running' }), ['runLimitReached', 'versionMoveDue']);
    assert.deepEqual(ask({ status: 'paused' }), ['runLimitReached', 'versionMoveDue', 'hibernationBound']);
    assert.deepEqual(ask({ status: 'paused', closeRequested: true }), ['runLimitReached', 'versionMoveDue']);
    for (const from of ['woke', 'turn', 'idle-timed-out'] as const) assert.deepEqual(ask({ status: 'paused' }, from), [], from);
  });
});
