// Clients wait for the change notices on the conversation's live stream, not by polling queries and
// not with updates on the conversation (which its history would keep): a run that takes seconds
// costs the conversation one update (run) and a couple of queries, whatever its length.
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

test('run() and follow() wait on change notices: a couple of calls on the conversation however long the run takes', async () => {
  // Calls on the conversation's workflow; the stream's long polls (one per notice) are counted apart.
  const calls = { query: 0, update: 0, streamPolls: 0 };
  let conversationId = '';
  const counter: WorkflowClientInterceptor = {
    async query(input, next) {
      if (input.workflowExecution.workflowId === conversationId) calls.query++;
      return next(input);
    },
    async startUpdate(input, next) {
      if (input.workflowExecution.workflowId === conversationId) calls.update++;
      else calls.streamPolls++;
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
  conversationId = conversation.id;
  const startedAt = Date.now();
  const final = await conversation.run().then(() => conversation.state());
  const seconds = (Date.now() - startedAt) / 1000;
  assert.equal(final.status, 'finished');
  // The state before the wait and once a notice says the run stopped; on a busy machine a step may
  // bring no notice for over a second, and the wait asks once more (at 1 s, then 2 s, …). A 100 ms
  // poll would ask ten times a second.
  assert.ok(calls.query <= 2 + Math.ceil(seconds), `state queries while waiting: ${calls.query} in ${seconds.toFixed(1)} s`);
  // The update that runs it, and none to wait: nothing of the waiting is in the conversation's history.
  assert.equal(calls.update, 1, `updates: ${calls.update} for ${final.events} events`);

  // follow(): every event, in order, then it stops with the run.
  const seen: number[] = [];
  for await (const e of conversation.follow({ until: (s) => s.status !== 'running' })) seen.push(e.index);
  assert.deepEqual(
    seen,
    Array.from({ length: final.events }, (_, i) => i),
  );
  console.log(`# a run of six paced steps: ${calls.query} queries, ${calls.update} updates, ${calls.streamPolls} stream polls`);
});
