// Conversations of any length: continue-as-new keeps each run's history small even with large
// observations (the real worker stores the carried state outside history). Signals across
// continue-as-new and what a condensed conversation carries are workflow rules, tested in process
// in test/workflow/long-conversation.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import type { Script } from '../../src/testing/scripted-model.js';
import type { ObservationEvent } from '../../src/types.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'long', script: () => ({ content: 'ok' }), record: false });
  await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

async function runs(id: string): Promise<{ runId: string; historyLength: number; historySize: number }[]> {
  const out = [];
  for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    const d = await h.client.workflow.getHandle(id, wf.runId).describe();
    out.push({ runId: wf.runId, historyLength: d.historyLength, historySize: d.historySize ?? 0 });
  }
  return out;
}

// Three runs of 25 steps (continue-as-new every 25 instead of the default 100: the same code path,
// a quarter of the steps). Each run's history grows with its steps, not with the conversation: a
// run that carried every earlier observation again (quadratic) would pass 6 MB in 25 steps, against the 4 MB bound.
test('75 steps with 20 KB observations over three runs: every event readable, history per run small and flat', async () => {
  const STEPS = 75;
  const EVERY = 25;
  const script: Script = (req) => {
    const done = req.body.messages.filter((m) => m.role === 'tool').length;
    if (done >= STEPS) return { content: 'Finished all steps.' };
    return { toolCalls: [{ name: 'terminal', arguments: { command: `printf 'step-${done}:'; head -c 20000 /dev/zero | tr '\\0' 'x'` } }] };
  };
  h.model.setScript(script);
  const started = Date.now();
  // The script counts the results in its prompt, so the condenser (which would shorten it) is off.
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Go',
    run: true,
    condenser: false,
    continueAsNewEverySteps: EVERY,
  });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 250, 900_000);
  const seconds = (Date.now() - started) / 1000;
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const events = await conversation.events();
  const observations = events.filter((e): e is ObservationEvent => e.kind === 'observation');
  assert.equal(observations.length, STEPS);
  observations.forEach((o, i) => {
    assert.ok(o.content.startsWith(`step-${i}:`), `observation ${i} intact`);
    assert.ok(o.content.length > 20_000);
  });
  const chain = await runs(conversation.id);
  assert.ok(chain.length >= 3, `continued as new ${chain.length - 1} times`);
  for (const run of chain) {
    assert.ok(run.historyLength < 50 * EVERY, `run ${run.runId} has ${run.historyLength} events`);
    assert.ok(run.historySize < 4 * 1024 * 1024, `run ${run.runId} history is ${run.historySize} bytes`);
  }
  console.log(
    `# ${STEPS} steps in ${seconds.toFixed(1)} s; runs: ${chain.map((r) => `${r.historyLength} events/${(r.historySize / 1024).toFixed(0)} KiB`).join(', ')}`,
  );
});
