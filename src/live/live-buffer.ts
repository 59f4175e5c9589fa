// What the worker holds between two publishes of live lines: deltas coalesced by what they
// continue (one line per kind and tool call a publish, not one per token), secrets masked even when
// a secret is split across two deltas, and a flood (a command printing megabytes) cut to its newest
// part. Pure: no I/O, no timers.
import { redact } from '../security/redact.js';
import type { LiveItem } from './stream-id.js';

/** Most characters one coalesced line carries per publish; beyond, the newest part is kept. */
export const MAX_LINE_CHARS = 16_384;

interface Pending {
  key: string;
  item: LiveItem;
}

const keyOf = (i: LiveItem) => `${i.kind}\u0000${i.step ?? ''}\u0000${i.toolCallId ?? ''}`;

/** Coalesces, masks and bounds live deltas; see the module comment. */
export class LiveBuffer {
  private pending: Pending[] = [];
  /** Per line key: text held back because it may be the start of a secret. */
  private readonly held = new Map<string, { item: LiveItem; text: string }>();

  /**
   * @param secrets - Values to mask (the worker's keys and named secrets).
   * @param maxLineChars - See MAX_LINE_CHARS.
   */
  constructor(
    private readonly secrets: readonly string[],
    private readonly maxLineChars = MAX_LINE_CHARS,
  ) {}

  /** Adds a delta; a marker (retry, step start) is a barrier (nothing before it merges with anything after). */
  push(item: LiveItem): void {
    if (item.kind === 'retry' || item.kind === 'step_start') {
      this.pending.push({ key: '', item: { ...item } });
      return;
    }
    if (!item.text) return;
    const key = keyOf(item);
    const last = this.pending[this.pending.length - 1];
    if (last && last.key === key) last.item = { ...last.item, text: last.item.text + item.text };
    else this.pending.push({ key, item: { ...item } });
  }

  /** Whether a drain would give anything now. */
  get isEmpty(): boolean {
    return this.pending.length === 0 && this.held.size === 0;
  }

  /**
   * The lines to publish now, in order. Unless `final`, a line's last characters that begin a
   * secret wait for the next drain (released after one drain with nothing new).
   */
  drain(final = false): LiveItem[] {
    const out: LiveItem[] = [];
    const touched = new Set<string>();
    for (const { key, item } of this.pending) {
      if (item.kind === 'retry' || item.kind === 'step_start') {
        // The lost attempt's (or the ended step's) held text is void too.
        this.held.clear();
        out.push(item);
        continue;
      }
      touched.add(key);
      const before = this.held.get(key);
      this.held.delete(key);
      this.emit(out, key, item, (before?.text ?? '') + item.text, final);
    }
    this.pending = [];
    for (const [key, h] of [...this.held]) {
      if (touched.has(key) && !final) continue;
      this.held.delete(key);
      const text = redact(h.text, this.secrets);
      if (text) out.push({ ...h.item, text });
    }
    return out;
  }

  private emit(out: LiveItem[], key: string, item: LiveItem, raw: string, final: boolean): void {
    // A provider key still being written (`sk-…` at the end) waits whole, unmasked: masked now, the
    // rest of it would go out in the clear with the next piece.
    const keyRun = final ? '' : (/(?:^|[^A-Za-z0-9_-])(sk-[A-Za-z0-9_*.-]*|sk?)$/.exec(raw)?.[1] ?? '');
    let text = redact(raw.slice(0, raw.length - keyRun.length), this.secrets);
    let keep = '';
    if (!final) {
      keep = text.slice(text.length - secretPrefixAtEnd(text, this.secrets));
      text = text.slice(0, text.length - keep.length);
    }
    keep += keyRun;
    if (keep) this.held.set(key, { item, text: keep });
    if (!text) return;
    if (text.length > this.maxLineChars) {
      const cut = text.length - this.maxLineChars;
      text = `[… ${cut} characters not shown live …]\n${text.slice(cut)}`;
    }
    out.push({ ...item, text });
  }
}

/** How many of `text`'s last characters are the beginning of one of `secrets` (0: none). */
export function secretPrefixAtEnd(text: string, secrets: readonly string[]): number {
  let longest = 0;
  for (const secret of secrets) {
    for (let k = Math.min(secret.length - 1, text.length); k > longest; k--) {
      if (text.endsWith(secret.slice(0, k))) {
        longest = k;
        break;
      }
    }
  }
  return longest;
}

/**
 * What a sink keeps while nobody follows its conversation (drained, masked lines), for a follower
 * who comes mid-activity: lines before the newest step marker go (a late follower is shown the
 * step under way), lines that continue one another merge, and each keeps its newest `maxLineChars`.
 * Pure: returns the new backlog.
 */
export function keepBacklog(backlog: readonly LiveItem[], items: readonly LiveItem[], maxLineChars = MAX_LINE_CHARS): LiveItem[] {
  let out: LiveItem[] = [...backlog];
  for (const item of items) {
    if (item.kind === 'step_start') {
      out = [item];
      continue;
    }
    const last = out[out.length - 1];
    if (last && item.kind !== 'retry' && last.kind !== 'retry' && last.kind !== 'step_start' && keyOf(last) === keyOf(item)) {
      out[out.length - 1] = { ...last, text: last.text + item.text };
    } else out.push(item);
  }
  return out.map((i) => {
    if (i.text.length <= maxLineChars) return i;
    const cut = i.text.length - maxLineChars;
    return { ...i, text: `[… ${cut} characters not shown live …]\n${i.text.slice(cut)}` };
  });
}

/** Shortest and longest wait between two publishes of one sink (ms). */
export const FLUSH_MIN_MS = 75;
export const FLUSH_MAX_MS = 400;

/**
 * Adaptive publishing: the wait before a sink's next publish. A line that only grows (the same
 * reply, the same command's output) is published less and less often, up to FLUSH_MAX_MS; a new
 * line (another kind, a new tool call, a marker) goes out soon again. The first publish of a sink
 * does not wait at all (the caller's choice: see publisher.ts).
 */
export function nextFlushDelay(previousMs: number, sameLine: boolean): number {
  if (!sameLine) return FLUSH_MIN_MS;
  return Math.min(FLUSH_MAX_MS, Math.max(FLUSH_MIN_MS, previousMs * 2));
}

/** Whether `items` only continue the line `lastKey` (what nextFlushDelay's `sameLine` asks). */
export function continuesLine(lastKey: string | undefined, items: readonly LiveItem[]): boolean {
  return (
    lastKey !== undefined && items.length > 0 && items.every((i) => i.kind !== 'retry' && i.kind !== 'step_start' && keyOf(i) === lastKey)
  );
}

/** The line key of an item (what coalescing goes by). */
export function lineKey(item: LiveItem): string {
  return keyOf(item);
}
