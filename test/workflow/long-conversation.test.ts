// Conversations of any length, in process (moved from the e2e layer, whose long conversation is now
// a section of test/e2e/conversation.test.ts: these claims cross no process boundary): continue-as-new loses no signal, and a condensed conversation carries
// only what the model needs while every event stays readable. Real workflow, real server and Workers;
// our activities stubbed.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Conversation } from '../../src/client/client.js';
import type { ChatMessage } from '../../src/core/types.js';
import { closeSignal, messageSignal } from '../../src/conversation/workflow/messages.js';
import { buildMessages } from '../../src/conversation/workflow/prompt.js';
import { startWorkflowEnv, type WorkflowEnv } from '../support/workflow-env.js';
import { waitFor } from '../support/harness.js';

let env: WorkflowEnv;
before(async () => {
  env = await startWorkflowEnv('workflow-long');
});
after(async () => env?.close());

/** The runs of a conversation's workflow (one per continue-as-new), with their history's length and size. */
async function runs(id: string): Promise<{ runId: string; historyLength: number; historySize: number }[]> {
  const out = [];
  for await (const wf of env.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    const d = await env.client.workflow.getHandle(id, wf.runId).describe();
    out.push({ runId: wf.runId, historyLength: d.historyLength, historySize: d.historySize ?? 0 });
  }
  return out;
}

// The two conversations are independent and mostly wait on the server's round trips: side by side.
describe('long conversations', { concurrency: 2 }, () => {
  test('100 messages signalled while the conversation continues as new: each recorded exactly once', async () => {
    const c = await env.start({
      firstMessage: 'Wait for msg-99',
      options: { continueAsNewEverySteps: 3, maxIterations: 500 },
      model: async (_input, events) => {
        const users = events.filter((e) => e.kind === 'message' && e.source === 'user').map((e) => (e as { text: string }).text);
        const steps = events.filter((e) => e.kind === 'observation').length;
        if (users.includes('msg-99') && steps >= 12) return { content: 'All messages received.' };
        // A pace (as the scripted model's delayMs in e2e), so that the signals land over many runs.
        await delay(10);
        return { toolCalls: [{ name: 'think', arguments: { thought: `step ${steps}: seen ${users.length}` } }] };
      },
    });
    await waitFor('a first continue-as-new', async () => (await runs(c.id)).length >= 2, 60_000);
    for (let i = 0; i < 100; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => c.handle.signal(messageSignal, `msg-${i + j}`)));
    }
    const final = await c.until('finished', (s) => s.status === 'finished', 120_000);
    const events = await (await Conversation.attach(env.client, c.id)).events();
    const texts = events.filter((e) => e.kind === 'message' && e.source === 'user').map((e) => (e as { text: string }).text);
    for (let i = 0; i < 100; i++) assert.equal(texts.filter((t) => t === `msg-${i}`).length, 1, `msg-${i} recorded once`);
    events.forEach((e, i) => assert.equal(e.index, i));
    const chain = await runs(c.id);
    assert.ok(chain.length >= 3, `continued as new ${chain.length - 1} times`);
    assert.equal(final.metrics.llmCalls, events.filter((e) => e.kind === 'action').length + 1);
    await c.handle.signal(closeSignal);
  });

  test('a condensed conversation carries only what the model needs; every event stays readable, in order', async () => {
    const STEPS = 60;
    const c = await env.start({
      firstMessage: 'Think sixty times',
      options: {
        continueAsNewEverySteps: 10,
        maxIterations: 500,
        condenser: { maxEvents: 20, maxPromptTokens: 1_000_000_000, keepFirst: 2 },
      },
      // The conversation's step (over every run, the same on a retried call), not a count of calls.
      model: (input) =>
        input.step > STEPS ? { content: 'Finished.' } : { toolCalls: [{ name: 'think', arguments: { thought: `step ${input.step}` } }] },
    });
    const final = await c.until('finished', (s) => s.status !== 'running', 300_000);
    assert.equal(final.status, 'finished', final.lastError ?? '');

    // Every event, from the start, with stable indices: earlier runs answer for what the last one dropped.
    const events = await (await Conversation.attach(env.client, c.id)).events();
    assert.equal(events.length, final.events);
    events.forEach((e, i) => assert.equal(e.index, i));
    const thoughts = events.filter((e) => e.kind === 'action').map((e) => (e as { arguments: { thought: string } }).arguments.thought);
    assert.deepEqual(
      thoughts,
      Array.from({ length: STEPS }, (_, i) => `step ${i + 1}`),
    );
    assert.ok(events.filter((e) => e.kind === 'condensation').length >= 3, 'condensed several times');

    // The last run started from a bounded part of the log, not all of it.
    const chain = await runs(c.id);
    assert.ok(chain.length >= 5, `continued as new ${chain.length - 1} times`);
    const history = await env.client.workflow.getHandle(c.id).fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const carried = (env.client.options.loadedDataConverter.payloadConverter.fromPayload(input!) as { carried: { events: unknown[] } })
      .carried;
    assert.ok(carried.events.length < 60, `the last run carried ${carried.events.length} of ${final.events} events`);
    await c.handle.signal(closeSignal);
  });

  test('older events are summarised; the first message and recent events stay; the prompt stays bounded', async () => {
    // The prompt of each call, as the model activity builds it from the events the call covers.
    const prompts: ChatMessage[][] = [];
    let calls = 0;
    const c = await env.start({
      firstMessage: 'go',
      options: { condenser: { maxEvents: 12, maxPromptTokens: 1e9, keepFirst: 2 } },
      model: (input, events) => {
        prompts.push(buildMessages(events, input.systemPrompt));
        calls++;
        if (calls > 30) return { content: 'All parts written.' };
        return { toolCalls: [{ name: 'terminal', arguments: { command: `echo part ${calls} > part-${calls}.txt` } }] };
      },
    });
    const final = await c.until('finished', (s) => s.status !== 'running', 120_000);
    assert.equal(final.status, 'finished', final.lastError ?? '');
    const events = await c.events();
    const condensations = events.filter((e) => e.kind === 'condensation');
    assert.ok(
      condensations.length >= 2,
      `condensed ${condensations.length} times: ${JSON.stringify(events.filter((e) => e.kind === 'error'))}`,
    );
    const longest = Math.max(...prompts.map((p) => p.length));
    assert.ok(longest <= 18, `the prompt stayed bounded (longest ${longest} messages for ${events.length} events)`);
    const last = prompts[prompts.length - 1]!;
    assert.equal(last[1]?.content, 'go', 'the first user message stays');
    assert.ok(
      last.some((m) => String(m.content).includes('summary of ')),
      'the summary is in the prompt',
    );
    // The transcript stays valid: every tool result follows its call.
    const ids = new Set<string>();
    for (const m of last) {
      if (m.role === 'assistant') for (const t of m.tool_calls ?? []) ids.add(t.id);
      if (m.role === 'tool') assert.ok(ids.has(m.tool_call_id));
    }
    await c.handle.signal(closeSignal);
  });
});
