// Where a workflow's time went, read from its history: how long each activity waited to be picked up
// and took in all, how long each workflow task waited and ran, and the gap from one activity's end to
// the next one's scheduling (a workflow task and its dispatch). Used by bench/trace*.ts.
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A proto timestamp in ms. */
export function eventMs(t: unknown): number {
  const ts = t as { seconds?: { toNumber(): number } | number; nanos?: number };
  const s = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
  return s * 1000 + (ts.nanos ?? 0) / 1e6;
}

/** Adds each gap of `events` (one history, in order) to `gaps`, by kind, in order of occurrence. */
export function addHistoryGaps(events: readonly HistoryEvent[], gaps: Map<string, number[]>): void {
  const add = (k: string, v: number) => gaps.set(k, [...(gaps.get(k) ?? []), v]);
  const scheduled = new Map<string, { at: number; type: string }>();
  let lastDone = 0;
  for (let i = 1; i < events.length; i++) {
    const e = events[i] as HistoryEvent;
    const prev = events[i - 1] as HistoryEvent;
    const t = eventMs(e.eventTime);
    if (e.activityTaskScheduledEventAttributes) {
      const type = e.activityTaskScheduledEventAttributes.activityType?.name ?? '?';
      scheduled.set(String(e.eventId), { at: t, type });
      if (lastDone) add(`${type}: previous activity completed → this one scheduled`, t - lastDone);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const s = scheduled.get(String(started.scheduledEventId));
      if (s) add(`${s.type}: scheduled → started`, t - s.at);
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const s = scheduled.get(String(done.scheduledEventId));
      if (s) add(`${s.type}: scheduled → completed`, t - s.at);
      lastDone = t;
    }
    if (e.workflowTaskStartedEventAttributes) add('workflow task: scheduled → started', t - eventMs(prev.eventTime));
    if (e.workflowTaskCompletedEventAttributes) add('workflow task: started → completed', t - eventMs(prev.eventTime));
  }
}

/** One line a kind of gap: count, mean and percentiles. */
export function describeGaps(gaps: Map<string, number[]>): string[] {
  return [...gaps].map(([k, v]) => {
    const sorted = [...v].sort((a, b) => a - b);
    const at = (p: number) => (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number).toFixed(1);
    return `${k.padEnd(58)} n=${String(v.length).padStart(4)} mean ${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(1)} ms · p10 ${at(0.1)} p50 ${at(0.5)} p90 ${at(0.9)} max ${at(1)}`;
  });
}
