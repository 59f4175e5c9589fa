// A call on the workspace host: if no worker there picks it up in time, the conversation says it
// waits for that host (status, events, Web UI) and asks again; a call dropped before it started is
// NotStarted. Used by every activity the loop runs on the host's queue that may wait for a worker.
import { ActivityFailure, TimeoutFailure, isCancellation, type ActivityOptions } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { FaheemError } from '../../errors.js';
import { hostWait } from './activity-proxies.js';
import type { ConversationRun } from './conversation-run.js';

/** What waiting for the host reads and writes of the run. */
export type HostCallRun = Pick<ConversationRun, 'append' | 'halted' | 'inFlight' | 'options' | 'publishDetails'>;

/** A host call that was never picked up, dropped because the conversation paused or closed. */
export class NotStarted extends FaheemError {
  constructor() {
    super('tool_not_started', 'the tool call was not started: the conversation paused or closed first');
  }
}

/**
 * Runs a call on the workspace host. If no worker there picks it up within hostWaitMs, the
 * conversation says it is waiting for that host (status, events, Web UI) and asks again, now
 * without a limit; a call that never started is safe to schedule again.
 */
export async function onHost<T>(run: HostCallRun, call: (extra: ActivityOptions, rescheduled: boolean) => Promise<T>): Promise<T> {
  const { options } = run;
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
  run.inFlight.setWaitingForHost(true);
  run.append({ kind: 'host', source: 'environment', queue: options.toolTaskQueue, available: false });
  run.publishDetails();
  try {
    // Told it may have begun under the first try (a retry that timed out), so `report` tools still never run twice.
    return await call({}, true);
  } catch (err) {
    // Paused or closed while waiting: the call had not been picked up.
    if (isCancellation(err)) throw new NotStarted();
    throw err;
  } finally {
    run.inFlight.setWaitingForHost(false);
    run.append({ kind: 'host', source: 'environment', queue: options.toolTaskQueue, available: true });
    run.publishDetails();
  }
}
