// Where a step's time goes when many conversations run at once (`npx tsx bench/trace-many.ts 50`):
// N conversations of 10 steps with a 100 ms model, then the mean of each gap in their histories
// (dispatch and run times per activity and workflow task).
import { Conversation } from '../src/client/client.js';
import { startHarness } from '../test/support/harness.js';
import { addHistoryGaps, describeGaps } from './history-gaps.js';
import { benchAgent, stepScript } from './step.js';

const n = Number(process.argv[2] ?? 50);
const h = await startHarness({ name: 'trace-many', script: () => ({ content: 'ok' }), record: false });
const worker = await h.startWorker();
const slow = stepScript(10);
h.model.setScript(async (req) => ({ ...(await slow(req)), delayMs: 100 }));
const t0 = performance.now();
const conversations = await Promise.all(
  Array.from({ length: n }, async () =>
    Conversation.create(h.client, { agent: benchAgent(), workspace: await h.workspace(), firstMessage: 'go', run: true }),
  ),
);
await Promise.all(conversations.map((c) => c.waitUntilStopped({ timeoutMs: 600_000 })));
console.log(`${n} × 10 steps in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const gaps = new Map<string, number[]>();
for (const c of conversations) addHistoryGaps((await h.client.workflow.getHandle(c.id).fetchHistory()).events ?? [], gaps);
for (const line of describeGaps(gaps)) console.log(line);
await worker.kill();
await h.close();
process.exit(0);
