// `follow({ live: true })`: the events and the live lines of one conversation, merged in the order a
// reader expects: a step's lines before the event that records the step, and the events before a
// new step's (or tool call's) first line. Live lines never wait behind a slow query (a busy worker
// answers queries late): while one runs, the lines of the step under way keep coming; only a new
// step's lines wait, for the events that come before them.
import type { ConversationEvent, ConversationState } from '../core/types.js';
import type { LiveReader } from './subscribe.js';
import type { LiveDelta } from './types.js';

/** How long a new step's first line waits for the events before it, at most. */
const HOLD_MS = 250;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** What the merged follow reads the events from (the Conversation's own calls). */
export interface FollowSource {
  events(from: number): Promise<ConversationEvent[]>;
  state(): Promise<ConversationState>;
  /** The events from `after`, once there are any (or after a pause, when the workflow cannot tell of news). */
  news(after: number): Promise<ConversationEvent[]>;
}

/** What a live line continues: a command's output (by tool call), or a model call (by step). */
export function segmentOf(line: LiveDelta): string {
  return line.kind === 'output_delta' || (line.kind === 'retry' && line.toolCallId !== undefined && line.step === undefined)
    ? `tool:${line.toolCallId ?? ''}`
    : `call:${line.eventCount ?? ''}:${line.step ?? ''}`;
}

/** The merged follow; see the module comment. */
export async function* followLive(
  source: FollowSource,
  reader: LiveReader,
  options: { fromIndex?: number; liveFrom?: number; until?: (s: ConversationState) => boolean; signal?: AbortSignal },
): AsyncGenerator<ConversationEvent | LiveDelta> {
  const signal = options.signal;
  let next = options.fromIndex ?? 0;
  let segment: string | undefined;
  const isNew = (line: LiveDelta) => segment !== undefined && segmentOf(line) !== segment;

  /**
   * Takes the queued lines of the step under way (every line, with `all`); from a new step's first
   * line on, they stay queued. With `unknownIsNew`, a line before any step is known counts as new.
   */
  function takeCurrent(unknownIsNew: boolean, all = false): { now: LiveDelta[]; waiting: boolean } {
    const lines = reader.take();
    const cut = all ? -1 : segment === undefined ? (unknownIsNew && lines.length ? 0 : -1) : lines.findIndex(isNew);
    const now = cut < 0 ? lines : lines.slice(0, cut);
    if (cut >= 0) reader.putBack(lines.slice(cut));
    if (now.length) segment = segmentOf(now[now.length - 1]!);
    return { now, waiting: cut >= 0 };
  }

  /**
   * Yields the step-under-way's lines while `pending` settles; a new step's lines stay queued, for
   * at most HOLD_MS (a query on a busy worker can take seconds: past that, order gives way to
   * the words arriving on time).
   */
  async function* meanwhile<T>(pending: Promise<T>): AsyncGenerator<LiveDelta, T> {
    let settled = false;
    const done = pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    let heldSince: number | undefined;
    while (!settled && !signal?.aborted) {
      await Promise.race([reader.ready(signal), done]);
      const overdue = heldSince !== undefined && Date.now() - heldSince >= HOLD_MS;
      const { now, waiting } = takeCurrent(false, overdue);
      yield* now;
      if (waiting) {
        heldSince ??= Date.now();
        await Promise.race([done, sleep(HOLD_MS - (Date.now() - heldSince))]);
      }
    }
    return pending;
  }

  /** Yields the queued lines; before a new step's first line, the events that landed meanwhile. */
  async function* drain(): AsyncGenerator<ConversationEvent | LiveDelta> {
    for (;;) {
      const { now, waiting } = takeCurrent(true);
      yield* now;
      if (!waiting) {
        if (!now.length) return;
        continue;
      }
      const [first, ...rest] = reader.take();
      reader.putBack(rest);
      // The events before it, if they can be had within HOLD_MS (else they follow when they land).
      const landed = await Promise.race([source.events(next).catch(() => undefined), sleep(HOLD_MS).then(() => undefined)]);
      if (landed) {
        yield* landed;
        next += landed.length;
      }
      segment = segmentOf(first!);
      yield first!;
    }
  }

  let batch = await source.events(next);
  if (options.liveFrom === undefined) {
    // Come late: the events so far, then the lines of the step under way (none when nothing runs).
    const running = (await source.state()).status === 'running';
    yield* batch;
    next += batch.length;
    batch = [];
    await reader.catchUp();
    const backlog = reader.take();
    if (running && backlog.length) {
      segment = segmentOf(backlog[backlog.length - 1]!);
      yield* backlog;
    }
  }
  for (;;) {
    if (batch.length) {
      // Every line of the step under way before the event that records it; a next step's after.
      yield* meanwhile(reader.catchUp());
      // Lines of a step not yet known to this follow (a resume) may be of a later step: after the events.
      yield* takeCurrent(true).now;
    }
    yield* batch;
    next += batch.length;
    if (signal?.aborted) return;
    if (options.until) {
      const s = yield* meanwhile(source.state());
      if (options.until(s) && s.events <= next) return;
    }
    const after = next;
    const news = source.news(after);
    let settled = false;
    void news.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Lines as they come until the next events land; `drain` may yield events itself (next moves).
    while (!settled && !signal?.aborted) {
      await Promise.race([reader.ready(signal), news.catch(() => undefined)]);
      yield* drain();
    }
    if (signal?.aborted) return;
    batch = (await news).slice(next - after);
  }
}
