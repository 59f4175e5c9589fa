// The live buffer holds back only what could begin a secret: a split secret is still masked, and
// ordinary text is not delayed a secret's length on every publish.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveBuffer, heldTail } from '../../src/live/live-buffer.js';
import { SECRET_MASK } from '../../src/security/redact.js';

const SECRET = 'tok-4f1c9a7e2b-8d3e';
const delta = (text: string) => ({ kind: 'model_delta' as const, text, step: 1 });
const texts = (b: LiveBuffer, final = false) =>
  b
    .drain(final)
    .map((i) => i.text)
    .join('');

test('heldTail: the longest end that begins a secret, or a key being written, and nothing else', () => {
  assert.equal(heldTail('plain words ', [SECRET]), 0);
  assert.equal(heldTail('the key is tok-4f', [SECRET]), 'tok-4f'.length);
  assert.equal(heldTail('ends in t', [SECRET]), 1);
  // A repeated prefix: the longest end that is a prefix counts ("aaa" of "aaab").
  assert.equal(heldTail('xaaa', ['aaab']), 3);
  // Never the whole secret (it is masked by then) and never past the text's start.
  assert.equal(heldTail('aaab', ['aaab']), 0);
  assert.equal(heldTail('aa', ['aaab']), 2);
  // A provider-style key being written; "risk" and "ask" are not one.
  assert.equal(heldTail('call sk-ab', []), 'sk-ab'.length);
  assert.equal(heldTail('a s', []), 1);
  assert.equal(heldTail('what a risk', []), 0);
  assert.equal(heldTail('ask', []), 0);
});

test('a secret split across deltas is masked; text around it is not held back', () => {
  const b = new LiveBuffer([SECRET]);
  b.push(delta('here it is: tok-4f1c'));
  assert.equal(texts(b), 'here it is: ', 'only the possible start of the secret waits');
  b.push(delta('9a7e2b-8d3e and more '));
  assert.equal(texts(b), `${SECRET_MASK} and more `);
  assert.ok(b.isEmpty);
});

test('held text that does not become a secret is released after a drain with nothing new', () => {
  const b = new LiveBuffer([SECRET]);
  b.push(delta('almost tok-4'));
  assert.equal(texts(b), 'almost ');
  assert.equal(texts(b), '', 'kept one drain');
  assert.equal(texts(b), 'tok-4');
  b.push(delta('last tok'));
  assert.equal(texts(b, true), 'last tok', 'a final drain keeps nothing');
});
