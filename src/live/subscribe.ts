// The follower's side of the live stream: read a conversation's live lines from an offset, whatever
// happens to its stream workflow (not started yet, continued-as-new, ended when idle and started
// again), until told to stop. Lines that do not parse are skipped: a live view never fails a follower.
// The follower is what starts the stream workflow (on the conversation's own task queue): workers
// publish only to conversations whose stream runs (live/followed.ts), so a conversation nobody
// follows costs nothing, and the stream ends a minute after its last follower left.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { z } from 'zod';
import { FAILURE, failureTypeOf } from '../core/failure-types.js';
import {
  CHANGE_TOPIC,
  LIVE_DIVISION,
  LIVE_STREAM_WORKFLOW,
  LIVE_TOPIC,
  STEP_TOPIC,
  WANT_SIGNAL,
  WANTS_MEMO,
  liveStreamId,
  type ChangeNotice,
  type FollowerWants,
  type LiveStreamInput,
} from './stream-id.js';
import { LIVE_KINDS, type LiveDelta } from './types.js';

const LiveItemSchema = z.object({
  kind: z.enum(LIVE_KINDS),
  text: z.string(),
  step: z.number().int().optional(),
  eventCount: z.number().int().optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  attempt: z.number().int().optional(),
});

const ChangeNoticeSchema = z.object({
  events: z.number().int().nonnegative(),
  status: z.string(),
  runNumber: z.number().int(),
  closing: z.boolean().optional(),
});

/** Temporal's division attribute: a stream workflow carries LIVE_DIVISION in it (see stream-id.ts). */
export const DIVISION_KEY = defineSearchAttributeKey('TemporalNamespaceDivision', SearchAttributeType.KEYWORD);

/** What a reader reads: live lines (into its queue), change notices (to `onChange`), or both. */
export interface LiveReaderOptions {
  /** Read live lines (default true). */
  lines?: boolean;
  /** Called with each change notice read (none are read without it). */
  onChange?: (notice: ChangeNotice) => void;
  /**
   * Which notices: `events` (default), one after every workflow task that added events; `stops`,
   * only when the status changes (a wait for the run to stop: far fewer publishes).
   */
  news?: 'events' | 'stops';
}

/** How long to wait before looking again for a stream that is not there (not started, or ended); doubling up to MAX_RETRY_MS. */
const RETRY_MS = 250;
const MAX_RETRY_MS = 4_000;

/** Reads live lines into a queue in the background; see the module comment. */
export class LiveReader {
  private readonly queue: LiveDelta[] = [];
  private wake: (() => void) | undefined;
  private stopped = false;
  private next: number;
  private readonly abort = new AbortController();
  private readonly stopping: Promise<undefined>;
  private poll: AbortController | undefined;
  private retryMs = RETRY_MS;
  private noDivision = false;

  /**
   * @param from - The first offset wanted (0: from the oldest line kept).
   */
  constructor(
    private readonly client: Client,
    private readonly conversationId: string,
    from = 0,
    private readonly options: LiveReaderOptions = {},
  ) {
    this.next = from;
    this.stopping = new Promise((resolve) => this.abort.signal.addEventListener('abort', () => resolve(undefined), { once: true }));
    void this.run().catch(() => undefined);
  }

  /** The offset after the last line read (what to resume from). */
  get position(): number {
    return this.next;
  }

  /** Lines read so far and not yet taken. */
  take(): LiveDelta[] {
    return this.queue.splice(0, this.queue.length);
  }

  /** Puts lines taken but not used back in front of the queue, in their order. */
  putBack(lines: readonly LiveDelta[]): void {
    this.queue.unshift(...lines);
  }

  /** Resolves when there is a line to take (or the reader stops, or `signal` aborts). */
  async ready(signal?: AbortSignal): Promise<void> {
    if (this.queue.length || this.stopped || signal?.aborted) return;
    this.wake?.(); // one waiter at a time: an earlier one (given up on) goes
    await new Promise<void>((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Waits until every line published before now has been read (at most `timeoutMs`), so that a
   * follower shows a step's last words before the event that records the step.
   */
  async catchUp(timeoutMs = 300): Promise<void> {
    let end: number;
    try {
      end = await this.client.withDeadline(Date.now() + timeoutMs, () =>
        WorkflowStreamClient.create(this.client, liveStreamId(this.conversationId)).getOffset(),
      );
    } catch {
      return; // no stream (yet, or any more): nothing to wait for
    }
    const deadline = Date.now() + timeoutMs;
    while (this.next < end && !this.stopped && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Stops reading (a poll under way is left to end by itself). */
  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.poll?.abort();
    this.wake?.();
  }

  private push(line: LiveDelta): void {
    this.queue.push(line);
    this.wake?.();
  }

  /**
   * Starts the conversation's stream workflow unless it runs; false when the conversation is not
   * running (closed, or not there), which nothing will publish for.
   */
  private async ensureStream(): Promise<boolean> {
    try {
      const description = await this.client.workflow.getHandle(this.conversationId).describe();
      if (description.status.name !== 'RUNNING') return false;
      const wants: FollowerWants = {
        lines: this.options.lines !== false,
        events: this.options.onChange !== undefined && this.options.news !== 'stops',
      };
      const input: LiveStreamInput = { conversationId: this.conversationId, wants };
      const start = async (division: boolean) => {
        const options = {
          workflowId: liveStreamId(this.conversationId),
          taskQueue: description.taskQueue,
          args: [input] as [LiveStreamInput],
          // What the workers read to know what to publish (followed.ts).
          memo: { [WANTS_MEMO.lines]: wants.lines, [WANTS_MEMO.events]: wants.events },
          // Its tasks are tiny; one lost with a dead worker is given to another soon (default: 10 s).
          workflowTaskTimeout: '3 seconds',
          // Out of the namespace's default list: the Web UI shows one row per conversation.
          ...(division ? { typedSearchAttributes: [{ key: DIVISION_KEY, value: LIVE_DIVISION }] } : {}),
        };
        // A follower that wants more than stops tells a stream that runs already (started by one
        // that wanted less) what it wants.
        if (wants.lines || wants.events) {
          await this.client.workflow.signalWithStart(LIVE_STREAM_WORKFLOW, { ...options, signal: WANT_SIGNAL, signalArgs: [wants] });
        } else await this.client.workflow.start(LIVE_STREAM_WORKFLOW, { ...options, workflowIdConflictPolicy: 'USE_EXISTING' });
      };
      // A server that refuses the division (InvalidArgument) gets the stream in its list instead of none.
      await start(!this.noDivision).catch(async (err: unknown) => {
        if (this.noDivision || !isInvalidArgument(err)) throw err;
        this.noDivision = true;
        await start(false);
      });
      return true;
    } catch {
      return false; // not there, or the server is away: looked at again after a while
    }
  }

  private async run(): Promise<void> {
    let started = false;
    while (!this.stopped) {
      try {
        // (Again after the stream ended: a follower keeps its stream running.)
        if (!started) started = await this.ensureStream();
        const stream = WorkflowStreamClient.create(this.client, liveStreamId(this.conversationId));
        // Step markers too (never yielded): the reader's position then matches the stream's offset.
        const topics = [
          ...(this.options.lines === false ? [] : [LIVE_TOPIC, STEP_TOPIC]),
          ...(this.options.onChange ? [CHANGE_TOPIC] : []),
        ];
        const items = stream.subscribe<unknown>(topics, this.next, { pollCooldown: '5 milliseconds', resultType: true });
        for (;;) {
          // Each poll under its own signal (Temporal keeps a listener per call on it): stop() cancels
          // the poll under way, and nothing is left pending or retrying.
          const poll = new AbortController();
          this.poll = poll;
          const pending = this.client.withAbortSignal(poll.signal, () => items.next());
          pending.catch(() => undefined); // left behind when the reader stops mid-poll
          const r = await Promise.race([pending, this.stopping]);
          if (!r || r.done) break;
          const item = r.value;
          if (item.offset < this.next && this.next !== 0) continue;
          this.next = item.offset + 1;
          this.retryMs = RETRY_MS;
          if (item.topic === CHANGE_TOPIC) {
            const notice = ChangeNoticeSchema.safeParse(item.data);
            if (notice.success) this.options.onChange?.(notice.data);
            continue;
          }
          if (item.topic !== LIVE_TOPIC) continue;
          const parsed = LiveItemSchema.safeParse(item.data);
          if (parsed.success) this.push({ live: true, ...parsed.data, offset: item.offset });
        }
        if (!this.stopped) void items.return(undefined).catch(() => undefined);
      } catch (err) {
        // Fell behind the stream's truncation: go on from the oldest line kept. (Matched by type
        // name: installed as a dependency, the stream package may carry its own copy of Temporal's
        // classes, so instanceof cannot be trusted across it.)
        if (failureTypeOf(err) === FAILURE.TruncatedOffset) {
          this.next = 0;
          continue;
        }
        // Not started yet, or ended: start it and look again. Anything else too: a live view retries.
        if (!(err instanceof WorkflowNotFoundError) && this.stopped) return;
        if (err instanceof WorkflowNotFoundError && started) {
          started = false;
          continue;
        }
      }
      started = false;
      // Backing off while there is no stream (idle, or a worker with FAHEEM_LIVE=0): a page left open costs little.
      if (!this.stopped) await Promise.race([new Promise((r) => setTimeout(r, this.retryMs)), this.stopping]);
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    }
  }
}

/** Whether the server refused a request as invalid (gRPC INVALID_ARGUMENT), at any depth of causes. */
function isInvalidArgument(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 3) return true;
  }
  return false;
}
