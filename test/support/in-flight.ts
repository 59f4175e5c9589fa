// How many requests a scripted model server had in flight at once: the e2e test and the fairness
// bench read a worker's cap on model calls from it.
import type { RecordedRequest } from '../../src/testing/scripted-model.js';

/**
 * The most requests in flight at once, from their arrival and end times (`endedAt`: when the
 * script's reply was ready; one still open counts to the end). A request that arrives the
 * millisecond another ends is taken as handed over, not overlapping.
 */
export function maxInFlight(requests: readonly Pick<RecordedRequest, 'startedAt' | 'endedAt'>[]): number {
  let most = 0;
  for (const r of requests) {
    const open = requests.filter((q) => q === r || (q.startedAt <= r.startedAt && (q.endedAt ?? Infinity) > r.startedAt));
    most = Math.max(most, open.length);
  }
  return most;
}
