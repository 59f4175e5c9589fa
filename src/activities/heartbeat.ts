// One heartbeat loop for every activity that can run long: a pause (activity cancellation) is only
// delivered in the answer to a heartbeat, and a dead worker is noticed by a missed one.
import { Context } from '@temporalio/activity';

/** How often activities heartbeat while they work (model calls, tools, setup). */
export const HEARTBEAT_EVERY_MS = 50;

/**
 * Runs `work` while heartbeating every `everyMs`. No heartbeat at the start: a call shorter than
 * the interval costs the server none, and a cancellation only arrives with a later heartbeat anyway.
 * `details` (when given) is read at each beat, so the last progress travels with it.
 */
export async function withHeartbeat<T>(
  work: () => Promise<T>,
  options: { everyMs?: number; details?: () => unknown; context?: Context } = {},
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
