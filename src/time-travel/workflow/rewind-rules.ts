// Time travel's pure rules: which events a rewind takes out of the prompt, the checkpoints a
// conversation keeps per step, and what a rewind cannot undo. No I/O: the workflow and the
// model-call worker both use these.
import type { CheckpointEntry, ConversationEvent, RewindEvent } from '../../core/types.js';

/** Said with every rewind, and in the README: what putting the workspace back does not undo. */
export const NOT_UNDONE =
  'A rewind does not undo: processes that were running (they are ended), the state of MCP servers, files outside the workspace or ignored by its .gitignore, files over the checkpoint size cap, and anything sent over the network (pushes, API calls, messages).';

/** How many recent checkpoints keep the tools' state (older ones restore files only). */
export const TOOL_STATE_KEPT = 100;

/** The [from, to) index ranges that rewinds took out of the prompt. */
export function rewoundRanges(events: readonly ConversationEvent[]): [number, number][] {
  const out: [number, number][] = [];
  for (const e of events) if (e.kind === 'rewind') out.push([e.dropFrom, e.dropTo]);
  return out;
}

/** Whether the event with this index was left behind by a rewind. */
export function inRanges(index: number, ranges: readonly (readonly [number, number])[]): boolean {
  for (const [from, to] of ranges) if (index >= from && index < to) return true;
  return false;
}

/** What leaves the prompt: what rewinds left behind, and user messages a UserPromptSubmit hook refused. */
export function droppedRanges(events: readonly ConversationEvent[]): [number, number][] {
  const out: [number, number][] = [];
  for (const e of events) {
    if (e.kind === 'rewind') out.push([e.dropFrom, e.dropTo]);
    else if (e.kind === 'refused') out.push([e.messageIndex, e.messageIndex + 1]);
  }
  return out;
}

/** The events still on the conversation's line: without those rewinds left behind or hooks refused, and without the rewind events themselves. */
export function liveEvents(events: readonly ConversationEvent[]): readonly ConversationEvent[] {
  const ranges = droppedRanges(events);
  if (ranges.length === 0) return events;
  return events.filter((e) => e.kind !== 'rewind' && !inRanges(e.index, ranges));
}

/** Events as `faheem events` shows them: those a rewind left behind carry `rewound: true`. */
export function markRewound<E extends ConversationEvent>(
  events: readonly E[],
  ranges: readonly (readonly [number, number])[],
): (E & { rewound?: true })[] {
  if (ranges.length === 0) return [...events];
  return events.map((e) => (inRanges(e.index, ranges) ? { ...e, rewound: true as const } : e));
}

/**
 * The checkpoints after `entry` was taken. Older checkpoints keep their files but not the tools'
 * state, so the carried list stays small. A new list: the entries given are not changed.
 */
export function withCheckpoint(entries: readonly CheckpointEntry[], entry: CheckpointEntry): CheckpointEntry[] {
  const out = [...entries, entry];
  let kept = 0;
  for (let i = out.length - 1; i >= 0; i--) {
    const e = out[i] as CheckpointEntry;
    if (e.toolState && ++kept > TOOL_STATE_KEPT) {
      const { toolState: _dropped, ...rest } = e;
      out[i] = rest;
    }
  }
  return out;
}

/** The checkpoints after a rewind to `step`: the later ones of the current line are left behind (still listed). */
export function rewoundCheckpoints(entries: readonly CheckpointEntry[], step: number): CheckpointEntry[] {
  return entries.map((e) => (!e.rewound && e.step > step ? { ...e, rewound: true } : e));
}

/** A conversation's checkpoints, one per step, in the order they were taken (a view over plain data). */
export class CheckpointList {
  private entries: readonly CheckpointEntry[];

  constructor(entries: readonly CheckpointEntry[] = []) {
    this.entries = entries;
  }

  /** Every checkpoint, rewound ones included, oldest first. */
  all(): readonly CheckpointEntry[] {
    return this.entries;
  }

  /** The checkpoint of step `step` on the current line (not one a rewind left behind). */
  active(step: number): CheckpointEntry | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i] as CheckpointEntry;
      if (e.step === step && !e.rewound) return e;
    }
    return undefined;
  }

  /** The newest checkpoint on the current line with a commit (what a step that changed nothing reuses). */
  latestCommit(): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i] as CheckpointEntry;
      if (!e.rewound && e.commit) return e.commit;
    }
    return undefined;
  }

  /** The steps one may rewind to (with a commit, on the current line). */
  restorable(): number[] {
    return this.entries.filter((e) => !e.rewound && e.commit).map((e) => e.step);
  }

  add(entry: CheckpointEntry): void {
    this.entries = withCheckpoint(this.entries, entry);
  }

  /** After a rewind to `step`: the later checkpoints of the current line are left behind (still listed). */
  rewindTo(step: number): void {
    this.entries = rewoundCheckpoints(this.entries, step);
  }

  /** Plain data for the carried state. */
  toJSON(): CheckpointEntry[] {
    return this.entries.map((e) => ({ ...e }));
  }
}

/** The rewind request's answer. */
export interface RewindAnswer {
  toStep: number;
  commit: string;
  /** The checkpoint of the workspace just before the rewind (restore it to undo the rewind). */
  before: string;
  /** Events that left the prompt. */
  dropped: number;
}

/** Why `rewind --to step` cannot be done, or undefined when it can. */
export function rewindRefusal(step: unknown, list: CheckpointList, closed: boolean): string | undefined {
  if (closed) return 'the conversation is closed; fork it instead (`faheem fork ID --at N`)';
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0) return 'the step must be a whole number, 0 or more';
  const entry = list.active(step);
  if (!entry?.commit) {
    const steps = list.restorable();
    return `step ${step} has no checkpoint${steps.length ? `; steps with one: ${describeSteps(steps)}` : ' (no checkpoints yet)'}`;
  }
  return undefined;
}

/** `0–4, 6` for [0, 1, 2, 3, 4, 6]. */
export function describeSteps(steps: readonly number[]): string {
  const parts: string[] = [];
  let start: number | undefined;
  let prev: number | undefined;
  for (const s of [...steps, Number.NaN]) {
    if (prev !== undefined && s === prev + 1) {
      prev = s;
      continue;
    }
    if (start !== undefined && prev !== undefined) parts.push(start === prev ? String(start) : `${start}–${prev}`);
    start = s;
    prev = s;
  }
  return parts.join(', ');
}

/** Whether `e` is a rewind event. */
export function isRewind(e: ConversationEvent): e is RewindEvent {
  return e.kind === 'rewind';
}

/**
 * Whether `events` (indices below `count`, as a worker holds them) lack an event the prompt needs:
 * after a rewind to before a condensation, the events it had replaced come back, and the run that
 * holds the transcript may no longer hold them (earlier runs do).
 */
export function lacksPromptEvents(events: readonly ConversationEvent[], count: number): boolean {
  const ranges = droppedRanges(events);
  if (!events.some((e) => e.kind === 'rewind')) return false;
  if (ranges.length === 0) return false;
  let latest: { forgottenFrom: number; forgottenTo: number } | undefined;
  for (const e of events) if (e.kind === 'condensation' && !inRanges(e.index, ranges)) latest = e;
  const have = new Set(events.map((e) => e.index));
  for (let i = 0; i < count; i++) {
    if (have.has(i) || inRanges(i, ranges)) continue;
    if (latest && i >= latest.forgottenFrom && i < latest.forgottenTo) continue;
    return true;
  }
  return false;
}
