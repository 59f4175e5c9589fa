// What a follower is told when a model call fails and Temporal will try it again: the cause, the
// attempt that comes next, and when. Pure: the activity pushes the line (a live `retry` line).
import type { RetryPolicy } from '@temporalio/common';
import { msToNumber } from '@temporalio/common';

/** The attempt Temporal makes next after a failed one, and its delay. */
export interface NextRetry {
  /** The number of the next attempt (the failed one + 1). */
  attempt: number;
  /** The policy's maximum attempts (undefined: no limit). */
  maximumAttempts: number | undefined;
  delayMs: number;
}

/**
 * The retry after failed attempt `attempt` under `policy` (Temporal's schedule: the initial interval
 * times the coefficient per earlier retry, at most the maximum interval; a provider's own
 * `nextRetryDelay` wins), or undefined when no attempt is left.
 */
export function nextRetry(policy: RetryPolicy | undefined, attempt: number, nextRetryDelayMs?: number): NextRetry | undefined {
  const maximumAttempts = policy?.maximumAttempts || undefined;
  if (maximumAttempts !== undefined && attempt >= maximumAttempts) return undefined;
  const initial = policy?.initialInterval !== undefined ? msToNumber(policy.initialInterval) : 1_000;
  const coefficient = policy?.backoffCoefficient ?? 2;
  const maximum = policy?.maximumInterval !== undefined ? msToNumber(policy.maximumInterval) : initial * 100;
  const delayMs = nextRetryDelayMs ?? Math.min(initial * coefficient ** (attempt - 1), maximum);
  return { attempt: attempt + 1, maximumAttempts, delayMs };
}

/** A delay as people say it: `0.4 s`, `4 s`, `2 min`. */
export function spokenDelay(ms: number): string {
  if (ms < 1_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/**
 * The line for a failed model call: `model call failed: <cause> — retry 3/10 in 0.8 s`, plus, when
 * the attempt had shown part of a reply, that it is dropped. `next` undefined: no attempt left.
 */
export function retryLine(cause: string, next: NextRetry | undefined, attempt: number, partialShown: boolean): string {
  const then = next
    ? `retry ${next.attempt}${next.maximumAttempts !== undefined ? `/${next.maximumAttempts}` : ''} in ${spokenDelay(next.delayMs)}`
    : `attempt ${attempt} was the last`;
  return `model call failed: ${cause.split('\n')[0]} — ${then}${partialShown ? '; the partial reply above is dropped' : ''}`;
}
