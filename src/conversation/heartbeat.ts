// One heartbeat loop for every activity that can run long: a dead worker is noticed by a missed
// heartbeat, and on a server without worker commands a pause (activity cancellation) is only
// delivered in the answer to one (src/client/pause-channel.ts: how often, on which server).
import { Context } from '@temporalio/activity';

/** How often activities heartbeat while they work (model calls, tools, setup) unless told otherwise. */
export const HEARTBEAT_EVERY_MS = 50;

/**
 * Runs `work` while heartbeating every `everyMs`. No heartbeat at the start: a call shorter than
 * the interval costs the server none (a cancellation reaches it through a worker command, or with a
 * later heartbeat).
 * `details` (when given) is read at each beat, so the last progress travels with it.
 */
export async function withHeartbeat<T>(
  work: () => Promise<T>,
  options: { everyMs?: number | undefined; details?: () => unknown; context?: Context } = {},
): Promise<T> {
  const ctx = options.context ?? Context.current();
  const details = options.details;
  const beat = setInterval(() => ctx.heartbeat(details ? details() : undefined), options.everyMs ?? HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
