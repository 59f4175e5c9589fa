// How a follower waits for news without writing the conversation's history: the latest change
// notice answers the waits it is news to; without one a wait ends after a fallback delay that grows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChangeWaiter, MAX_FALLBACK_MS, moreThan, nextFallback, stopped } from '../../../src/live/change-waiter.js';

const notice = (events: number, status = 'running', closing?: boolean) => ({
  events,
  status,
  runNumber: 1,
  ...(closing ? { closing } : {}),
});

test('a notice is news to a reader that has seen fewer events, or when the conversation closes', () => {
  assert.equal(moreThan(2)(notice(3)), true);
  assert.equal(moreThan(3)(notice(3)), false);
  assert.equal(moreThan(3)(notice(3, 'idle', true)), true);
});

test('a stop is news only with events the reader has not seen: the state it saw is never taken for it', () => {
  assert.equal(stopped(5)(notice(6, 'finished')), true);
  assert.equal(stopped(5)(notice(6, 'running')), false);
  assert.equal(stopped(5)(notice(5, 'idle')), false, 'the idle state before run() is not the run stopping');
  assert.equal(stopped(5, 1)(notice(6, 'running')), false);
  assert.equal(stopped(5, 1)({ ...notice(6, 'running'), runNumber: 2 }), true, 'a later run began');
  assert.equal(stopped(5)(notice(5, 'running', true)), true);
});

test('a wait is answered by the notice that is news to it, not by one that is not', async () => {
  const waiter = new ChangeWaiter(60_000);
  const waiting = waiter.wait(moreThan(5));
  waiter.notice(notice(5)); // not news after 5 events
  waiter.notice(notice(7));
  assert.deepEqual(await waiting, notice(7));
  // The latest answers at once a wait it is news to.
  assert.deepEqual(await waiter.wait(moreThan(6)), notice(7));
});

test("an older notice (read again from the stream's oldest line) never hides a newer one", async () => {
  const waiter = new ChangeWaiter(60_000);
  waiter.notice(notice(9));
  waiter.notice(notice(4));
  assert.deepEqual(await waiter.wait(moreThan(8)), notice(9));
});

test('with no notice a wait ends at its fallback delay, at its deadline, or when aborted; the delay grows', async () => {
  const waiter = new ChangeWaiter(5);
  assert.equal(await waiter.wait(moreThan(0)), undefined);
  assert.equal(await waiter.wait(moreThan(0), Date.now()), undefined);
  const abort = new AbortController();
  const waiting = new ChangeWaiter(60_000).wait(moreThan(0), Infinity, abort.signal);
  abort.abort();
  assert.equal(await waiting, undefined);
  assert.equal(nextFallback(1_000), 2_000);
  assert.equal(nextFallback(MAX_FALLBACK_MS), MAX_FALLBACK_MS);
});

test('notices that are not news keep a wait from falling back: the channel works', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const waiter = new ChangeWaiter(40);
  let answered: unknown = 'waiting';
  const waiting = waiter.wait(moreThan(100)).then((n) => (answered = n));
  // A notice (not news) every 30 ms for longer than the 40 ms fallback: no fallback.
  for (let events = 1; events <= 8; events++) {
    t.mock.timers.tick(30);
    waiter.notice(notice(events));
  }
  await Promise.resolve();
  assert.equal(answered, 'waiting');
  // Silence for the fallback delay: the wait ends with no notice.
  t.mock.timers.tick(40);
  await waiting;
  assert.equal(answered, undefined);
});
