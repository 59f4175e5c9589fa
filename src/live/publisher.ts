// The worker's side of the live stream: activities push deltas into a sink, which publishes what
// gathered (coalesced and masked by LiveBuffer) to the conversation's stream workflow as one batched
// signal, but only while someone reads the conversation's lines (FollowedConversations: a follower
// starts the stream workflow, the worker lists them; one that only waits for news reads none).
// Nobody reading: no stream, no signal, no timer;
// the sink keeps the activity's lines so far (bounded), for a follower who comes mid-activity.
// Followed: the first lines go out at once, then less and less often while a line only grows
// (nextFlushDelay). Live lines are a view, never the record: nothing here may slow or fail the
// activity that feeds it, so every error ends in a one-time warning.
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { FollowedConversations } from './followed.js';
import { continuesLine, FLUSH_MIN_MS, keepBacklog, LiveBuffer, lineKey, MAX_LINE_CHARS, nextFlushDelay } from './live-buffer.js';
import { LIVE_TOPIC, STEP_TOPIC, liveStreamId, type LiveItem } from './stream-id.js';

/**
 * The shortest wait between two publishes of a sink (the first goes at once). Each publish costs
 * ~9 ms of worker CPU and ~13 ms of server CPU on a 2-core machine (a signal and an update, a
 * workflow task each, on the stream workflow): which is why nothing is published for a
 * conversation nobody follows, and a growing line less and less often (bench/live.ts,
 * docs/performance.md).
 */
export const FLUSH_MS = FLUSH_MIN_MS;
/** How long an activity's end waits for its last lines to be published. */
const CLOSE_WAIT_MS = 2_000;
/** Characters pushed while nobody follows before the sink folds them into its bounded backlog. */
const COMPACT_CHARS = 4 * MAX_LINE_CHARS;

/** Where one activity's live lines go. */
export interface LiveSink {
  /** Adds a line (coalesced with the lines it continues); never throws. */
  push(item: LiveItem): void;
  /** Publishes what is left and lets go (waits at most a couple of seconds); never throws. */
  close(): Promise<void>;
}

/** A sink that drops everything (live lines off, or no client). */
export const NO_LIVE: LiveSink = { push: () => undefined, close: () => Promise.resolve() };

/** Makes the sinks of one worker; see the module comment. */
export class LivePublisher {
  private warned = false;
  /** Who follows which conversation, as this worker knows it. */
  readonly followed: FollowedConversations;

  /**
   * @param options.taskQueue - The workflow task queue (where the stream workflows run; kept for callers).
   * @param options.secrets - Values masked in every line.
   * @param options.enabled - FAHEEM_LIVE; off gives NO_LIVE sinks.
   */
  constructor(private readonly options: { taskQueue: string; secrets: readonly string[]; enabled: boolean; refreshMs?: number }) {
    this.followed = new FollowedConversations(options.refreshMs);
  }

  /** A sink for one activity of `conversationId`; `client` is the activity's (Context.current().client). */
  open(client: Client | undefined, conversationId: string): LiveSink {
    if (!this.options.enabled || !client) return NO_LIVE;
    const buffer = new LiveBuffer(this.options.secrets);
    let backlog: LiveItem[] = [];
    let pushedChars = 0;
    let stream: WorkflowStreamClient | undefined;
    let sending: Promise<void> | undefined;
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    let published = false;
    let delay: number = FLUSH_MS;
    let lastKey: string | undefined;
    // Lines go out only while a follower reads them (one that waits for news alone gets none).
    const followed = () => this.followed.wantsLines(conversationId);

    const send = async (final: boolean) => {
      const items = [...backlog, ...buffer.drain(final)];
      backlog = [];
      pushedChars = 0;
      if (!items.length) return;
      stream ??= WorkflowStreamClient.create(client, liveStreamId(conversationId), {
        // This sink decides when to send (flush()); the stream client's own timer only backs it up. It
        // stays short: after dispose its last sleep still holds the process up to this long.
        batchInterval: '200 milliseconds',
        maxRetryDuration: '10 seconds',
      });
      const topic = stream.topic<LiveItem>(LIVE_TOPIC);
      const steps = stream.topic<LiveItem>(STEP_TOPIC);
      for (const item of items) (item.kind === 'step_start' ? steps : topic).publish(item);
      delay = published ? nextFlushDelay(delay, continuesLine(lastKey, items)) : FLUSH_MS;
      published = true;
      lastKey = lineKey(items[items.length - 1]!);
      await stream.flush();
    };
    const schedule = (ms: number) => {
      if (timer || closed) return;
      timer = setTimeout(() => {
        timer = undefined;
        tick();
      }, ms);
      timer.unref();
    };
    /** Nobody follows: what gathered goes into the bounded backlog. */
    const compact = () => {
      backlog = keepBacklog(backlog, buffer.drain(false));
      pushedChars = 0;
    };
    const tick = () => {
      if (sending || closed) return;
      if (!followed()) return compact();
      if (buffer.isEmpty && !backlog.length) return;
      sending = send(false)
        .catch((err: unknown) => this.lost(conversationId, err))
        .finally(() => {
          sending = undefined;
          if (!buffer.isEmpty) schedule(delay);
        });
    };
    // Someone starts following mid-activity: what this activity showed so far goes out at once.
    const unwatch = this.followed.watch(client, conversationId, () => schedule(0), 'lines');
    return {
      push: (item) => {
        if (closed) return;
        buffer.push(item);
        if (followed()) schedule(published ? delay : 0);
        else if ((pushedChars += item.text.length) > COMPACT_CHARS) compact();
      },
      close: async () => {
        if (closed) return;
        closed = true;
        unwatch();
        if (timer) clearTimeout(timer);
        if (!followed() && !stream) return; // nobody follows: nothing to publish, nothing to let go
        const last = (async () => {
          try {
            await sending;
            if (followed()) await send(true);
          } finally {
            // Always: the stream client's flusher would otherwise go on (and hold the process).
            await stream?.[Symbol.asyncDispose]().catch(() => undefined);
          }
        })().catch((err: unknown) => this.lost(conversationId, err));
        await Promise.race([last, new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
      },
    };
  }

  /** A publish failed: the stream ended (its followers left), or something else went wrong (warned once). */
  private lost(conversationId: string, err: unknown): void {
    this.followed.forget(conversationId);
    if (isGone(err) || this.warned) return;
    this.warned = true;
    console.warn(
      `faheem: live lines for ${conversationId} could not be published (followers miss them; the conversation goes on): ${(err as Error)?.message ?? String(err)}`,
    );
  }
}

/** Whether a publish failed because the stream workflow is not running (any more). */
function isGone(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: unknown }).name;
    const message = String((e as { message?: unknown }).message ?? '');
    if (name === 'WorkflowNotFoundError' || /not found|already completed|workflow execution.*(completed|closed)/i.test(message))
      return true;
  }
  return false;
}
