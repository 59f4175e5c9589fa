// Which conversations somebody follows, as one worker knows it: a follower starts the
// conversation's stream workflow (`<id>::live`, see subscribe.ts), and the worker lists the running
// stream workflows, one visibility query for all its conversations, every REFRESH_MS while any of
// its activities has a live sink open (and for a little while after). A conversation nobody
// follows costs its worker nothing but its share of that one query. A stream's memo says whether a
// follower reads its live lines (LINES_MEMO): one that only waits for news (`waitUntilStopped`)
// gets change notices, and no lines are published for it.
import type { Client } from '@temporalio/client';
import { LINES_MEMO, RUNNING_STREAMS_QUERY, liveStreamId } from './stream-id.js';

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
  /** The followed conversations whose live lines a follower reads. */
  private lineIds = new Set<string>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private open = 0;
  private lastClose = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private client: Client | undefined;
  /** When the list was last read (ms since the epoch). */
  private readAt = 0;
  /** Streams that told this worker they started, and when (see started()). */
  private readonly startedAt = new Map<string, { at: number; lines: boolean }>();
  /** Visibility queries made (benches read it). */
  queries = 0;

  constructor(private readonly refreshMs = REFRESH_MS) {}

  /** Whether someone follows the conversation (as of the last list). */
  has(conversationId: string): boolean {
    return this.ids.has(conversationId);
  }

  /** Whether someone reads the conversation's live lines (as of the last list). */
  wantsLines(conversationId: string): boolean {
    return this.lineIds.has(conversationId);
  }

  /**
   * A sink opens: `onFollowed` is called when its conversation becomes followed (with `lines`:
   * when a follower begins to read its live lines). The returned function closes it. Reading
   * starts (at once) if it was not running.
   */
  watch(client: Client, conversationId: string, onFollowed: () => void, options: { lines?: boolean } = {}): () => void {
    this.client = client;
    let set = this.listeners.get(conversationId);
    if (!set) this.listeners.set(conversationId, (set = new Set()));
    const listener: Listener = { lines: options.lines === true, wake: onFollowed };
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
    if (this.ids.has(conversationId)) return true;
    if (!this.timer || Date.now() - this.readAt > 2 * this.refreshMs) await this.refresh();
    return this.ids.has(conversationId);
  }

  /**
   * A stream workflow of this worker started (its first task ran here): the conversation is
   * followed from now, before the list shows it (the list may lag by a refresh period, or more on
   * a cluster with Elasticsearch). Kept as followed for STARTED_GRACE_MS whatever the list says.
   */
  started(conversationId: string, lines = true): void {
    const before = this.startedAt.get(conversationId);
    this.startedAt.set(conversationId, { at: Date.now(), lines: lines || (before?.lines ?? false) });
    const ids = new Set(this.ids).add(conversationId);
    const lineIds = lines ? new Set(this.lineIds).add(conversationId) : this.lineIds;
    this.update(ids, lineIds);
  }

  /** A publish found the stream gone (its followers left): not followed until listed again. */
  forget(conversationId: string): void {
    this.ids.delete(conversationId);
    this.lineIds.delete(conversationId);
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
    const lines = new Set<string>();
    try {
      this.queries++;
      for await (const w of client.workflow.list({ query: RUNNING_STREAMS_QUERY, pageSize: 1000 })) {
        if (!w.workflowId.endsWith(SUFFIX)) continue;
        const id = w.workflowId.slice(0, -SUFFIX.length);
        found.add(id);
        if (w.memo?.[LINES_MEMO] !== false) lines.add(id);
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
      found.add(id);
      if (started.lines) lines.add(id);
    }
    this.readAt = Date.now();
    this.update(found, lines);
  }

  /** Takes the new lists and wakes the sinks whose conversation became followed (as they asked). */
  private update(ids: Set<string>, lineIds: Set<string>): void {
    const before = { ids: this.ids, lineIds: this.lineIds };
    this.ids = ids;
    this.lineIds = lineIds;
    for (const [id, listeners] of this.listeners) {
      const followedNow = ids.has(id) && !before.ids.has(id);
      const linesNow = lineIds.has(id) && !before.lineIds.has(id);
      for (const listener of listeners) if (listener.lines ? linesNow : followedNow) listener.wake();
    }
  }
}

/** A sink's wish to hear when its conversation becomes followed (`lines`: its lines are read). */
interface Listener {
  lines: boolean;
  wake: () => void;
}
