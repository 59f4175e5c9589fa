// Clients wait on the workflow (the waitForChange update answers when there is news), not by
// polling queries: a run that takes seconds costs a handful of calls, whatever its length.
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'waiting', script: () => ({ content: 'ok' }), record: false });
  await h.startWorker();
});
after(async () => h?.close());

test('run() and follow() wait on updates: a couple of calls however long the run takes', async () => {
  const calls = { query: 0, update: 0 };
  const counter: WorkflowClientInterceptor = {
    async query(input, next) {
      calls.query++;
      return next(input);
    },
    async startUpdate(input, next) {
      calls.update++;
      return next(input);
    },
  };
  const client = new Client({
    connection: h.client.connection,
    namespace: h.namespace,
    dataConverter: dataConverter(h.env),
    interceptors: { workflow: [counter] },
  });
  // Six paced steps (half a second each: pacing, not synchronisation; a slower machine only makes
  // the run longer), in which a 100 ms poll would have asked ~30 times.
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    const done = req.body.messages.filter((m) => m.role === 'tool').length;
    return done < 6
      ? { delayMs: 500, toolCalls: [{ name: 'think', arguments: { thought: `step ${done}` } }] }
      : { delayMs: 500, content: 'done' };
  });
  const conversation = await Conversation.create(client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    workspace: await h.workspace(),
    firstMessage: 'think six times',
  });
  const final = await conversation.run().then(() => conversation.state());
  assert.equal(final.status, 'finished');
  assert.ok(calls.query <= 2, `state queries while waiting: ${calls.query}`);
  // One update to run, one to wait for the run to stop, whatever the number of steps.
  assert.ok(calls.update >= 2 && calls.update <= 3, `updates: ${calls.update} for ${final.events} events`);

  // follow(): every event, in order, then it stops with the run.
  const seen: number[] = [];
  for await (const e of conversation.follow({ until: (s) => s.status !== 'running' })) seen.push(e.index);
  assert.deepEqual(
    seen,
    Array.from({ length: final.events }, (_, i) => i),
  );
  console.log(`# a run of six paced steps: ${calls.query} queries, ${calls.update} updates`);
});
