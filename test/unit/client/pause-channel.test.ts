// src/client/pause-channel.ts: how a pause reaches the calls in flight, read off the namespace's capabilities,
// and the heartbeat throttle that follows from it (and doctor's line about it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pauseLine } from '../../../src/cli/doctor.js';
import { WORKER_COMMANDS_CONFIG, heartbeatCadence, pauseChannelOf } from '../../../src/client/pause-channel.js';
import { MODEL_CALL, TOOL_CALL } from '../../../src/conversation/workflow/activity-options.js';
import { msToNumber } from '@temporalio/common/lib/time.js';

test('worker commands only when the namespace says it has them', () => {
  assert.equal(pauseChannelOf({ namespaceInfo: { capabilities: { workerCommands: true } } }), 'worker-commands');
  assert.equal(pauseChannelOf({ namespaceInfo: { capabilities: { workerCommands: false } } }), 'heartbeats');
  assert.equal(pauseChannelOf({ namespaceInfo: { capabilities: {} } }), 'heartbeats');
  assert.equal(pauseChannelOf({ namespaceInfo: { capabilities: null } }), 'heartbeats');
  assert.equal(pauseChannelOf({}), 'heartbeats');
});

test('heartbeats twice a second for a model call (once for a tool, none for a short call) with worker commands, ten a second (five for tools) without', () => {
  assert.deepEqual(heartbeatCadence('worker-commands'), { beatEveryMs: 500, modelThrottleMs: 500, toolsThrottleMs: 1_000 });
  assert.deepEqual(heartbeatCadence('heartbeats'), { beatEveryMs: 50, modelThrottleMs: 100, toolsThrottleMs: 200 });
});

test('a heartbeat timeout leaves room for four throttled heartbeats of its kind on a busy machine', () => {
  const cadence = heartbeatCadence('worker-commands');
  for (const [options, throttleMs] of [
    [MODEL_CALL, cadence.modelThrottleMs],
    [TOOL_CALL, cadence.toolsThrottleMs],
  ] as const) {
    const slowest = Math.max(throttleMs, cadence.beatEveryMs);
    assert.ok(options.heartbeatTimeout !== undefined);
    assert.ok(msToNumber(options.heartbeatTimeout) >= 4 * slowest, `${String(options.heartbeatTimeout)} against ${slowest} ms`);
  }
});

test('doctor: a line that is fine with worker commands, a warning that says how to turn them on without', () => {
  assert.equal(pauseLine('worker-commands').mark, 'ok');
  const warning = pauseLine('heartbeats');
  assert.equal(warning.mark, 'warn');
  // It names the settings `faheem server` uses.
  for (const setting of WORKER_COMMANDS_CONFIG) assert.ok(warning.detail.includes(setting.split('=')[0]!), setting);
});
