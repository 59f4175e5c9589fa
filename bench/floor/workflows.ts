// The floor: the smallest loop of two activities per step, to compare our step against.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
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
