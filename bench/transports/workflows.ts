// The heartbeat alternative's host: one activity that sends its progress in heartbeat details.
import { proxyActivities } from '@temporalio/workflow';
import type * as activities from './activities.js';

const { emit } = proxyActivities<typeof activities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '5 seconds' });

/** Runs `emit`: `n` updates, `everyMs` apart. */
export async function heartbeatHost(n: number, everyMs: number): Promise<void> {
  await emit(n, everyMs);
}
