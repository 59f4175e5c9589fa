import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveBuffer, secretPrefixAtEnd } from '../../../src/live/live-buffer.js';
import { SECRET_MASK } from '../../../src/security/redact.js';

const SECRET = 'hunter2-very-secret';

test('deltas that continue one another coalesce into one line a drain; others stay in order', () => {
  const b = new LiveBuffer([]);
  b.push({ kind: 'model_delta', text: 'Hel', step: 1 });
  b.push({ kind: 'model_delta', text: 'lo', step: 1 });
  b.push({ kind: 'output_delta', text: 'a\n', toolCallId: 'c1' });
  b.push({ kind: 'output_delta', text: 'b\n', toolCallId: 'c1' });
  b.push({ kind: 'output_delta', text: 'x', toolCallId: 'c2' });
  assert.deepEqual(b.drain(), [
    { kind: 'model_delta', text: 'Hello', step: 1 },
    { kind: 'output_delta', text: 'a\nb\n', toolCallId: 'c1' },
    { kind: 'output_delta', text: 'x', toolCallId: 'c2' },
  ]);
  assert.deepEqual(b.drain(), []);
  assert.ok(b.isEmpty);
});

test('a retry marker is a barrier: nothing merges across it', () => {
  const b = new LiveBuffer([]);
  b.push({ kind: 'model_delta', text: 'lost ', step: 1 });
  b.push({ kind: 'retry', text: 'again', step: 1, attempt: 2 });
  b.push({ kind: 'model_delta', text: 'kept', step: 1 });
  assert.deepEqual(
    b.drain().map((i) => [i.kind, i.text]),
    [
      ['model_delta', 'lost '],
      ['retry', 'again'],
      ['model_delta', 'kept'],
    ],
  );
});

test('a secret is masked even when it arrives split across two deltas and two drains', () => {
  const b = new LiveBuffer([SECRET]);
  b.push({ kind: 'output_delta', text: `token=${SECRET.slice(0, 7)}`, toolCallId: 'c' });
  const first = b.drain();
  b.push({ kind: 'output_delta', text: `${SECRET.slice(7)} done\n`, toolCallId: 'c' });
  const rest = [...b.drain(), ...b.drain(true)];
  const all = [...first, ...rest].map((i) => i.text).join('');
  assert.ok(!all.includes(SECRET), all);
  assert.ok(!all.includes(SECRET.slice(0, 7)) || !all.includes(SECRET.slice(7)), all);
  assert.equal(all, `token=${SECRET_MASK} done\n`);
});

test('text held back for a possible secret is released after a quiet drain, and at the end', () => {
  const b = new LiveBuffer([SECRET]);
  b.push({ kind: 'model_delta', text: 'a hunt', step: 1 });
  assert.deepEqual(
    b.drain().map((i) => i.text),
    ['a '],
    'only what could begin the secret waits',
  );
  assert.deepEqual(
    b.drain().map((i) => i.text),
    ['hunt'],
  );
  b.push({ kind: 'model_delta', text: 'no secret here', step: 1 });
  assert.deepEqual(
    b.drain().map((i) => i.text),
    ['no secret here'],
    'nothing waits when nothing could begin a secret',
  );
  b.push({ kind: 'model_delta', text: 'hunter', step: 1 });
  assert.deepEqual(b.drain(), []);
  assert.deepEqual(
    b.drain(true).map((i) => i.text),
    ['hunter'],
  );
});

test('a flood is cut to its newest part, saying how much was left out', () => {
  const b = new LiveBuffer([], 100);
  b.push({ kind: 'output_delta', text: 'x'.repeat(1_000) + 'END', toolCallId: 'c' });
  const [line] = b.drain();
  assert.ok(line);
  assert.match(line.text, /^\[… 903 characters not shown live …\]\n/);
  assert.ok(line.text.endsWith('END'));
});

test('secretPrefixAtEnd finds the longest end of the text that begins a secret', () => {
  assert.equal(secretPrefixAtEnd('abc hun', [SECRET]), 3);
  assert.equal(secretPrefixAtEnd('abc', [SECRET]), 0);
  assert.equal(secretPrefixAtEnd('x' + SECRET.slice(0, -1), [SECRET, 'xy']), SECRET.length - 1);
});

test('a provider key split across two pieces is masked whole, not half', () => {
  const key = 'sk-proj-abcdefghijklmnop1234';
  const b = new LiveBuffer([]);
  b.push({ kind: 'output_delta', text: `KEY=${key.slice(0, 12)}`, toolCallId: 'c' });
  const first = b.drain();
  b.push({ kind: 'output_delta', text: `${key.slice(12)}\n`, toolCallId: 'c' });
  const all = [...first, ...b.drain(), ...b.drain(true)].map((i) => i.text).join('');
  assert.equal(all, `KEY=${SECRET_MASK}\n`);
});
