// src/conversation/workflow/event-log.ts: the event log a run holds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

describe('the event log a run holds', () => {
  test('a carried log with a gap: count, lookup, pages from an index, appends, compaction', async () => {
    const { EventLog } = await import('../../../../src/conversation/workflow/event-log.js');
    const ev = (index: number, kind = 'message') => ({ index, timestamp: '', source: 'user', kind, text: `e${index}` }) as never;
    const log = new EventLog([ev(0), ev(1), ev(7), ev(8), ev(9)]);
    assert.equal(log.count, 10);
    assert.deepEqual(log.get(1), ev(1) as unknown);
    assert.equal(log.get(4), undefined, 'dropped');
    assert.deepEqual(
      [...log.from(1)].map((e) => e.index),
      [1, 7, 8, 9],
    );
    assert.deepEqual(
      [...log.from(8)].map((e) => e.index),
      [8, 9],
    );
    log.append(ev(10));
    assert.equal(log.count, 11);
    assert.throws(() => log.append(ev(12)), /appended at 11/);
    assert.deepEqual(
      [...log.newestFirst()].map((e) => e.index),
      [10, 9, 8, 7, 1, 0],
    );
    const full = new EventLog([ev(0), ev(1), ev(2)]);
    assert.equal(full.held().length, 3);
    assert.equal(new EventLog().count, 0);
  });
});
