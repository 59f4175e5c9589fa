// `faheem status` says what a running conversation waits for: its oldest call no worker started,
// on a queue nobody polls; since when; and what happens next.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oldestUnstarted, waitingFor, waitingLine } from '../../../src/cli/waiting-note.js';

const at = (iso: string) => ({ seconds: Date.parse(iso) / 1000, nanos: 0 });

test('the oldest scheduled call, with the queue the server names, else the given one', () => {
  const pending = [
    { state: 2, activityType: { name: 'callModel' }, scheduledTime: at('2026-01-02T03:04:00Z') }, // started
    { state: 1, activityType: { name: 'runTool' }, scheduledTime: at('2026-01-02T03:04:10Z') },
    {
      state: 1,
      activityType: { name: 'prepareWorkspace' },
      scheduledTime: at('2026-01-02T03:04:05Z'),
      activityOptions: { taskQueue: { name: 'faheem-tools@b' } },
    },
  ];
  assert.deepEqual(oldestUnstarted(pending, 'faheem-tools@a'), {
    activityType: 'prepareWorkspace',
    taskQueue: 'faheem-tools@b',
    scheduledAt: Date.parse('2026-01-02T03:04:05Z'),
  });
  assert.equal(oldestUnstarted(pending.slice(0, 1), 'q'), undefined, 'a started call waits for no worker');
  assert.equal(oldestUnstarted(pending.slice(1, 2), undefined), undefined, 'no queue known: nothing said');
});

test('a running conversation whose call waits on an unpolled queue says so; anything else waits for nothing', () => {
  const call = { activityType: 'runTool', taskQueue: 'faheem-tools@a', scheduledAt: Date.parse('2026-01-02T03:04:05Z') };
  const running = { status: 'running' as const, closed: false };
  const w = waitingFor({ state: running, call, polled: false, toolTaskQueue: 'faheem-tools@a' });
  assert.deepEqual(w, {
    for: 'a worker on the task queue faheem-tools@a (no worker polls it; runTool waits)',
    since: '2026-01-02T03:04:05.000Z',
    next: 'it goes on once `faheem worker` runs on the machine with the workspace',
  });
  assert.equal(
    waitingLine(w!, Date.parse('2026-01-02T03:04:17Z')),
    'waiting for a worker on the task queue faheem-tools@a (no worker polls it; runTool waits), for 12 s (since 2026-01-02T03:04:05Z); it goes on once `faheem worker` runs on the machine with the workspace',
  );
  assert.match(
    waitingFor({ state: running, call: { ...call, taskQueue: 'faheem' }, polled: false, toolTaskQueue: 'faheem-tools@a' })!.next,
    /runs against this server/,
  );
  assert.match(waitingFor({ state: { ...running, pool: 'p' }, call, polled: false, toolTaskQueue: 'faheem-tools@a' })!.next, /pool p/);
  assert.equal(waitingFor({ state: running, call, polled: true, toolTaskQueue: 'faheem-tools@a' }), null);
  assert.equal(waitingFor({ state: running, call: undefined, polled: false, toolTaskQueue: 'faheem-tools@a' }), null);
  assert.equal(waitingFor({ state: { status: 'paused', closed: false }, call, polled: false, toolTaskQueue: 'q' }), null);
  assert.equal(waitingFor({ state: { ...running, closed: true }, call, polled: false, toolTaskQueue: 'q' }), null);
});
