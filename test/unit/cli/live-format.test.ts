import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LivePrinter, plainText } from '../../../src/cli/live-format.js';

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex

test('the reply grows on one line, and an event starts on a fresh line', () => {
  const p = new LivePrinter();
  let out = p.line({ live: true, kind: 'model_delta', text: 'Hello ', step: 1, offset: 1 });
  out += p.line({ live: true, kind: 'model_delta', text: 'world', step: 1, offset: 2 });
  out += p.beforeEvent();
  assert.equal(strip(out), 'Hello world\n');
  assert.equal(p.beforeEvent(), '');
});

test('a retry says the text above is void; output after a newline needs no extra one', () => {
  const p = new LivePrinter();
  let out = p.line({ live: true, kind: 'output_delta', text: 'line\n', toolCallId: 'c', offset: 1 });
  out += p.beforeEvent();
  out += p.line({ live: true, kind: 'model_delta', text: 'par', step: 2, offset: 2 });
  out += p.line({ live: true, kind: 'retry', text: 'started again', step: 2, attempt: 2, offset: 3 });
  assert.equal(strip(out), 'line\npar\n[started again]\n');
});

test('terminal control sequences from a command or the model are taken out', () => {
  assert.equal(plainText('a\x1b[2J\x1b]0;title\x07b\r\nc\x00'), 'ab\nc');
});

test("a tool call's arguments as they form print nothing: the action event shows the call", () => {
  const p = new LivePrinter();
  let out = p.line({ live: true, kind: 'model_delta', text: 'Listing. ', step: 1, offset: 1 });
  out += p.line({ live: true, kind: 'model_delta', text: '{"command": "ls"}', toolCallId: 'c1', toolName: 'terminal', step: 1, offset: 2 });
  out += p.beforeEvent();
  assert.equal(strip(out), 'Listing. \n');
  assert.doesNotMatch(strip(out), /terminal ←|command/);
});
