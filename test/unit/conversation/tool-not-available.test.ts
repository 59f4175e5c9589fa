import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toolNotAvailable } from '../../../src/conversation/tool-not-available.js';
import { checkMessage } from '../../../src/client/client.js';
import { InvalidRequestError } from '../../../src/core/errors.js';

test('one text for a tool the worker does not have, with what follows from it', () => {
  const base =
    'The tool "add" is not available: the worker on task queue q1 does not have it (start it with createWorker({ tools: [...] }) or `faheem worker --tools <module>`).';
  assert.equal(toolNotAvailable('add', 'q1'), base);
  assert.equal(toolNotAvailable('add', 'q1', 'The agent goes on without it.'), `${base} The agent goes on without it.`);
});

test('the client checks a message with the workflow\u2019s own rule', () => {
  assert.equal(checkMessage('hi'), 'hi');
  assert.throws(
    () => checkMessage('  '),
    (err: unknown) => err instanceof InvalidRequestError && err.message === 'message not sent: the message is empty',
  );
  assert.throws(
    () => checkMessage('x'.repeat(1_000_000)),
    (err: unknown) =>
      err instanceof InvalidRequestError &&
      /^message not sent: the message is longer than \d+ characters \(it has 1000000\)$/.test(err.message),
  );
});
