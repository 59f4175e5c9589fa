// What a worker knows of who follows a conversation, from what its stream workflows tell it: a stream
// that starts makes its conversation followed at once, before the worker's list shows it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FollowedConversations } from '../../src/live/followed.js';

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

test('a stream started for news alone wakes no line sink until a follower reads its lines', () => {
  const followed = new FollowedConversations();
  const woken: string[] = [];
  const unwatchNews = followed.watch(undefined as never, 'conv-1', () => woken.push('news'));
  const unwatchLines = followed.watch(undefined as never, 'conv-1', () => woken.push('lines'), { lines: true });
  followed.stop();
  followed.started('conv-1', false);
  assert.equal(followed.has('conv-1'), true);
  assert.equal(followed.wantsLines('conv-1'), false);
  assert.deepEqual(woken, ['news']);
  followed.started('conv-1', true);
  assert.equal(followed.wantsLines('conv-1'), true);
  assert.deepEqual(woken, ['news', 'lines']);
  // A stream that started again for news alone does not take back what a reader of lines asked for.
  followed.started('conv-1', false);
  assert.equal(followed.wantsLines('conv-1'), true);
  followed.forget('conv-1');
  assert.equal(followed.has('conv-1'), false);
  assert.equal(followed.wantsLines('conv-1'), false);
  unwatchNews();
  unwatchLines();
});
