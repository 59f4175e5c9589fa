// Where the time of a durable step goes: one conversation of N steps (`npx tsx bench/trace.ts 40`),
// then its history's timeline: dispatch and run times per activity and workflow task; TRACE_RAW=1
// prints every gap in order (a change over time shows there); TRACE_WORKER_NODE_OPTIONS is given to
// the worker (e.g. `--require` a script that starts the inspector's profiler).
import { eventsQuery } from '../src/conversation/workflow/messages.js';
import { startHarness } from '../test/support/harness.js';
import { addHistoryGaps, describeGaps, eventMs } from './history-gaps.js';
import { startBenchConversation, stepScript } from './step.js';

const steps = Number(process.argv[2] ?? 30);
const h = await startHarness({ name: 'trace', script: stepScript(steps), record: false });
const worker = await h.startWorker(process.env.TRACE_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.TRACE_WORKER_NODE_OPTIONS } : {});
const conversation = await startBenchConversation(h);
await conversation.waitUntilStopped({ timeoutMs: 600_000 });
const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
const events = history.events ?? [];
const gaps = new Map<string, number[]>();
addHistoryGaps(events, gaps);
const first = eventMs(events[0]!.eventTime);
const last = eventMs(events[events.length - 1]!.eventTime);
console.log(`${steps} steps, ${events.length} events, ${((last - first) / (steps + 1)).toFixed(1)} ms per step in history time`);
for (const line of describeGaps(gaps)) console.log(line);
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
