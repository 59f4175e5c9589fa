// A failed model call, told: its cause in words, the next attempt and when, and a partial reply
// dropped only when there was one; the worker's one log line per failed attempt; the worker's model
// in its identity.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import OpenAI from 'openai';
import { networkReason } from '../../../src/models/client.js';
import { nextRetry, retryLine, spokenDelay } from '../../../src/models/retry-note.js';
import { modelOfIdentity, workerIdentity } from '../../../src/models/worker-model.js';
import { MODEL_CALL } from '../../../src/conversation/workflow/activity-options.js';
import { activityFailureLine } from '../../../src/worker/worker-log.js';

test("the next retry follows the model call's policy: 0.2 s doubling, at most 30 s, 10 attempts", () => {
  const policy = MODEL_CALL.retry;
  assert.deepEqual(nextRetry(policy, 1), { attempt: 2, maximumAttempts: 10, delayMs: 200 });
  assert.deepEqual(nextRetry(policy, 3), { attempt: 4, maximumAttempts: 10, delayMs: 800 });
  assert.equal(nextRetry(policy, 9)?.delayMs, 30_000);
  assert.equal(nextRetry(policy, 10), undefined, 'the tenth attempt was the last');
  assert.equal(nextRetry(policy, 2, 4_000)?.delayMs, 4_000, "the provider's Retry-After wins");
  assert.deepEqual([spokenDelay(400), spokenDelay(4_000), spokenDelay(180_000)], ['0.4 s', '4 s', '3 min']);
});

test('the line: cause, next attempt and delay; the partial reply only when there was one', () => {
  const cause = 'could not reach http://127.0.0.1:9999/v1: connection refused (ECONNREFUSED)';
  assert.equal(
    retryLine(cause, { attempt: 3, maximumAttempts: 10, delayMs: 400 }, 2, false),
    `model call failed: ${cause} — retry 3/10 in 0.4 s`,
  );
  assert.match(retryLine(cause, { attempt: 3, maximumAttempts: 10, delayMs: 400 }, 2, true), /; the partial reply above is dropped$/);
  assert.match(retryLine(`${cause}\n    at stack`, undefined, 10, false), /ECONNREFUSED\) — attempt 10 was the last$/);
});

test('a refused connection reads as such, not as "Connection error."', async () => {
  // A port that was just free: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'x', maxRetries: 0 });
  const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  assert.equal(networkReason(err), 'connection refused (ECONNREFUSED)');
  // No code anywhere: the messages down the chain.
  assert.equal(networkReason(new Error('Connection error.', { cause: new Error('bad port') })), 'Connection error: bad port');
});

test('the worker logs a failed activity in one line', () => {
  const error = Object.assign(new Error('could not reach http://x/v1: connection refused (ECONNREFUSED)\n    at a (b.js:1:1)'), {
    type: 'ModelUnavailable',
  });
  const line = activityFailureLine({ error, activityType: 'callModel', attempt: 3, workflowId: 'conv-1', durationMs: 12.4 });
  assert.equal(
    line,
    'activity callModel failed (attempt 3, conversation conv-1, after 12 ms): ModelUnavailable: could not reach http://x/v1: connection refused (ECONNREFUSED)',
  );
  assert.doesNotMatch(line, /\n/);
});

test("the worker's identity names its model, and only that", () => {
  assert.match(workerIdentity('scripted/demo'), /^\d+@.+ model=scripted\/demo$/);
  assert.equal(modelOfIdentity(workerIdentity('anthropic/claude-sonnet-4-6')), 'anthropic/claude-sonnet-4-6');
  assert.equal(modelOfIdentity(workerIdentity(undefined)), 'none');
  assert.equal(modelOfIdentity('1234@host'), undefined, 'an older worker names none');
});
