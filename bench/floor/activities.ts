export async function model(i: number): Promise<number> {
  return i;
}
export async function tool(i: number): Promise<number> {
  return i;
}

/** Tells the bench that a slow model call is under way (the floor's workers run in the bench's process). */
export const slowCallStarted = new EventTarget();
/** How many slow model calls a cancellation cut short (the floor's pause must abort the call). */
export const slowCalls = { cancelled: 0 };

/** A model call that takes `ms`, heartbeating, given up at once when cancelled (the floor's pause aborts it). */
export async function slowModel(ms: number): Promise<number> {
  const { Context } = await import('@temporalio/activity');
  const ctx = Context.current();
  slowCallStarted.dispatchEvent(new Event('started'));
  const beat = setInterval(() => ctx.heartbeat(), 100);
  try {
    await ctx.sleep(ms);
    return ms;
  } catch (err) {
    if (ctx.cancellationSignal.aborted) slowCalls.cancelled++;
    throw err;
  } finally {
    clearInterval(beat);
  }
}
