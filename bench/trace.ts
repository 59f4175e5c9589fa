// Where the time of a durable step goes: one conversation of N steps (`npx tsx bench/trace.ts 40`),
// then its history's timeline: dispatch and run times per activity and workflow task; TRACE_RAW=1
// prints every gap in order (a change over time shows there); TRACE_WORKER_NODE_OPTIONS is given to
// the worker (e.g. `--require` a script that starts the inspector's profiler).
import { Conversation } from '../src/client.js';
import { eventsQuery } from '../src/workflows/messages.js';
import { startHarness } from '../test/support/harness.js';
import { benchAgent, stepScript } from './step.js';

const steps = Number(process.argv[2] ?? 30);
const h = await startHarness({ name: 'trace', script: stepScript(steps), record: false });
const worker = await h.startWorker(process.env.TRACE_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.TRACE_WORKER_NODE_OPTIONS } : {});
const conversation = await Conversation.create(h.client, { agent: benchAgent(), workspace: await h.workspace(), firstMessage: 'go', run: true, condenser: false });
await conversation.waitUntilStopped({ timeoutMs: 600_000 });
const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
const ms = (t: unknown) => {
  const ts = t as { seconds?: { toNumber(): number } | number; nanos?: number };
  const s = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
  return s * 1000 + (ts.nanos ?? 0) / 1e6;
};
const gaps = new Map<string, number[]>();
const add = (k: string, v: number) => gaps.set(k, [...(gaps.get(k) ?? []), v]);
const scheduled = new Map<string, { at: number; type: string }>();
const events = history.events ?? [];
for (let i = 1; i < events.length; i++) {
  const e = events[i]!;
  const prev = events[i - 1]!;
  const t = ms(e.eventTime);
  const id = String(e.eventId);
  if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { at: t, type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?' });
  const started = e.activityTaskStartedEventAttributes;
  if (started) {
    const s = scheduled.get(String(started.scheduledEventId));
    if (s) add(`${s.type}: scheduled → started`, t - s.at);
  }
  const done = e.activityTaskCompletedEventAttributes;
  if (done) {
    const s = scheduled.get(String(done.scheduledEventId));
    if (s) add(`${s.type}: scheduled → completed`, t - s.at);
  }
  if (e.workflowTaskStartedEventAttributes) add('workflow task: scheduled → started', t - ms(prev.eventTime));
  if (e.workflowTaskCompletedEventAttributes) add('workflow task: started → completed', t - ms(prev.eventTime));
}
const first = ms(events[0]!.eventTime);
const last = ms(events[events.length - 1]!.eventTime);
console.log(`${steps} steps, ${events.length} events, ${((last - first) / (steps + 1)).toFixed(1)} ms per step in history time`);
for (const [k, v] of gaps) {
  const sorted = [...v].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(1);
  console.log(`${k.padEnd(40)} n=${String(v.length).padStart(3)} mean ${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(1)} ms · p10 ${at(0.1)} p50 ${at(0.5)} p90 ${at(0.9)}`);
}
if (process.env.TRACE_RAW) for (const [k, v] of gaps) console.log(k, v.map((x) => x.toFixed(0)).join(' ')); // every gap, in order
// One events query (what each model call makes for the events it has not seen), timed.
const handle = h.client.workflow.getHandle(conversation.id);
const queries: number[] = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  await handle.query(eventsQuery, 10, 3);
  queries.push(performance.now() - t);
}
queries.sort((a, b) => a - b);
console.log(`events query from a client: p50 ${queries[10]!.toFixed(1)} ms`);
await worker.kill();
await h.close();
process.exit(0);
