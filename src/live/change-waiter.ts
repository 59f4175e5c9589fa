// How a client waits for news of a conversation without writing its history: the worker publishes a
// change notice to the conversation's live stream after each workflow task that changed it
// (live/change-notifier.ts), and the waiter reads them (a LiveReader on the change topic, or the
// follow's own reader). A notice can be missed (no stream yet, a worker of an older version, the
// worker's list of followed streams behind), so a wait that hears no notice at all for a fallback
// delay ends too, and the caller asks the conversation itself (a query: no history). The delay
// grows while nothing comes (FALLBACK_MS doubling up to MAX_FALLBACK_MS) and starts again from
// FALLBACK_MS at each notice.
import type { ChangeNotice } from './stream-id.js';

/** The first fallback delay; a notice sets it back here. */
export const FALLBACK_MS = 1_000;
/** The longest fallback delay (a follower of a quiet conversation asks this often). */
export const MAX_FALLBACK_MS = 10_000;

/** What a wait is for: whether a notice is the news it waits for. */
export type NewsTest = (notice: ChangeNotice) => boolean;

/** News to a reader that has seen `events` events: more of them, or the conversation closing. */
export function moreThan(events: number): NewsTest {
  return (notice) => notice.events > events || notice.closing === true;
}

/**
 * News to a reader waiting for the run to stop, that has seen `events` events: a status other than
 * running (or a run after `afterRun`) with more events than it saw, or the conversation closing.
 * (A stop records a status event, so a notice of the state the reader saw is never taken for it.)
 */
export function stopped(events: number, afterRun?: number): NewsTest {
  return (notice) =>
    notice.closing === true ||
    (notice.events > events && (notice.status !== 'running' || (afterRun !== undefined && notice.runNumber > afterRun)));
}

/** The fallback delay after one that passed with no notice. */
export function nextFallback(ms: number): number {
  return Math.min(ms * 2, MAX_FALLBACK_MS);
}

/** Holds the latest notice read and wakes the waits it answers; see the module comment. */
export class ChangeWaiter {
  private latest: ChangeNotice | undefined;
  private readonly wakers = new Set<() => void>();
  private fallbackMs: number;

  constructor(private readonly firstFallbackMs = FALLBACK_MS) {
    this.fallbackMs = firstFallbackMs;
  }

  /** A notice read from the stream (the reader's `onChange`). */
  readonly notice = (notice: ChangeNotice): void => {
    // A stream's older notices (read from its oldest kept line) never hide a newer one.
    if (this.latest && notice.events < this.latest.events && !notice.closing) return;
    this.latest = notice;
    this.fallbackMs = this.firstFallbackMs;
    for (const wake of [...this.wakers]) wake();
  };

  /**
   * Resolves with the latest notice once `isNews` holds for it (see moreThan, stopped); with
   * undefined when the fallback delay or `deadline` (ms since the epoch) passes first, or `signal`
   * aborts.
   */
  wait(isNews: NewsTest, deadline = Infinity, signal?: AbortSignal): Promise<ChangeNotice | undefined> {
    if (this.latest && isNews(this.latest)) return Promise.resolve(this.latest);
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (value: ChangeNotice | undefined) => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        signal?.removeEventListener('abort', aborted);
        resolve(value);
      };
      // The fallback counts from the last notice: while notices come, the channel works.
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(
          () => {
            this.fallbackMs = nextFallback(this.fallbackMs);
            done(undefined);
          },
          Math.max(0, Math.min(this.fallbackMs, deadline - Date.now())),
        );
      };
      const wake = () => {
        if (this.latest && isNews(this.latest)) done(this.latest);
        else arm();
      };
      const aborted = () => done(undefined);
      arm();
      this.wakers.add(wake);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}
