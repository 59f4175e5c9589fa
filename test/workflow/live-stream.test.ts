// The live stream workflow in process: a step marker drops the lines before it, the log stays within
// its bound, and a long history continues-as-new with offsets going on (a follower does not notice).
// Real workflow bundle, real server and Workers; the test publishes and follows as the worker and
// the clients do.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import {
  CHANGE_TOPIC,
  LIVE_DIVISION,
  LIVE_STREAM_WORKFLOW,
  LIVE_TOPIC,
  STEP_TOPIC,
  liveStreamId,
  type ChangeNotice,
  type LiveItem,
  type LiveStreamInput,
} from '../../src/live/stream-id.js';
import { DIVISION_KEY, LiveReader } from '../../src/live/subscribe.js';
import { waitFor } from '../support/harness.js';
import { startWorkflowEnv, type WorkflowEnv } from '../support/workflow-env.js';

let env: WorkflowEnv;
before(async () => {
  env = await startWorkflowEnv('workflow-live-stream');
});
after(async () => {
  for (const c of clients) await c[Symbol.asyncDispose]().catch(() => undefined);
  await env?.close();
});

let n = 0;
const clients: WorkflowStreamClient[] = [];
async function startStream(limits?: LiveStreamInput['limits'], taskQueue = env.taskQueue) {
  const conversationId = `live-test-${process.pid}-${++n}`;
  const workflowId = liveStreamId(conversationId);
  const input: LiveStreamInput = { conversationId, ...(limits ? { limits } : {}) };
  // In its division, as followers start it (live/subscribe.ts).
  await env.client.workflow.start(LIVE_STREAM_WORKFLOW, {
    workflowId,
    taskQueue,
    args: [input],
    typedSearchAttributes: [{ key: DIVISION_KEY, value: LIVE_DIVISION }],
  });
  // A short backup interval: after dispose the client's last sleep still holds the process this long.
  const stream = WorkflowStreamClient.create(env.client, workflowId, { batchInterval: '50 milliseconds' });
  clients.push(stream);
  const publish = async (items: { topic: string; item: LiveItem }[]) => {
    for (const { topic, item } of items) stream.topic<LiveItem>(topic).publish(item);
    await stream.flush();
  };
  /** The texts a follower from offset 0 reads now (it stops at the current end). */
  const read = async (from = 0) => {
    const end = await stream.getOffset();
    const out: { text: string; offset: number }[] = [];
    if (end === 0) return out;
    for await (const item of stream.subscribe<LiveItem>(LIVE_TOPIC, from, { resultType: true, pollCooldown: '1 millisecond' })) {
      out.push({ text: item.data.text, offset: item.offset });
      if (item.offset >= end - 1) break;
    }
    return out;
  };
  return { conversationId, stream, publish, read, handle: env.client.workflow.getHandle(workflowId) };
}

const line = (text: string) => ({ topic: LIVE_TOPIC, item: { kind: 'model_delta' as const, text, step: 1 } });
const marker = { topic: STEP_TOPIC, item: { kind: 'step_start' as const, text: '', step: 2 } };

// A hang fails the test instead of holding up the run.
const limit = { timeout: 60_000 };

test('a step marker drops the lines of the steps before it; followers never see the marker', limit, async () => {
  const s = await startStream();
  await s.publish([line('a'), line('b'), line('c')]);
  await s.publish([marker, line('d'), line('e')]);
  // The stream drops them in its loop, after the activation that appended the marker: a follower's
  // poll handled in that same activation still sees them, so the test waits (with a deadline) for
  // the drop rather than catching that activation on a busy machine.
  const texts = await waitFor('the lines before the marker dropped', async () => {
    const now = (await s.read()).map((x) => x.text);
    return now.length === 2 && now;
  });
  assert.deepEqual(texts, ['d', 'e']);
});

test('a step marker that arrives with the start drops the lines before it too', limit, async () => {
  // No worker on this queue until everything is published: the start and every publish reach the
  // stream's first activation together (as on a loaded machine, where this once left the lines).
  const queue = `${env.taskQueue}-late`;
  const s = await startStream(undefined, queue);
  await s.publish([line('a'), line('b')]);
  await s.publish([marker, line('c')]);
  const worker = await env.workflowWorker(queue);
  try {
    const texts = await waitFor('the lines before the marker dropped', async () => {
      const now = (await s.read()).map((x) => x.text);
      return now.length > 0 && now;
    });
    assert.deepEqual(texts, ['c']);
  } finally {
    await worker.stop();
  }
});

test('the log stays within its bound: the oldest lines go', limit, async () => {
  const s = await startStream({ maxItems: 20 });
  for (let batch = 0; batch < 5; batch++) await s.publish(Array.from({ length: 10 }, (_, i) => line(`${batch}-${i}`)));
  const kept = await s.read();
  assert.ok(kept.length <= 20 && kept.length >= 10, `kept ${kept.length}`);
  assert.equal(kept[kept.length - 1]!.text, '4-9');
});

test('a long history continues as new; offsets go on and a follower reads across the runs', limit, async () => {
  const s = await startStream({ maxHistory: 40 });
  const first = (await s.handle.describe()).runId;
  // The follower the SDK uses (it follows the runs of the stream whatever happens to them).
  const reader = new LiveReader(env.client, s.conversationId, 0);
  const seen: string[] = [];
  try {
    for (let i = 0; i < 30; i++) await s.publish([line(`l${i}`)]);
    await s.publish([line('last')]);
    await waitFor('the follower to read the last line', () => {
      seen.push(...reader.take().map((d) => d.text));
      return seen.includes('last');
    });
  } finally {
    reader.stop();
  }
  const now = await s.handle.describe();
  assert.notEqual(now.runId, first, 'the stream continued as new');
  // The new run stays out of the namespace's default list, as the first was.
  assert.equal(now.typedSearchAttributes.get(DIVISION_KEY), LIVE_DIVISION);
  assert.deepEqual(seen, [...Array.from({ length: 30 }, (_, i) => `l${i}`), 'last']);
});

test('a cut never drops the latest change notice: a follower that comes after it still reads it', limit, async () => {
  const s = await startStream();
  // The conversation's news, then the next model call's step marker, which drops the lines before it.
  s.stream.topic<ChangeNotice>(CHANGE_TOPIC).publish({ events: 7, status: 'running', runNumber: 1 });
  await s.publish([line('old'), marker, line('new')]);
  const notices: ChangeNotice[] = [];
  const reader = new LiveReader(env.client, s.conversationId, 0, { onChange: (n) => notices.push(n) });
  const lines: string[] = [];
  try {
    await waitFor('the follower to read the notice and the line of the step under way', () => {
      lines.push(...reader.take().map((d) => d.text));
      return notices.length > 0 && lines.includes('new');
    });
  } finally {
    reader.stop();
  }
  assert.deepEqual(notices, [{ events: 7, status: 'running', runNumber: 1 }]);
  assert.deepEqual(lines, ['new'], 'the lines before the marker are gone');
});
