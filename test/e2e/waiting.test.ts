// Clients wait for the change notices on the conversation's live stream, not by polling queries and
// not with updates on the conversation (which its history would keep): a run that takes seconds
// costs the conversation one update (run) and a couple of queries, whatever its length.
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { ChangeWaiter } from '../../src/live/change-waiter.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
// Waits for news that ended with no notice (the fallback: no notice for 1 s, growing to 10 s). The
// client asks the state once after each wait, so its queries are counted against its waits, not
// against the time the run took (how long the silences are is test/unit/live/change-waiter.test.ts's).
let silentWaits = 0;
const wait = ChangeWaiter.prototype.wait;
before(async () => {
  ChangeWaiter.prototype.wait = async function (this: ChangeWaiter, ...args: Parameters<ChangeWaiter['wait']>) {
    const notice = await wait.apply(this, args);
    if (notice === undefined) silentWaits++;
    return notice;
  };
  h = await startHarness({ name: 'waiting', script: () => ({ content: 'ok' }), record: false });
  await h.startWorker();
});
after(async () => {
  ChangeWaiter.prototype.wait = wait;
  await h?.close();
});

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
  silentWaits = 0;
  const final = await conversation.run().then(() => conversation.state());
  assert.equal(final.status, 'finished');
  // The state before the wait, once a notice says the run stopped, and the one asked here after it;
  // beyond those, one for each wait that heard no notice (a busy machine's slow step). A poll
  // would ask whether or not anything came.
  const run = { queries: calls.query, silentWaits };
  assert.ok(run.queries <= 3 + run.silentWaits, `state queries: ${run.queries}, waits with no notice: ${run.silentWaits}`);
  // The update that runs it, and none to wait: nothing of the waiting is in the conversation's history.
  assert.equal(calls.update, 1, `updates: ${calls.update} for ${final.events} events`);

  // follow(): every event, in order, then it stops with the run.
  const seen: number[] = [];
  for await (const e of conversation.follow({ until: (s) => s.status !== 'running' })) seen.push(e.index);
  assert.deepEqual(
    seen,
    Array.from({ length: final.events }, (_, i) => i),
  );
  console.log(
    `# a run of six paced steps: ${run.queries} queries (${run.silentWaits} waits with no notice), ${calls.update} updates, ${calls.streamPolls} stream polls`,
  );
});
