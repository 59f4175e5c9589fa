// What a sink keeps while nobody follows, and how often it publishes while a line grows (pure).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { continuesLine, FLUSH_MAX_MS, FLUSH_MIN_MS, keepBacklog, lineKey, nextFlushDelay } from '../../../src/live/live-buffer.js';

test('the backlog keeps the step under way: lines before the newest step marker go, continuing lines merge', () => {
  const kept = keepBacklog(
    [{ kind: 'model_delta', text: 'old step', step: 1 }],
    [
      { kind: 'step_start', text: '', step: 2 },
      { kind: 'model_delta', text: 'Hel', step: 2 },
      { kind: 'model_delta', text: 'lo', step: 2 },
      { kind: 'output_delta', text: 'a', toolCallId: 'c1' },
    ],
  );
  assert.deepEqual(kept, [
    { kind: 'step_start', text: '', step: 2 },
    { kind: 'model_delta', text: 'Hello', step: 2 },
    { kind: 'output_delta', text: 'a', toolCallId: 'c1' },
  ]);
});

test('the backlog is bounded: a flood keeps its newest characters; a retry marker never merges', () => {
  let backlog = keepBacklog([], [{ kind: 'output_delta', text: 'x'.repeat(50), toolCallId: 'c' }], 20);
  backlog = keepBacklog(backlog, [{ kind: 'output_delta', text: 'tail', toolCallId: 'c' }], 20);
  assert.equal(backlog.length, 1);
  assert.ok(backlog[0]!.text.endsWith('x'.repeat(16) + 'tail'));
  assert.match(backlog[0]!.text, /characters not shown live/);
  const withRetry = keepBacklog(backlog, [
    { kind: 'retry', text: 'again', toolCallId: 'c', attempt: 2 },
    { kind: 'output_delta', text: 'new', toolCallId: 'c' },
  ]);
  assert.deepEqual(
    withRetry.slice(1).map((i) => i.kind),
    ['retry', 'output_delta'],
  );
});

test('a growing line is published less and less often, up to the bound; a new line soon again', () => {
  let d = FLUSH_MIN_MS;
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) seen.push((d = nextFlushDelay(d, true)));
  assert.deepEqual(
    seen,
    [...seen].sort((a, b) => a - b),
    'never shorter while the line grows',
  );
  assert.equal(seen[seen.length - 1], FLUSH_MAX_MS);
  assert.equal(nextFlushDelay(FLUSH_MAX_MS, false), FLUSH_MIN_MS);
  const line = { kind: 'model_delta' as const, text: 'a', step: 1 };
  assert.equal(continuesLine(lineKey(line), [line, { ...line, text: 'b' }]), true);
  assert.equal(continuesLine(lineKey(line), [{ ...line, step: 2 }]), false);
  assert.equal(continuesLine(undefined, [line]), false);
  assert.equal(continuesLine(lineKey(line), [{ kind: 'step_start', text: '', step: 1 }]), false);
});
