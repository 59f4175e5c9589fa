// The floor: the smallest loop of two activities per step, to compare our step against.
import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  defineSignal,
  defineUpdate,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type * as activities from './activities.js';

const { model } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });
const { tool } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute', taskQueue: 'floor-tools' });

export async function floor(steps: number): Promise<number> {
  for (let i = 0; i < steps; i++) {
    await model(i);
    await tool(i);
  }
  return steps;
}

const { model: localModel } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '1 minute' });

/**
 * The floor with the model call as a local activity (in the workflow task, no activity task through
 * the server): what that lever could save at most. A signal (a pause) waits for a local activity to
 * end, so our model calls cannot be one and still be aborted by a pause.
 */
export async function floorLocalModel(steps: number): Promise<number> {
  for (let i = 0; i < steps; i++) {
    await localModel(i);
    await tool(i);
  }
  return steps;
}

const { slowModel } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '2 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
});

/** The floor's pause: applied (and the call in flight told to stop) when the update returns. */
export const floorPause = defineUpdate<boolean>('floorPause');
export const floorResume = defineSignal('floorResume');

/**
 * Temporal's floor for a pause: a loop of slow model calls that an update pauses, cancelling the
 * call in flight, with nothing else in the workflow. What no pause through a Temporal server and a
 * workflow task goes below (bench:pause-peer).
 */
export async function floorPausable(calls: number, modelMs: number, startPaused = false): Promise<number> {
  let paused = startPaused;
  let inFlight: CancellationScope | undefined;
  setHandler(floorPause, () => {
    paused = true;
    inFlight?.cancel();
    return true;
  });
  setHandler(floorResume, () => {
    paused = false;
  });
  for (let i = 0; i < calls; i++) {
    await condition(() => !paused);
    const scope = new CancellationScope();
    inFlight = scope;
    try {
      await scope.run(() => slowModel(modelMs));
    } catch (err) {
      if (!isCancellation(err)) throw err;
    }
    inFlight = undefined;
  }
  return calls;
}
