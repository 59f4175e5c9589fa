// The worker's side of the live stream: activities push deltas into a sink; every FLUSH_MS the sink
// publishes what gathered (coalesced and masked by LiveBuffer) to the conversation's stream workflow
// as one batched signal. Live lines are a view, never the record: nothing here may slow or fail the
// activity that feeds it, so every error ends in a one-time warning.
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { LiveBuffer } from './live-buffer.js';
import { LIVE_STREAM_WORKFLOW, LIVE_TOPIC, STEP_TOPIC, liveStreamId, type LiveItem, type LiveStreamInput } from './stream-id.js';

/**
 * How often a sink publishes what gathered: the floor of a follower's delay, and of signals per second.
 * Each publish costs ~9 ms of worker CPU and ~13 ms of server CPU on a 2-core machine (a signal and an
 * update, a workflow task each, on the stream workflow) and ~10 history events there: at 60 ms a
 * streaming conversation took a third of a core; at 150 ms a word still reaches a follower in ~100 ms
 * (p50; bench/live.ts, docs/benchmarks.md "Live view").
 */
export const FLUSH_MS = 150;
/** How long an activity's end waits for its last lines to be published. */
const CLOSE_WAIT_MS = 2_000;
/** A stream workflow known to run is not started again within this long. */
const STARTED_TTL_MS = 30_000;

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
  private readonly started = new Map<string, { at: number; ready: Promise<void> }>();
  private warned = false;

  /**
   * @param options.taskQueue - The workflow task queue (where the stream workflows run).
   * @param options.secrets - Values masked in every line.
   * @param options.enabled - FAHEEM_LIVE; off gives NO_LIVE sinks.
   */
  constructor(private readonly options: { taskQueue: string; secrets: readonly string[]; enabled: boolean; flushMs?: number }) {}

  /** A sink for one activity of `conversationId`; `client` is the activity's (Context.current().client). */
  open(client: Client | undefined, conversationId: string): LiveSink {
    if (!this.options.enabled || !client) return NO_LIVE;
    let ready = this.ensureStream(client, conversationId);
    const stream = WorkflowStreamClient.create(client, liveStreamId(conversationId), {
      // This sink decides when to send (flush()); the stream client's own timer only backs it up. It
      // stays short: after dispose its last sleep still holds the process up to this long.
      batchInterval: '200 milliseconds',
      maxRetryDuration: '10 seconds',
    });
    const topic = stream.topic<LiveItem>(LIVE_TOPIC);
    const steps = stream.topic<LiveItem>(STEP_TOPIC);
    const buffer = new LiveBuffer(this.options.secrets);
    let sending: Promise<void> | undefined;
    let closed = false;
    const send = async (final: boolean) => {
      const items = buffer.drain(final);
      if (!items.length) return;
      for (const item of items) (item.kind === 'step_start' ? steps : topic).publish(item);
      await ready;
      await stream.flush();
    };
    const tick = () => {
      if (sending || buffer.isEmpty) return;
      sending = send(false)
        .catch((err: unknown) => {
          this.warn(conversationId, err);
          // The stream may have ended (idle) since: start it again for the next lines.
          ready = this.ensureStream(client, conversationId);
        })
        .finally(() => (sending = undefined));
    };
    const timer = setInterval(tick, this.options.flushMs ?? FLUSH_MS);
    timer.unref();
    return {
      push: (item) => {
        if (!closed) buffer.push(item);
      },
      close: async () => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        const last = (async () => {
          try {
            await sending;
            await send(true);
          } finally {
            // Always: the stream client's flusher would otherwise go on (and hold the process).
            await stream[Symbol.asyncDispose]().catch(() => undefined);
          }
        })().catch((err: unknown) => this.warn(conversationId, err));
        await Promise.race([last, new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref())]);
      },
    };
  }

  /** Starts the stream workflow unless it runs (a closed one is started afresh). */
  private ensureStream(client: Client, conversationId: string): Promise<void> {
    const known = this.started.get(conversationId);
    if (known && Date.now() - known.at < STARTED_TTL_MS) return known.ready;
    const input: LiveStreamInput = { conversationId };
    const ready = client.workflow
      .start(LIVE_STREAM_WORKFLOW, {
        workflowId: liveStreamId(conversationId),
        taskQueue: this.options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        // Its tasks are tiny; one lost with a dead worker is given to another soon (default: 10 s).
        workflowTaskTimeout: '3 seconds',
      })
      .then(() => undefined);
    this.started.set(conversationId, { at: Date.now(), ready });
    ready.catch(() => this.started.delete(conversationId));
    if (this.started.size > 10_000) this.started.delete(this.started.keys().next().value as string);
    return ready;
  }

  private warn(conversationId: string, err: unknown): void {
    // The stream may have ended between two checks: start it again next time.
    this.started.delete(conversationId);
    if (this.warned) return;
    this.warned = true;
    console.warn(
      `faheem: live lines for ${conversationId} could not be published (followers miss them; the conversation goes on): ${(err as Error)?.message ?? String(err)}`,
    );
  }
}
