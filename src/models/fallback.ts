// Fallback chains on the worker: which model of a chain a call starts at, how often it asks one
// model again before it moves on, and how long a model that failed is passed over (a cool-down,
// per worker, in memory). Pure: the clock is passed in; ModelClients (./client.ts) does the calls.
import { FAILURE } from '../core/failure-types.js';
import type { SkippedModel } from '../core/types.js';

export type { SkippedModel };

/** How long a model that was unavailable is passed over before calls try it first again. */
export const COOL_DOWN_MS = 60_000;
/** Tries of one model within a call before it moves to the next (the first try included). */
export const QUICK_TRIES = 2;
/** The wait before a model's second try when it named none. */
export const QUICK_RETRY_MS = 500;
/** A Retry-After longer than this is not waited for: the call moves on at once. */
export const MAX_QUICK_WAIT_MS = 2_000;
/** The longest reason kept for a model passed over. */
const MAX_REASON_CHARS = 300;

/** Whether a failure of one model moves the call to the next: the endpoint's trouble (429, 5xx, 529, unreachable), not the request's. */
export function movesOn(failureType: string | undefined): boolean {
  return failureType === FAILURE.ModelUnavailable;
}

/**
 * The wait before the same model is asked again after `triesMade` failed tries, or undefined when
 * the call moves on: its tries are used up, or it asked for a longer wait than is worth it here.
 */
export function quickRetryDelay(triesMade: number, retryAfterMs: number | undefined): number | undefined {
  if (triesMade >= QUICK_TRIES) return undefined;
  const wait = retryAfterMs ?? QUICK_RETRY_MS * 2 ** (triesMade - 1);
  return wait <= MAX_QUICK_WAIT_MS ? wait : undefined;
}

/** A reason as one short line. */
export function reasonLine(text: string): string {
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 1)}…` : line;
}

/** Models that were unavailable lately: passed over until their cool-down ends. One map per worker. */
export class CoolDowns {
  private readonly until = new Map<string, { until: number; reason: string }>();

  constructor(
    private readonly ms = COOL_DOWN_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** `key` was unavailable (for `reason`): passed over for the cool-down. */
  mark(key: string, reason: string): void {
    this.until.set(key, { until: this.now() + this.ms, reason });
  }

  /** `key` answered: it is tried first again. */
  clear(key: string): void {
    this.until.delete(key);
  }

  /** Why `key` is passed over now, or undefined when it is not (an ended cool-down is forgotten). */
  cooling(key: string): { until: number; reason: string } | undefined {
    const c = this.until.get(key);
    if (c && c.until <= this.now()) {
      this.until.delete(key);
      return undefined;
    }
    return c;
  }
}

/**
 * The order a call tries the chain's models in (indices): those not cooling down, in chain order;
 * when every one is cooling down, all of them (a call must try something).
 */
export function callOrder(length: number, cooling: (index: number) => boolean): number[] {
  const all = Array.from({ length }, (_, i) => i);
  const ready = all.filter((i) => !cooling(i));
  return ready.length > 0 ? ready : all;
}

/** What a model passed over while cooling down says: `cooling down until 12:01:30 after: <reason>`. */
export function coolingReason(until: number, reason: string): string {
  return reasonLine(`cooling down until ${new Date(until).toISOString().slice(11, 19)} UTC after: ${reason}`);
}
