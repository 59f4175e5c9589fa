// A call on the workspace host: if no worker there picks it up in time, the conversation says it
// waits for that host (status, events, Web UI) and asks again; a call dropped before it started is
// NotStarted. Used by every activity the loop runs on the host's queue that may wait for a worker.
import { ActivityFailure, TimeoutFailure, isCancellation, type ActivityOptions } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { NotStarted } from './host-errors.js';
import { hostWait } from './activity-proxies.js';
import type { ConversationRun } from './conversation-run.js';
import { PHASE_COMMANDS, type Applies } from './phase-commands.js';
import { isPatched } from '../legacy/patches.js';
import { onPoolHost, type PoolHostRun } from '../../../pool/workflow/pool-host.js';

const { recordAndShow } = PHASE_COMMANDS.hostCall;

/** What waiting for the host reads and writes of the run (a pooled conversation's call goes to its pool: PoolHostRun). */
export type HostCallRun = Pick<ConversationRun, 'checkpoints' | 'halted' | 'id' | 'inFlight' | 'options' | 'toolStateOf'> &
  Applies<'hostCall'> &
  PoolHostRun;

export { NotStarted } from './host-errors.js';

/**
 * Runs a call on the workspace host. If no worker there picks it up within hostWaitMs, the
 * conversation says it is waiting for that host (status, events, Web UI) and asks again, now
 * without a limit; a call that never started is safe to schedule again. A pooled conversation's
 * call goes to its pool instead (`mayHaveEffects`: a tool call, see pool-host.ts).
 */
export async function onHost<T>(
  run: HostCallRun,
  call: (extra: ActivityOptions, rescheduled: boolean) => Promise<T>,
  mayHaveEffects = false,
): Promise<T> {
  const { options } = run;
  // A pooled conversation's host is any live host of its pool (pool-host.ts); no history from before pools has one.
  if (options.pool !== undefined && isPatched('pooled-workspaces')) return onPoolHost(run, call, mayHaveEffects);
  try {
    return await call({ scheduleToStartTimeout: hostWait(options) }, false);
  } catch (err) {
    if (!(
      err instanceof ActivityFailure &&
      err.cause instanceof TimeoutFailure &&
      err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
    )) {
      throw err;
    }
  }
  if (run.halted) throw new NotStarted();
  try {
    return await run.inFlight.waitingForHostWhile(async () => {
      run.apply(recordAndShow, { kind: 'host', source: 'environment', queue: options.toolTaskQueue, available: false });
      try {
        // Told it may have begun under the first try (a retry that timed out), so `report` tools still never run twice.
        return await call({}, true);
      } catch (err) {
        // Paused or closed while waiting: the call had not been picked up.
        if (isCancellation(err)) throw new NotStarted();
        throw err;
      }
    });
  } finally {
    run.apply(recordAndShow, { kind: 'host', source: 'environment', queue: options.toolTaskQueue, available: true });
  }
}
