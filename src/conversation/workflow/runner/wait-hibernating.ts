// A wait in the middle of a step (the `wait` tool, an approval) that a pooled conversation may
// sleep through hibernating: past its idle bound it ships the workspace as it is and releases its
// host folder (pool-host.ts), then waits for the rest. The wait ends as it would have, at the same
// deadline; only the folder is gone meanwhile.
import { condition } from '@temporalio/workflow';
import { formatDuration } from '../details.js';
import { hibernateAfter } from '../../../pool/workflow/pool-rules.js';

/** Hibernation during a wait: after how long, and what does it (made by pool-host.ts's waitHibernation). */
export interface WaitHibernation {
  afterMs: number;
  hibernate: () => Promise<unknown>;
}

/**
 * `condition(done, ms)` for a wait of the step (ms undefined: no limit), with the timer's
 * `summary`; when `hibernation` is given and the wait may outlast it, the conversation hibernates
 * after `hibernation.afterMs` and waits on. True when `done` came, false when the time ran out.
 * Without hibernation it makes the very commands the wait always made (old histories replay).
 */
export async function conditionHibernating(
  done: () => boolean,
  ms: number | undefined,
  summary: string,
  hibernation: WaitHibernation | undefined,
): Promise<boolean> {
  const after = hibernation ? hibernateAfter(hibernation.afterMs, ms) : undefined;
  if (hibernation === undefined || after === undefined) {
    if (ms === undefined) return (await condition(done), true);
    return condition(done, ms, { summary });
  }
  const started = Date.now();
  const early =
    after > 0
      ? await condition(done, after, {
          summary: `hibernate after ${formatDuration(after)} of this wait: ship the workspace, release the host folder`,
        })
      : done();
  if (early) return true;
  await hibernation.hibernate();
  if (ms === undefined) return (await condition(done), true);
  const left = ms - (Date.now() - started);
  return left > 0 ? condition(done, left, { summary }) : done();
}
