// Per-tenant request rates: a token bucket per tenant, of `requestsPerSecond` tokens refilled at
// that rate, so a burst up to the rate goes through and a steady stream above it gets 429s that
// say when to come back. In memory: one API process's view (each process limits on its own).

import { ApiProblem } from './problems.js';

/** A bucket's state: tokens left and when it was last filled. */
interface Bucket {
  tokens: number;
  at: number;
}

/** The rate limiter of one API process. `now` is injectable for tests. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Takes one token of `tenant`'s bucket: undefined when the request may go on, else the seconds
   * to wait (at least 1, for a Retry-After header).
   */
  take(tenant: string, perSecond: number): number | undefined {
    const now = this.now();
    // A bucket holds at least one request, so a rate below one a second still lets one through.
    const size = Math.max(1, perSecond);
    const b = this.buckets.get(tenant) ?? { tokens: size, at: now };
    b.tokens = Math.min(size, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    this.buckets.set(tenant, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / perSecond));
  }
}

/**
 * The conversations a tenant started lately through this process, by id and when: visibility may
 * not list a conversation the moment it starts, so the running count adds these until it does.
 */
export class RecentStarts {
  private readonly started = new Map<string, Map<string, number>>();

  constructor(
    private readonly keepMs = 30_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  add(tenant: string, id: string): void {
    const m = this.started.get(tenant) ?? new Map<string, number>();
    m.set(id, this.now());
    this.started.set(tenant, m);
  }

  /** The ids started lately (older ones are forgotten: visibility shows them by then). */
  of(tenant: string): string[] {
    const m = this.started.get(tenant);
    if (!m) return [];
    const now = this.now();
    for (const [id, at] of m) if (now - at > this.keepMs) m.delete(id);
    return [...m.keys()];
  }
}

/** The most event streams a tenant may hold open at once on one API process. */
export const MAX_STREAMS = 20;

/** Open event streams per tenant: each holds a reader on Temporal until its conversation closes. */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly max = MAX_STREAMS) {}

  /** Takes a slot of `tenant` (429 when all are taken); the answer gives it back, once. */
  take(tenant: string): () => void {
    const n = this.open.get(tenant) ?? 0;
    if (n >= this.max)
      throw new ApiProblem('too_many_requests', `your tenant has ${n} event streams open (at most ${this.max})`, { 'Retry-After': '5' });
    this.open.set(tenant, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.open.get(tenant) ?? 1) - 1;
      if (left <= 0) this.open.delete(tenant);
      else this.open.set(tenant, left);
    };
  }
}
