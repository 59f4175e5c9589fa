// Sub-agents as child conversations, in process: the whole tree paused and resumed from the parent,
// and a child that errors. Real workflow, real server and Workers; our activities stubbed (one
// script answers the parent and its children, told apart by their task). Parallel children, a
// worker killed mid-child and the CLI's view of the tree are test/e2e/delegate.test.ts's.
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { after, before, test } from 'node:test';
import { FAILURE } from '../../src/core/failure-types.js';
import type { ConversationEvent, ConversationState, MessageEvent, ObservationEvent } from '../../src/core/types.js';
import { pauseSignal, runUpdate, stateQuery } from '../../src/conversation/workflow/messages.js';
import { waitFor } from '../support/harness.js';
import { runDefault, startWorkflowEnv, type Reply, type WorkflowEnv } from '../support/workflow-env.js';

let env: WorkflowEnv;
before(async () => {
  env = await startWorkflowEnv('workflow-sub-agents');
});
after(async () => env?.close());

const options = { agent: { llm: { usageId: 'test', model: 'scripted' }, tools: ['terminal', 'think', 'finish', 'delegate'] } };
const task = (events: ConversationEvent[]) => events.find((e): e is MessageEvent => e.kind === 'message' && e.source === 'user')?.text;
const observations = (events: ConversationEvent[]) => events.filter((e): e is ObservationEvent => e.kind === 'observation');
/** Steps done: observations of calls that ran (a call a pause left unrun is asked again). */
const done = (events: ConversationEvent[]) => observations(events).filter((o) => !o.content.startsWith('Not run')).length;

/** The parent's script: delegate every task at once, then say what the children said. */
function delegating(events: ConversationEvent[], tasks: string[]): Reply {
  const obs = observations(events);
  if (obs.length === 0) return { toolCalls: tasks.map((t) => ({ name: 'delegate', arguments: { task: t } })) };
  return { content: `children said: ${obs.map((o) => o.content).join(' | ')}` };
}

test('pausing the parent pauses both running children; nothing starts until resume, which resumes them', async () => {
  const tasks = ['count into x.txt', 'count into y.txt'];
  // Each child's reply after two steps is held until the pause has landed (a cancel ends it meanwhile).
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const reached = new Set<string>();
  const ran = new Map<string, string[]>();
  const c = await env.start({
    options,
    firstMessage: 'two long jobs',
    model: async (input, events) => {
      const mine = task(events)!;
      if (!tasks.includes(mine)) return delegating(events, tasks);
      const file = mine.split(' ').pop()!;
      const n = done(events);
      if (n === 2) {
        reached.add(input.conversationId);
        await released;
      }
      return n < 12
        ? { toolCalls: [{ name: 'terminal', arguments: { command: `echo line${n + 1} >> ${file}` } }] }
        : { content: `wrote ${file}` };
    },
    host: {
      run: (input) => {
        ran.set(input.conversationId, [...(ran.get(input.conversationId) ?? []), (input.arguments as { command: string }).command]);
        return runDefault(input);
      },
    },
  });
  const kids = [`${c.id}.sub-1`, `${c.id}.sub-2`];
  await waitFor('both children held at step 2', () => kids.every((k) => reached.has(k)));

  await c.handle.signal(pauseSignal, {});
  const children = kids.map((k) => env.client.workflow.getHandle(k));
  await waitFor('both children paused', async () =>
    (await Promise.all(children.map((h) => h.query(stateQuery)))).every((s) => s.status === 'paused'),
  );
  assert.equal((await c.state()).status, 'paused');
  const parentView = await c.until('the parent to know', (s) => s.children.length === 2 && s.children.every((x) => x.status === 'paused'));
  assert.deepEqual(
    parentView.children.map((x) => x.status),
    ['paused', 'paused'],
  );
  // The pauses cancelled the held calls; the gate opens for the resume.
  await waitFor('the held calls cancelled', async () =>
    (await Promise.all(children.map((h) => h.fetchHistory()))).every((h) =>
      (h.events ?? []).some((e) => e.activityTaskCanceledEventAttributes),
    ),
  );
  release();

  await c.handle.executeUpdate(runUpdate);
  const final = await c.until('finished', (s) => s.status === 'finished');
  assert.equal(final.finalMessage, 'children said: wrote x.txt | wrote y.txt');
  for (const [k, file] of [
    [kids[0]!, 'x.txt'],
    [kids[1]!, 'y.txt'],
  ] as const) {
    // Sub-agents are numbered in the order they start: match each to its task by what it ran.
    const commands = ran.get(k) ?? [];
    const its = commands[0]?.endsWith(file) ? file : file === 'x.txt' ? 'y.txt' : 'x.txt';
    assert.deepEqual(
      commands,
      Array.from({ length: 12 }, (_, i) => `echo line${i + 1} >> ${its}`),
      `${k}: every step once`,
    );
  }
  // In each child's history, between the pause and the resume signals, no activity was scheduled.
  for (const k of kids) {
    const history = await env.client.workflow.getHandle(k).fetchHistory();
    const rows = (history.events ?? []).map((e) => ({
      signal: e.workflowExecutionSignaledEventAttributes?.signalName,
      scheduled: e.activityTaskScheduledEventAttributes?.activityType?.name,
    }));
    const pauseAt = rows.findIndex((r) => r.signal === 'pause');
    const resumeAt = rows.findIndex((r, i) => i > pauseAt && r.signal === 'resume');
    assert.ok(pauseAt > 0 && resumeAt > pauseAt, `${k}: pause then resume signals`);
    assert.deepEqual(
      // The checkpoint of the step that was running (a record of what it did) may be taken after the pause.
      rows.slice(pauseAt, resumeAt).filter((r) => r.scheduled && r.scheduled !== 'checkpointWorkspace'),
      [],
      `${k}: nothing scheduled while paused`,
    );
  }
});

test('a child that errors gives the parent an error observation with its reason; the parent goes on', async () => {
  const c = await env.start({
    options,
    firstMessage: 'try a doomed task',
    model: (_input, events) => {
      if (task(events) !== 'doomed') return delegating(events, ['doomed']);
      throw ApplicationFailure.nonRetryable(
        'HTTP 401 from https://model.example/v1: Incorrect API key provided for the sub-agent',
        FAILURE.ModelRequestRejected,
      );
    },
  });
  const final: ConversationState = await c.until('ended', (s) => s.status !== 'running');
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const [obs] = observations(await c.events());
  assert.equal(obs!.isError, true);
  assert.match(obs!.content, /sub-agent .*\.sub-1 stopped with an error: .*HTTP 401/);
  assert.equal(final.children[0]!.status, 'error');
});
