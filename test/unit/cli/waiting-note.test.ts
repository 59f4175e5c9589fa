// `faheem status` says what a running conversation waits for: its oldest call no worker started,
// on a queue nobody polls; since when; and what happens next.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PICKUP_GRACE_MS, oldestUnstarted, waitingFor, waitingLine } from '../../../src/cli/waiting-note.js';

const at = (iso: string) => ({ seconds: Date.parse(iso) / 1000, nanos: 0 });

test('the oldest scheduled call, with the queue the server names, else the given one', () => {
  const pending = [
    {
      state: 1,
      activityType: { name: 'runTool' },
      scheduledTime: at('2026-01-02T03:04:30Z'),
      activityOptions: { taskQueue: { name: 'faheem-tools@c' }, scheduleToStartTimeout: { seconds: 30, nanos: 500_000_000 } },
    },
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
  assert.deepEqual(oldestUnstarted(pending.slice(0, 1), undefined), {
    activityType: 'runTool',
    taskQueue: 'faheem-tools@c',
    scheduledAt: Date.parse('2026-01-02T03:04:30Z'),
    startWithinMs: 30_500,
  });
  assert.equal(oldestUnstarted(pending.slice(1, 2), 'q'), undefined, 'a started call waits for no worker');
  assert.equal(oldestUnstarted(pending.slice(2, 3), undefined), undefined, 'no queue known: nothing said');
});

test('a running conversation whose call waits on an unpolled queue says so; anything else waits for nothing', () => {
  const call = { activityType: 'runTool', taskQueue: 'faheem-tools@a', scheduledAt: Date.parse('2026-01-02T03:04:05Z') };
  const running = { status: 'running' as const, closed: false };
  const now = Date.parse('2026-01-02T03:04:17Z');
  const w = waitingFor({ state: running, call, polled: false, toolTaskQueue: 'faheem-tools@a', now });
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
    waitingFor({ state: running, call: { ...call, taskQueue: 'faheem' }, polled: false, toolTaskQueue: 'faheem-tools@a', now })!.next,
    /runs against this server/,
  );
  assert.match(waitingFor({ state: { ...running, pool: 'p' }, call, polled: false, toolTaskQueue: 'faheem-tools@a', now })!.next, /pool p/);
  assert.equal(waitingFor({ state: running, call, polled: true, toolTaskQueue: 'faheem-tools@a', now }), null);
  assert.equal(waitingFor({ state: running, call: undefined, polled: false, toolTaskQueue: 'faheem-tools@a', now }), null);
  assert.equal(waitingFor({ state: { status: 'paused', closed: false }, call, polled: false, toolTaskQueue: 'q', now }), null);
  assert.equal(waitingFor({ state: { ...running, closed: true }, call, polled: false, toolTaskQueue: 'q', now }), null);
});

test('a pooled conversation waits for its host (even one still listed as polling), until it moves; or for a host to take it', () => {
  const scheduledAt = Date.parse('2026-01-02T03:04:05Z');
  const call = { activityType: 'runTool', taskQueue: 'faheem-tools@host-a', scheduledAt, startWithinMs: 30_000 };
  const pooled = { status: 'running' as const, closed: false, pool: 'p1', host: 'host-a' };
  const now = scheduledAt + 12_000;
  const w = waitingFor({ state: pooled, call, polled: true, toolTaskQueue: undefined, now });
  assert.deepEqual(w, {
    for: 'host host-a of pool p1 (runTool not picked up there)',
    since: '2026-01-02T03:04:05.000Z',
    next: 'unless host host-a picks it up, the conversation moves to another host of pool p1 at 2026-01-02T03:04:35Z (30 s after it was scheduled)',
  });
  assert.match(waitingLine(w!, now), /^waiting for host host-a of pool p1 \(runTool not picked up there\), for 12 s /);
  assert.equal(
    waitingFor({ state: pooled, call, polled: true, toolTaskQueue: undefined, now: scheduledAt + PICKUP_GRACE_MS - 1 }),
    null,
    'a call just scheduled is being picked up',
  );
  assert.equal(
    waitingFor({ state: pooled, call: { ...call, activityType: 'checkpointWorkspace' }, polled: true, toolTaskQueue: undefined, now }),
    null,
    'a call that does not move when its time runs out is told by the general rule (a polled queue: no wait)',
  );
  const pending = [
    {
      state: 1,
      activityType: { name: 'releasePoolHost' },
      scheduledTime: at('2026-01-02T03:00:00Z'),
      activityOptions: { taskQueue: { name: 'faheem-tools@gone' } },
    },
    {
      state: 1,
      activityType: { name: 'runTool' },
      scheduledTime: at('2026-01-02T03:04:05Z'),
      activityOptions: { taskQueue: { name: 'faheem-tools@host-a' } },
    },
  ];
  assert.equal(oldestUnstarted(pending, undefined)?.activityType, 'runTool', "a lost host's hour-long release hides no later wait");
  const claim = { activityType: 'claimPoolHost', taskQueue: 'faheem-pool@p1', scheduledAt };
  assert.equal(waitingFor({ state: { ...pooled, host: null }, call: claim, polled: true, toolTaskQueue: undefined, now }), null);
  assert.deepEqual(waitingFor({ state: { ...pooled, host: null }, call: claim, polled: false, toolTaskQueue: undefined, now }), {
    for: 'a host of pool p1 to take the conversation (no host of the pool polls faheem-pool@p1)',
    since: '2026-01-02T03:04:05.000Z',
    next: 'it goes on once a host runs `faheem worker --pool p1`',
  });
});
