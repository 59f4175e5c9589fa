// A checkpoint taken inside another activity on the workspace host (the step's last tool call, the
// setup before the first step), so that it needs no activity of its own: one round trip through the
// server less a step. Best effort by design: any failure, a pause, or too little of the activity's
// time left gives undefined, and the workflow then schedules the checkpoint activity as before
// (which retries and reports as it always did). A take cut short here goes on in the background;
// the store runs that activity's take after it (one conversation's operations never overlap).
import type { Context } from '@temporalio/activity';
import type { CheckpointStore } from './shadow-repo.js';
import type { CheckpointInfo } from './types.js';
import { withHeartbeat } from '../conversation/heartbeat.js';

/** A checkpoint taken with another activity leaves at least this much of its time unused. */
const MARGIN_MS = 2_000;

/**
 * Step `step`'s checkpoint of `workspace` for `conversationId`, or undefined (see the module
 * comment). `startedAt` is when the hosting activity began (ms since the epoch); `beatEveryMs`, how
 * often it heartbeats (the hosting activity's cadence).
 */
export async function checkpointWithin(
  store: CheckpointStore | undefined,
  at: { conversationId: string; workspace: string; step: number },
  ctx: Context,
  startedAt: number,
  beatEveryMs?: number,
): Promise<CheckpointInfo | undefined> {
  if (!store || ctx.cancellationSignal.aborted || !Number.isInteger(at.step) || at.step < 0) return undefined;
  const left = ctx.info.startToCloseTimeoutMs - (Date.now() - startedAt) - MARGIN_MS;
  if (left <= 0) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const take = store.open(at.workspace).then((repo) => repo.snapshot(at.conversationId, at.step));
    take.catch(() => undefined);
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), left)));
    return await withHeartbeat(() => Promise.race([take, late]), { context: ctx, everyMs: beatEveryMs });
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
