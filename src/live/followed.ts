// Which conversations somebody follows, as one worker knows it: a follower starts the
// conversation's stream workflow (`<id>::live`, see subscribe.ts), and the worker lists the running
// stream workflows, one visibility query for all its conversations, every REFRESH_MS while any of
// its activities has a live sink open (and for a little while after). A conversation nobody
// follows costs its worker nothing but its share of that one query. A stream's memo says what its
// followers want (FollowerWants): a script waiting for a stop (`waitUntilStopped`) gets a notice
// when the status changes, no live lines and no notice per event.
import type { Client } from '@temporalio/client';
import { RUNNING_STREAMS_QUERY, liveStreamId, wantsOf, type FollowerWants } from './stream-id.js';

/** How often the list of followed conversations is read while sinks are open. */
export const REFRESH_MS = 250;
/** After the last sink closed, the list is still read this long (the next activity is near). */
const LINGER_MS = 3_000;
/** At most this many followed conversations are listed (beyond, the oldest stream starts are not seen). */
const MAX_LISTED = 10_000;
const SUFFIX = liveStreamId('');
/** A stream that said it started counts as followed this long, listed or not. */
const STARTED_GRACE_MS = 10_000;
const EVERYTHING: FollowerWants = { lines: true, events: true };

/**
 * What a watch waits for: `lines`, a follower that begins to read live lines; `news`, a follower
 * that begins to follow, or to want a notice per event.
 */
export type FollowedWatch = 'lines' | 'news';

/** The followed conversations of one worker; see the module comment. */
export class FollowedConversations {
  /** What the followers of each followed conversation want. */
  private followed = new Map<string, FollowerWants>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private open = 0;
  private lastClose = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private client: Client | undefined;
  /** When the list was last read (ms since the epoch). */
  private readAt = 0;
  /** Streams that told this worker they started, when, and what they want (see started()). */
  private readonly startedAt = new Map<string, { at: number; wants: FollowerWants }>();
  /** Visibility queries made (benches read it). */
  queries = 0;

  constructor(private readonly refreshMs = REFRESH_MS) {}

  /** Whether someone follows the conversation (as of the last list). */
  has(conversationId: string): boolean {
    return this.followed.has(conversationId);
  }

  /** Whether someone reads the conversation's live lines (as of the last list). */
  wantsLines(conversationId: string): boolean {
    return this.followed.get(conversationId)?.lines === true;
  }

  /** Whether someone wants a change notice for every workflow task that adds events. */
  wantsEvents(conversationId: string): boolean {
    return this.followed.get(conversationId)?.events === true;
  }

  /**
   * A sink opens: `onFollowed` is called when its conversation becomes followed as `on` says
   * (FollowedWatch). The returned function closes it. Reading starts (at once) if it was not running.
   */
  watch(client: Client, conversationId: string, onFollowed: () => void, on: FollowedWatch = 'news'): () => void {
    this.client = client;
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    const listener: Listener = { on, wake: onFollowed };
    set.add(listener);
    this.open++;
    if (!this.timer) {
      void this.refresh();
      this.timer = setInterval(() => this.tick(), this.refreshMs);
      this.timer.unref();
    }
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(conversationId);
      this.open--;
      this.lastClose = Date.now();
    };
  }

  /**
   * Whether someone follows the conversation, from a list read at most a refresh period ago (read
   * now when the list is not being kept fresh).
   */
  async check(client: Client, conversationId: string): Promise<boolean> {
    this.client ??= client;
    // A stale yes costs one publish that fails; a stale no is read again first.
    if (this.followed.has(conversationId)) return true;
    if (!this.timer || Date.now() - this.readAt > 2 * this.refreshMs) await this.refresh();
    return this.followed.has(conversationId);
  }

  /**
   * A stream workflow of this worker started (its first task ran here), or its followers came to
   * want more: the conversation is followed from now, before the list shows it (the list may lag
   * by a refresh period, or more on a cluster with Elasticsearch). Kept as followed, wanting at
   * least this, for STARTED_GRACE_MS whatever the list says.
   */
  started(conversationId: string, wants: FollowerWants = EVERYTHING): void {
    const before = this.startedAt.get(conversationId)?.wants;
    const now = before ? union(before, wants) : wants;
    this.startedAt.set(conversationId, { at: Date.now(), wants: now });
    const next = new Map(this.followed);
    const listed = next.get(conversationId);
    next.set(conversationId, listed ? union(listed, now) : now);
    this.update(next);
  }

  /** A publish found the stream gone (its followers left): not followed until listed again. */
  forget(conversationId: string): void {
    this.followed.delete(conversationId);
  }

  /** Stops reading. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.open === 0 && Date.now() - this.lastClose > LINGER_MS) {
      this.stop();
      return;
    }
    void this.refresh();
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const found = new Map<string, FollowerWants>();
    try {
      this.queries++;
      for await (const w of client.workflow.list({ query: RUNNING_STREAMS_QUERY, pageSize: 1000 })) {
        if (!w.workflowId.endsWith(SUFFIX)) continue;
        found.set(w.workflowId.slice(0, -SUFFIX.length), wantsOf(w.memo));
        if (found.size >= MAX_LISTED) break;
      }
    } catch {
      return; // the server is away: keep what we knew
    }
    const now = Date.now();
    for (const [id, started] of this.startedAt) {
      if (now - started.at > STARTED_GRACE_MS) {
        this.startedAt.delete(id);
        continue;
      }
      const listed = found.get(id);
      found.set(id, listed ? union(listed, started.wants) : started.wants);
    }
    this.readAt = Date.now();
    this.update(found);
  }

  /** Takes the new list and wakes the sinks whose conversation became followed as they wait for. */
  private update(next: Map<string, FollowerWants>): void {
    const before = this.followed;
    this.followed = next;
    for (const [id, listeners] of this.listeners) {
      const now = next.get(id);
      if (!now) continue;
      const was = before.get(id);
      const lines = now.lines && !was?.lines;
      const news = !was || (now.events && !was.events);
      for (const listener of listeners) if (listener.on === 'lines' ? lines : news) listener.wake();
    }
  }
}

/** A sink's wish to hear when its conversation becomes followed (see FollowedWatch). */
interface Listener {
  on: FollowedWatch;
  wake: () => void;
}

function union(a: FollowerWants, b: FollowerWants): FollowerWants {
  return { lines: a.lines || b.lines, events: a.events || b.events };
}
