// Which conversations somebody follows, as one worker knows it: a follower starts the
// conversation's stream workflow (`<id>::live`, see subscribe.ts), and the worker lists the running
// stream workflows, one visibility query for all its conversations, every REFRESH_MS while any of
// its activities has a live sink open (and for a little while after). A conversation nobody
// follows costs its worker nothing but its share of that one query.
import type { Client } from '@temporalio/client';
import { RUNNING_STREAMS_QUERY, liveStreamId } from './stream-id.js';

/** How often the list of followed conversations is read while sinks are open. */
export const REFRESH_MS = 250;
/** After the last sink closed, the list is still read this long (the next activity is near). */
const LINGER_MS = 3_000;
/** At most this many followed conversations are listed (beyond, the oldest stream starts are not seen). */
const MAX_LISTED = 10_000;
const SUFFIX = liveStreamId('');
/** A stream that said it started counts as followed this long, listed or not. */
const STARTED_GRACE_MS = 10_000;

/** The followed conversations of one worker; see the module comment. */
export class FollowedConversations {
  private ids = new Set<string>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private open = 0;
  private lastClose = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private client: Client | undefined;
  /** When the list was last read (ms since the epoch). */
  private readAt = 0;
  /** Streams that told this worker they started, and when (see started()). */
  private readonly startedAt = new Map<string, number>();
  /** Visibility queries made (benches read it). */
  queries = 0;

  constructor(private readonly refreshMs = REFRESH_MS) {}

  /** Whether someone follows the conversation (as of the last list). */
  has(conversationId: string): boolean {
    return this.ids.has(conversationId);
  }

  /**
   * A sink opens: `onFollowed` is called when its conversation becomes followed. The returned
   * function closes it. Reading starts (at once) if it was not running.
   */
  watch(client: Client, conversationId: string, onFollowed: () => void): () => void {
    this.client = client;
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    set.add(onFollowed);
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
      set.delete(onFollowed);
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
    if (this.ids.has(conversationId)) return true;
    if (!this.timer || Date.now() - this.readAt > 2 * this.refreshMs) await this.refresh();
    return this.ids.has(conversationId);
  }

  /**
   * A stream workflow of this worker started (its first task ran here): the conversation is
   * followed from now, before the list shows it (the list may lag by a refresh period, or more on
   * a cluster with Elasticsearch). Kept as followed for STARTED_GRACE_MS whatever the list says.
   */
  started(conversationId: string): void {
    this.startedAt.set(conversationId, Date.now());
    if (this.ids.has(conversationId)) return;
    this.ids.add(conversationId);
    for (const listener of this.listeners.get(conversationId) ?? []) listener();
  }

  /** A publish found the stream gone (its followers left): not followed until listed again. */
  forget(conversationId: string): void {
    this.ids.delete(conversationId);
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
    const found = new Set<string>();
    try {
      this.queries++;
      for await (const w of client.workflow.list({ query: RUNNING_STREAMS_QUERY, pageSize: 1000 })) {
        if (w.workflowId.endsWith(SUFFIX)) found.add(w.workflowId.slice(0, -SUFFIX.length));
        if (found.size >= MAX_LISTED) break;
      }
    } catch {
      return; // the server is away: keep what we knew
    }
    const now = Date.now();
    for (const [id, at] of this.startedAt) {
      if (now - at > STARTED_GRACE_MS) this.startedAt.delete(id);
      else found.add(id);
    }
    const before = this.ids;
    this.ids = found;
    this.readAt = Date.now();
    for (const id of found) {
      if (before.has(id)) continue;
      for (const listener of this.listeners.get(id) ?? []) listener();
    }
  }
}
