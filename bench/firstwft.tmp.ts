import { Conversation } from '../src/client.js';
import { startHarness } from '../test/support/harness.js';
import { eventMs } from './history-gaps.js';
import { benchAgent, stepScript } from './step.js';
const h = await startHarness({ name: 'firstwft', script: stepScript(2), record: false });
await h.startWorker();
const n = 12;
const convs = [];
for (let i = 0; i < n; i++) {
  const c = await Conversation.create(h.client, { agent: benchAgent(), workspace: await h.workspace(), firstMessage: 'go', run: true, condenser: false });
  convs.push(c);
  await c.waitUntilStopped({ timeoutMs: 120_000 });
}
async function firstWft(id: string) {
  const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const out: number[] = [];
  let started: number | undefined;
  for (const e of events) {
    if (e.workflowTaskStartedEventAttributes) started = eventMs(e.eventTime);
    if (e.workflowTaskCompletedEventAttributes && started !== undefined) { out.push(eventMs(e.eventTime) - started); started = undefined; }
  }
  return out;
}
for (const c of convs) {
  const a = await firstWft(c.id);
  const b = await firstWft(`${c.id}::live`).catch(() => []);
  console.log('conv WFTs', a.slice(0, 4).map((x) => x.toFixed(0)).join(' '), '| stream WFTs', b.slice(0, 3).map((x) => x.toFixed(0)).join(' '));
}
await h.close();
process.exit(0);
