// What a worker knows of who follows a conversation, from what its stream workflows tell it: a stream
// that starts makes its conversation followed at once, before the worker's list shows it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FollowedConversations } from '../../../src/live/followed.js';

test('a stream that starts makes its conversation followed at once, and wakes its sinks', () => {
  const followed = new FollowedConversations();
  let woken = 0;
  // watch() needs a client only to read the list; this test never lets it read.
  const unwatch = followed.watch(undefined as never, 'conv-1', () => woken++);
  followed.stop();
  assert.equal(followed.has('conv-1'), false);
  followed.started('conv-1');
  assert.equal(followed.has('conv-1'), true);
  assert.equal(woken, 1);
  unwatch();
});

test('a stream started for stops alone wakes no line sink until a follower reads lines; notices per event only once wanted', () => {
  const followed = new FollowedConversations();
  const woken: string[] = [];
  const unwatchNews = followed.watch(undefined as never, 'conv-1', () => woken.push('news'));
  const unwatchLines = followed.watch(undefined as never, 'conv-1', () => woken.push('lines'), 'lines');
  followed.stop();
  followed.started('conv-1', { lines: false, events: false });
  assert.equal(followed.has('conv-1'), true);
  assert.equal(followed.wantsLines('conv-1'), false);
  assert.equal(followed.wantsEvents('conv-1'), false);
  assert.deepEqual(woken, ['news']);
  // A follower of the events: the notifier is woken again (to send the latest), the line sinks are not.
  followed.started('conv-1', { lines: false, events: true });
  assert.equal(followed.wantsEvents('conv-1'), true);
  assert.deepEqual(woken, ['news', 'news']);
  followed.started('conv-1', { lines: true, events: true });
  assert.equal(followed.wantsLines('conv-1'), true);
  assert.deepEqual(woken, ['news', 'news', 'lines']);
  // A stream that started again for stops alone does not take back what its followers asked for.
  followed.started('conv-1', { lines: false, events: false });
  assert.equal(followed.wantsLines('conv-1'), true);
  assert.equal(followed.wantsEvents('conv-1'), true);
  followed.forget('conv-1');
  assert.equal(followed.has('conv-1'), false);
  assert.equal(followed.wantsLines('conv-1'), false);
  unwatchNews();
  unwatchLines();
});
