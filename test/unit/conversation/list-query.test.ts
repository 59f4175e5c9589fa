// `faheem list` is newest first on any server: ordered by the server when it can, else sorted here;
// times are shown one way everywhere (ISO 8601, UTC, to the second).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NEWEST_FIRST, isOrderRefused, newestFirst } from '../../../src/conversation/list-query.js';
import { shownTime } from '../../../src/core/text.js';

test('rows sort by start time, newest first; a tie by id, so the order never changes', () => {
  const rows = [
    { id: 'b', startTime: '2026-01-02T03:04:05.000Z' },
    { id: 'c', startTime: '2026-01-02T03:04:06.000Z' },
    { id: 'a', startTime: '2026-01-02T03:04:05.000Z' },
    { id: 'd', startTime: '2025-12-31T23:59:59.999Z' },
  ];
  assert.deepEqual(
    newestFirst(rows).map((r) => r.id),
    ['c', 'a', 'b', 'd'],
  );
  assert.deepEqual(
    rows.map((r) => r.id),
    ['b', 'c', 'a', 'd'],
    'the rows given are left as they were',
  );
});

test("a server's refusal of ORDER BY is told from other errors", () => {
  assert.equal(NEWEST_FIRST, 'ORDER BY StartTime DESC');
  assert.ok(isOrderRefused(new Error("3 INVALID_ARGUMENT: invalid query: operation is not supported: 'ORDER BY' clause")));
  const wrapped = new Error('Failed to list workflows', {
    cause: new Error("3 INVALID_ARGUMENT: invalid query: operation is not supported: 'ORDER BY' clause"),
  });
  assert.ok(isOrderRefused(wrapped), 'as the SDK wraps it');
  assert.ok(!isOrderRefused(new Error('14 UNAVAILABLE: connection refused')));
  assert.ok(!isOrderRefused(new Error("invalid query: unknown search attribute 'FaheemTenant'")));
});

test('a time is shown as ISO 8601 in UTC to the second; anything else as given', () => {
  assert.equal(shownTime('2026-01-02T03:04:05.678Z'), '2026-01-02T03:04:05Z');
  assert.equal(shownTime('2026-01-02T05:04:05+02:00'), '2026-01-02T03:04:05Z');
  assert.equal(shownTime('not a time'), 'not a time');
});
