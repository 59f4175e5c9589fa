// The floor: the smallest loop of two activities per step, to compare our step against.
import { proxyActivities } from '@temporalio/workflow';
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
