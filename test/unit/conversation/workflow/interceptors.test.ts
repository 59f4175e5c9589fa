// src/conversation/workflow/interceptors.ts: an update's acceptance goes after the other commands of its
// activation, before what that update answered and before a command that ends the run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acceptUpdatesLast } from '../../../../src/conversation/workflow/interceptors.js';

const schedule = (seq: number) => ({ scheduleActivity: { seq, activityType: 'callModel' } });
const accept = (id: string) => ({ updateResponse: { protocolInstanceId: id, accepted: {} } });
const complete = (id: string) => ({ updateResponse: { protocolInstanceId: id, completed: {} } });

test('an acceptance moves after the commands of its activation', () => {
  assert.deepEqual(acceptUpdatesLast([accept('u'), schedule(1), schedule(2)]), [schedule(1), schedule(2), accept('u')]);
});

test('an update answered in the activation that accepted it: accepted, then answered', () => {
  assert.deepEqual(acceptUpdatesLast([accept('u'), complete('u'), schedule(1)]), [schedule(1), accept('u'), complete('u')]);
});

test('the answer to an update accepted earlier stays among the other commands', () => {
  assert.deepEqual(acceptUpdatesLast([accept('new'), complete('old'), schedule(1)]), [complete('old'), schedule(1), accept('new')]);
});

test('a command that ends the run stays last', () => {
  const end = { completeWorkflowExecution: {} };
  assert.deepEqual(acceptUpdatesLast([accept('u'), schedule(1), end]), [schedule(1), accept('u'), end]);
});

test('without an acceptance the commands are left as they are', () => {
  const commands = [complete('old'), schedule(1)];
  assert.equal(acceptUpdatesLast(commands), commands);
});
