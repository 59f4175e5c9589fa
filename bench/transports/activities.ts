// The heartbeat alternative: a model call would put its reply so far (the whole text: details hold
// only the latest) and when it was sent into each heartbeat.
import { Context } from '@temporalio/activity';

/** Heartbeats `n` times, `everyMs` apart, each with the text so far and the time it was sent. */
export async function emit(n: number, everyMs: number): Promise<void> {
  const ctx = Context.current();
  let text = '';
  for (let i = 0; i < n; i++) {
    text += `word${i} `;
    ctx.heartbeat({ seq: i, sentAt: Date.now(), text });
    await ctx.sleep(everyMs);
  }
}
