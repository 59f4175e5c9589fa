import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cut, oneLine } from '../../../src/core/text.js';

test('oneLine folds whitespace and cuts with an ellipsis', () => {
  assert.equal(oneLine('  a\n\tb  c ', 80), 'a b c');
  assert.equal(oneLine('abcdef', 6), 'abcdef');
  assert.equal(oneLine('abcdefg', 6), 'abcde…');
  assert.equal(oneLine('abcdefg', 6).length, 6);
});

test('cut keeps whitespace', () => {
  assert.equal(cut('a\nb', 10), 'a\nb');
  assert.equal(cut('a\nbcdef', 4), 'a\nb…');
});
