// src/conversation/workflow/status.ts: the status transitions as pure decisions (and the Web UI details, details.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConversationStatus } from '../../../../src/core/types.js';
import { emptyMetrics } from '../../../../src/core/types.js';
import { detailsText } from '../../../../src/conversation/workflow/details.js';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CONVERSATION_STATUSES } from '../../../../src/core/types.js';
import {
  isTransition,
  PAUSABLE,
  pauseOutcome,
  runOutcome,
  statusAfterMessage,
  TRANSITIONS,
} from '../../../../src/conversation/workflow/status.js';

const HISTORIES = path.join(import.meta.dirname, '..', '..', '..', 'histories');

/** The statuses a recorded history's run set, in order (its `ConversationStatus` search attribute upserts). */
function statusesOf(history: { events?: Record<string, unknown>[] }): ConversationStatus[] {
  const seen: ConversationStatus[] = [];
  for (const e of history.events ?? []) {
    const upsert = e.upsertWorkflowSearchAttributesEventAttributes as
      { searchAttributes?: { indexedFields?: Record<string, { data?: string }> } } | undefined;
    const data = upsert?.searchAttributes?.indexedFields?.ConversationStatus?.data;
    if (data) seen.push(JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as ConversationStatus);
  }
  return seen;
}

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
  test('the transition table names every status, and no status as its own change', () => {
    assert.deepEqual(Object.keys(TRANSITIONS).sort(), [...CONVERSATION_STATUSES].sort());
    for (const [from, tos] of Object.entries(TRANSITIONS)) assert.ok(!tos.includes(from as ConversationStatus), from);
    assert.ok(!isTransition('idle', 'finished'), 'a conversation never finishes without running');
    assert.ok(isTransition('running', 'running'), 'the same status is no change');
  });
  test("users' decisions (pause, run or resume, approve, a message) change the status only along the table", () => {
    const base = { pendingActions: 0, pendingMessages: 1, childPaused: false };
    for (const s of statuses) {
      if (pauseOutcome(s, true) === 'pause') assert.ok(isTransition(s, 'paused'), `pause from ${s}`);
      for (const pendingActions of [0, 2]) {
        const run = runOutcome({ ...base, status: s, pendingActions });
        const to =
          run.kind === 'start' || run.kind === 'approve' ? 'running' : run.kind === 'back-to-confirmation' ? 'waiting_for_confirmation' : s;
        assert.ok(isTransition(s, to), `run from ${s} (${run.kind}) → ${to}`);
      }
      assert.ok(isTransition(s, statusAfterMessage(s)), `a message in ${s}`);
      assert.ok(isTransition(s, 'paused'), `a rewind from ${s}`);
    }
  });
  test('every recorded history changes its status only along the table', () => {
    const files = readdirSync(HISTORIES).filter((f) => f.endsWith('.json'));
    let changes = 0;
    const off: string[] = [];
    for (const f of files) {
      const seen = statusesOf(JSON.parse(readFileSync(path.join(HISTORIES, f), 'utf8')) as { events?: Record<string, unknown>[] });
      for (let i = 1; i < seen.length; i++) {
        const [from, to] = [seen[i - 1]!, seen[i]!];
        if (from === to) continue;
        changes++;
        if (!isTransition(from, to)) off.push(`${f}: ${from} → ${to}`);
      }
    }
    assert.ok(changes > 300, `found ${changes} changes of status in ${files.length} histories`);
    assert.deepEqual(off, []);
  });
  test('the check reads a history as the server records it', () => {
    const upsert = (status: string) => ({
      upsertWorkflowSearchAttributesEventAttributes: {
        searchAttributes: { indexedFields: { ConversationStatus: { data: Buffer.from(JSON.stringify(status)).toString('base64') } } },
      },
    });
    assert.deepEqual(statusesOf({ events: [upsert('idle'), {}, upsert('running'), upsert('finished')] }), ['idle', 'running', 'finished']);
    assert.ok(!isTransition('idle', 'finished'));
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
