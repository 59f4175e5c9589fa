// Where a step's time goes when many conversations run at once (`npx tsx bench/trace-many.ts 50`):
// N conversations of 10 steps with a 100 ms model, then the mean of each gap in their histories
// (dispatch and run times per activity and workflow task).
import { Conversation } from '../src/client.js';
import { startHarness } from '../test/support/harness.js';
import { benchAgent, stepScript } from './step.js';

const n = Number(process.argv[2] ?? 50);
const h = await startHarness({ name: 'trace-many', script: () => ({ content: 'ok' }), record: false });
const worker = await h.startWorker();
const slow = stepScript(10);
h.model.setScript((req) => ({ ...slow(req), delayMs: 100 }));
const t0 = performance.now();
const conversations = await Promise.all(
  Array.from({ length: n }, async () => Conversation.create(h.client, { agent: benchAgent(), workspace: await h.workspace(), firstMessage: 'go', run: true })),
);
await Promise.all(conversations.map((c) => c.waitUntilStopped({ timeoutMs: 600_000 })));
console.log(`${n} × 10 steps in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const ms = (t: unknown) => {
  const ts = t as { seconds?: { toNumber(): number } | number; nanos?: number };
  const s = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
  return s * 1000 + (ts.nanos ?? 0) / 1e6;
};
const gaps = new Map<string, number[]>();
const add = (k: string, v: number) => gaps.set(k, [...(gaps.get(k) ?? []), v]);
for (const c of conversations) {
  const events = (await h.client.workflow.getHandle(c.id).fetchHistory()).events ?? [];
  const scheduled = new Map<string, { at: number; type: string }>();
  let lastDone = 0;
  for (let i = 1; i < events.length; i++) {
    const e = events[i]!;
    const prev = events[i - 1]!;
    const t = ms(e.eventTime);
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
    if (e.workflowTaskStartedEventAttributes) add('workflow task: scheduled → started', t - ms(prev.eventTime));
    if (e.workflowTaskCompletedEventAttributes) add('workflow task: started → completed', t - ms(prev.eventTime));
  }
}
for (const [k, v] of gaps) {
  const sorted = [...v].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(0);
  console.log(`${k.padEnd(58)} n=${String(v.length).padStart(4)} mean ${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(1)} ms · p50 ${at(0.5)} p90 ${at(0.9)} max ${at(1)}`);
}
await worker.kill();
await h.close();
process.exit(0);
