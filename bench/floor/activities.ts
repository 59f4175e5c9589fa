export async function model(i: number): Promise<number> {
  return i;
}
export async function tool(i: number): Promise<number> {
  return i;
}

/** Tells the bench when a slow model call starts and when a cancellation cuts one short (the floor's workers run in the bench's process). */
export const slowCallStarted = new EventTarget();

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
    if (ctx.cancellationSignal.aborted) slowCallStarted.dispatchEvent(new Event('cancelled'));
    throw err;
  } finally {
    clearInterval(beat);
  }
}
