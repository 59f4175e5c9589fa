// The conversation workflow's branchy cases, in process: the real workflow on a real dev server and
// real Workers in this process, with OUR activities stubbed (scripted model replies, a scripted
// workspace host). Driven only through the workflow's public interface (messages.ts, the input,
// the state and events queries), so these hold whatever the workflow looks like inside.
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { after, before, describe, test } from 'node:test';
import { FAILURE } from '../../src/core/failure-types.js';
import { buildMessages } from '../../src/conversation/workflow/prompt.js';
import type { ConversationEvent, ConversationState, HostEvent, MessageEvent, ObservationEvent, PauseEvent } from '../../src/core/types.js';
import {
  approveUpdate,
  closeSignal,
  messageSignal,
  pauseSignal,
  pauseUpdate,
  rejectUpdate,
  resumeSignal,
  runUpdate,
  stateQuery,
} from '../../src/conversation/workflow/messages.js';
import { waitFor } from '../support/harness.js';
import { runDefault, startWorkflowEnv, type Reply, type WorkflowEnv } from '../support/workflow-env.js';

let env: WorkflowEnv;
before(async () => {
  env = await startWorkflowEnv('workflow-conversation');
});
after(async () => env?.close());

const done: Reply = { content: 'done' };
const terminal = (command: string): Reply => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
/** A model that makes one terminal call, then answers. */
const oneCommand = (command: string) => (_: unknown, events: { kind: string }[]) =>
  events.some((e) => e.kind === 'observation') ? done : terminal(command);
const ended = (s: ConversationState) => s.status !== 'running' && s.status !== 'waiting_for_confirmation';
/** What the user said, in the events a model call covers. */
const userTexts = (events: ConversationEvent[]) =>
  events.filter((e): e is MessageEvent => e.kind === 'message' && e.source === 'user').map((e) => e.text);

describe('confirmation', () => {
  test('an unanswered confirmation times out as a rejection; the action never runs and the model is told', async () => {
    // A short timeout: the order of what happens is asserted (it waited, then the rejection), never how long it took.
    const c = await env.start({ options: { confirmationPolicy: 'always', confirmationTimeoutMs: 300 }, model: oneCommand('rm -rf /') });
    const final = await c.until('finished', (s) => s.status === 'finished');
    const statuses = (await c.events()).flatMap((e, i) => (e.kind === 'status' ? [[e.status, i] as const] : []));
    const waitedAt = statuses.find(([s]) => s === 'waiting_for_confirmation')?.[1];
    const rejectedAt = (await c.events()).findIndex((e) => e.kind === 'observation');
    assert.ok(waitedAt !== undefined && waitedAt < rejectedAt, `it waited for confirmation first: ${JSON.stringify(statuses)}`);
    assert.equal(final.pendingActions.length, 0);
    assert.equal(c.toolCalls.length, 0, 'the rejected command did not run');
    const obs = (await c.events()).find((e): e is ObservationEvent => e.kind === 'observation');
    assert.match(obs?.content ?? '', /rejected this action: no answer within/);
    assert.equal(obs?.isError, true);
    assert.equal(c.modelCalls.length, 2, 'the model was called again after the rejection');
  });

  test('run approves what waits; the action runs once', async () => {
    const c = await env.start({ options: { confirmationPolicy: 'always' }, model: oneCommand('echo approved') });
    await c.until('waiting for confirmation', (s) => s.status === 'waiting_for_confirmation');
    assert.equal(c.toolCalls.length, 0);
    await c.handle.executeUpdate(runUpdate);
    await c.until('finished', (s) => s.status === 'finished');
    assert.deepEqual(
      c.toolCalls.map((t) => t.arguments),
      [{ command: 'echo approved' }],
    );
  });

  test('risky: LOW runs at once, HIGH and unlabelled ask; the prompt asks the model for a rating', async () => {
    /** One terminal call rated `risk` (or not rated), then an answer. */
    const rated = (command: string, risk?: string) => (_: unknown, events: { kind: string }[]) =>
      events.some((e) => e.kind === 'observation')
        ? done
        : { toolCalls: [{ name: 'terminal', arguments: { command, ...(risk ? { security_risk: risk } : {}) } }] };
    const asked = (events: ConversationEvent[]) => events.some((e) => e.kind === 'status' && e.status === 'waiting_for_confirmation');

    const low = await env.start({ options: { confirmationPolicy: 'risky' }, model: rated('echo low', 'LOW') });
    assert.equal((await low.until('ended', ended)).status, 'finished');
    assert.equal(asked(await low.events()), false, 'LOW never waited for confirmation');
    assert.equal(low.toolCalls.length, 1);

    const high = await env.start({ options: { confirmationPolicy: 'risky' }, model: rated('echo high', 'HIGH') });
    assert.equal((await high.until('stopped', (s) => s.status !== 'running')).status, 'waiting_for_confirmation');
    await high.handle.executeUpdate(rejectUpdate, { args: ['no'] });
    await high.until('finished', (s) => s.status === 'finished');
    assert.equal(high.toolCalls.length, 0, 'the rejected HIGH call did not run');

    const unknown = await env.start({ options: { confirmationPolicy: 'risky' }, model: rated('echo unknown') });
    assert.equal((await unknown.until('stopped', (s) => s.status !== 'running')).status, 'waiting_for_confirmation');
    await unknown.handle.executeUpdate(approveUpdate);
    await unknown.until('finished', (s) => s.status === 'finished');
    assert.equal(unknown.toolCalls.length, 1);
    assert.match(unknown.modelCalls[0]?.systemPrompt ?? '', /security_risk/);
  });
});

describe('limits', () => {
  test('a per-run budget pauses the run with the reason "budget"; a resume starts a new run that goes on', async () => {
    let n = 0;
    const c = await env.start({
      options: { maxBudgetPerRunUsd: 0.00025 },
      model: () =>
        ++n <= 4 ? { toolCalls: [{ name: 'think', arguments: { thought: `t${n}` } }], cost: 0.0001 } : { ...done, cost: 0.0001 },
    });
    const paused = await c.until('paused', (s) => s.status === 'paused');
    assert.equal(paused.metrics.llmCalls, 3, 'paused after the call that reached the budget');
    assert.ok(paused.runCost >= 0.00025);
    assert.ok(paused.metrics.accumulatedCost >= 0.00025);
    // Each call in the metrics: its step, tokens, cost and latency.
    assert.deepEqual(
      paused.metrics.calls?.map((x) => [x.step, x.promptTokens, x.completionTokens]),
      [
        [1, 100, 20],
        [2, 100, 20],
        [3, 100, 20],
      ],
    );
    assert.ok(paused.metrics.calls?.every((x) => x.cost > 0 && x.latencyMs >= 0));
    const pause = (await c.events()).find((e): e is PauseEvent => e.kind === 'pause');
    assert.match(pause?.reason ?? '', /^budget: this run cost \$0\.0003, the limit is \$0\.00025/);
    // The actions of the reply that crossed the budget are not run (a pause stops before each call).
    const observations = (await c.events()).filter((e): e is ObservationEvent => e.kind === 'observation');
    assert.match(observations[observations.length - 1]?.content ?? '', /Not run: the conversation was paused/);
    await c.handle.signal(resumeSignal);
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.equal(final.metrics.llmCalls, 5);
    assert.ok(final.runCost < 0.00025, 'the budget counts per run');
    assert.equal(final.runNumber, 2);
  });

  test('the same action with the same result 4 times → stuck, with the reason', async () => {
    const c = await env.start({ model: () => terminal('echo same') });
    const final = await c.until('stuck', ended);
    assert.equal(final.status, 'stuck');
    assert.match(final.lastError ?? '', /same action with the same result 4 times/);
    assert.equal(final.iterations, 4);
    assert.equal(c.toolCalls.length, 4);
  });

  test('the same failing action 3 times → stuck', async () => {
    const c = await env.start({ model: () => terminal('false'), host: { run: () => ({ content: 'exit 1', isError: true, exitCode: 1 }) } });
    const final = await c.until('stuck', ended);
    assert.equal(final.status, 'stuck');
    assert.match(final.lastError ?? '', /failed 3 times in a row/);
    assert.equal(final.iterations, 3);
  });

  test('the iteration limit stops the run with an error saying why; no call beyond it', async () => {
    let n = 0;
    const c = await env.start({
      options: { maxIterations: 3 },
      model: () => ({ toolCalls: [{ name: 'think', arguments: { thought: `step ${++n}` } }] }),
    });
    const final = await c.until('error', ended);
    assert.equal(final.status, 'error');
    assert.match(final.lastError ?? '', /maximum of 3 iterations/);
    assert.equal(final.iterations, 3);
    assert.equal(c.modelCalls.length, 3);
  });
});

describe('the workspace host', () => {
  test('no worker on the tool queue: waitingForHost and a host event, then it goes on when a worker comes', async () => {
    const c = await env.start({ ownHostQueue: true, options: { hostWaitMs: 300 }, model: oneCommand('echo hi') });
    const waiting = await c.until('waiting for the host', (s) => s.waitingForHost === c.toolTaskQueue);
    assert.equal(waiting.status, 'running');
    assert.equal(c.modelCalls.length, 0, 'no model call before the tools are prepared');
    const down = (await c.events()).filter((e): e is HostEvent => e.kind === 'host');
    assert.deepEqual(
      down.map((e) => [e.queue, e.available]),
      [[c.toolTaskQueue, false]],
    );
    const host = await env.hostWorker(c.toolTaskQueue);
    try {
      const final = await c.until('finished', (s) => s.status === 'finished');
      assert.equal(final.waitingForHost, null);
      const hostEvents = (await c.events()).filter((e): e is HostEvent => e.kind === 'host');
      assert.deepEqual(
        hostEvents.map((e) => e.available),
        [false, true],
      );
      assert.equal(c.prepareCalls.length, 1);
      assert.equal(c.toolCalls.length, 1);
      assert.equal(c.toolCalls[0]?.rescheduled, undefined, 'the tool call itself was picked up at once');
    } finally {
      await host.stop();
    }
  });

  test('a pause while waiting for the host drops the call; resume asks again and it runs once', async () => {
    const c = await env.start({ ownHostQueue: true, options: { hostWaitMs: 300 }, model: oneCommand('echo once') });
    await c.until('waiting for the host', (s) => s.waitingForHost === c.toolTaskQueue);
    await c.handle.signal(pauseSignal, {});
    const paused = await c.until('paused', (s) => s.status === 'paused' && s.waitingForHost === null);
    assert.equal(paused.lastError, null);
    const host = await env.hostWorker(c.toolTaskQueue);
    try {
      // The dropped prepareTools never reaches the worker that came meanwhile: one call in all, the resume's.
      await c.handle.signal(resumeSignal);
      await c.until('finished', (s) => s.status === 'finished');
      assert.equal(c.prepareCalls.length, 1);
      assert.equal(c.toolCalls.length, 1);
    } finally {
      await host.stop();
    }
  });
});

describe('pause, messages, close', () => {
  test('a pause that comes with the start (signal-with-start) is kept: no model call until resume', async () => {
    const c = await env.start({ signal: { name: pauseSignal.name, args: [{ reason: 'at start' }] }, model: () => done });
    const paused = await c.until('paused', (s) => s.status === 'paused');
    assert.equal(paused.iterations, 0);
    const events = await c.events();
    assert.deepEqual(
      events.map((e) => e.kind),
      ['message', 'status', 'status', 'pause'],
    );
    assert.equal((events[3] as PauseEvent).reason, 'at start');
    assert.equal(c.modelCalls.length, 0);
    assert.equal(c.prepareCalls.length, 0);
    await c.handle.signal(resumeSignal);
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.equal(final.finalMessage, 'done');
    assert.equal(c.modelCalls.length, 1);
  });

  test('the pause update answers once applied: paused at once for the next query, the model call in flight cancelled', async () => {
    let called!: () => void;
    const inFlight = new Promise<void>((r) => (called = r));
    const c = await env.start({
      model: async () => {
        called();
        return new Promise<Reply>(() => undefined); // a call that never answers: only a cancel ends it
      },
    });
    await inFlight;
    const answer = await c.handle.executeUpdate(pauseUpdate, { args: [{ reason: 'look first' }] });
    assert.deepEqual(answer, { status: 'paused' });
    const s = await c.handle.query(stateQuery);
    assert.equal(s.status, 'paused', 'the query after the answer reads paused, with no wait');
    const pause = (await c.events()).find((e): e is PauseEvent => e.kind === 'pause');
    assert.equal(pause?.reason, 'look first');
    await waitFor('the model call to end as cancelled', async () =>
      (await c.handle.fetchHistory()).events?.some((e) => e.activityTaskCanceledEventAttributes),
    );
    assert.equal(c.modelCalls.length, 1);
  });

  test('a message while paused is kept (pending) and folded in on resume', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const c = await env.start({
      model: (_input, events) => {
        const said = events.filter((e) => e.kind === 'message' && e.source === 'user').map((e) => (e as { text: string }).text);
        if (said.includes('now hello.txt')) return { content: 'switched to hello.txt' };
        return terminal('make long-task');
      },
      host: {
        run: async (input) => {
          await released;
          return runDefault(input);
        },
      },
    });
    await waitFor('the command to run', () => c.toolCalls.length === 1);
    await c.handle.signal(pauseSignal, {});
    await c.until('paused', (s) => s.status === 'paused');
    release(); // a pause without now lets the running command finish
    await c.handle.signal(messageSignal, 'now hello.txt');
    const kept = await c.until('the message pending', (s) => s.pendingMessages === 1);
    assert.equal(kept.status, 'paused', 'a message does not resume');
    await waitFor('the command result', async () => (await c.events()).some((e) => e.kind === 'observation'));
    assert.equal(c.modelCalls.length, 1, 'no model call while paused');
    await c.handle.signal(resumeSignal);
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.equal(final.pendingMessages, 0);
    assert.equal(final.finalMessage, 'switched to hello.txt');
    assert.equal(c.modelCalls.length, 2);
    const second = c.modelCalls[1]!;
    const events = await c.events();
    const message = events.findIndex((e) => e.kind === 'message' && e.source === 'user' && e.text === 'now hello.txt');
    assert.ok(message >= 0 && message < second.eventCount, 'the second model call covers the message');
    assert.ok(events.findIndex((e) => e.kind === 'resume') > message, 'the message came before the resume');
  });

  test('a message sent while a command runs is given to the model before its next call; every action answered before it', async () => {
    const extra = 'EXTRA: also mind the tests';
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let seen: ConversationEvent[] = [];
    const c = await env.start({
      firstMessage: 'Start',
      model: (_input, events) => {
        if (!userTexts(events).includes(extra)) return terminal('make step');
        seen = events;
        return { content: 'Noted the extra message.' };
      },
      host: {
        run: async (input) => {
          await released;
          return runDefault(input);
        },
      },
    });
    await waitFor('the command to run', () => c.toolCalls.length === 1);
    await c.handle.signal(messageSignal, extra);
    // Received while the command runs (kept for the next call, or already an event): then the command ends.
    await waitFor(
      'the message received',
      async () => (await c.state()).pendingMessages === 1 || userTexts(await c.events()).includes(extra),
    );
    release();
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.equal(final.finalMessage, 'Noted the extra message.');
    assert.equal(c.modelCalls.length, 2, 'the call after the command saw the message');
    assert.deepEqual(userTexts(seen), ['Start', extra]);
    // The prompt the model activity builds from those events (buildMessages) stays valid: every tool
    // call is answered before the next user message.
    const prompt = buildMessages(seen, 'system');
    const at = prompt.findIndex((m) => m.role === 'user' && String(m.content).includes(extra));
    assert.ok(at > 0);
    assert.notEqual(prompt[at - 1]?.role, 'assistant');
    const called = prompt.slice(0, at).flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((t) => t.id) : []));
    const answered = prompt.slice(0, at).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
    assert.equal(called.length, 1);
    assert.deepEqual(answered, called, JSON.stringify(prompt.map((m) => m.role)));
  });

  test('pausing twice in a row is one pause; resume works once', async () => {
    let answer = false;
    let called!: () => void;
    const inFlight = new Promise<void>((r) => (called = r));
    const c = await env.start({
      model: async () => {
        if (answer) return { content: 'quick' };
        called();
        return new Promise<Reply>(() => undefined); // only the pause's cancel ends it
      },
    });
    await inFlight;
    assert.equal((await c.state()).status, 'running');
    await Promise.all([c.handle.signal(pauseSignal, {}), c.handle.signal(pauseSignal, {})]);
    await c.handle.signal(pauseSignal, {});
    await c.until('paused', (s) => s.status === 'paused');
    assert.equal((await c.events()).filter((e) => e.kind === 'pause').length, 1);
    answer = true;
    await c.handle.executeUpdate(runUpdate);
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.equal(final.finalMessage, 'quick');
    assert.equal((await c.events()).filter((e) => e.kind === 'resume').length, 1);
  });

  test('a pause during a model retry backoff cancels the retries; resume calls the model again', async () => {
    let failing = true;
    const c = await env.start({
      model: () => {
        if (failing) throw ApplicationFailure.retryable('HTTP 503 from the provider: busy', FAILURE.ModelUnavailable);
        return { content: 'Hello!' };
      },
    });
    await waitFor('two failed attempts', () => c.modelCalls.length >= 2);
    await c.handle.signal(pauseSignal, {});
    await c.until('paused', (s) => s.status === 'paused');
    // The activity is cancelled in history before the resume: no retry is pending while paused.
    await waitFor('the model activity cancelled', async () =>
      ((await c.handle.fetchHistory()).events ?? []).some((e) => e.activityTaskCanceledEventAttributes),
    );
    const whilePaused = c.modelCalls.length;
    failing = false;
    await c.handle.executeUpdate(runUpdate);
    const final = await c.until('finished', (s) => s.status === 'finished');
    assert.equal(final.lastError, null);
    assert.equal(final.finalMessage, 'Hello!');
    assert.equal(c.modelCalls.length, whilePaused + 1, "no attempt after the cancellation: one call, the resume's");
  });

  test('close while a sub-agent starts: the parent completes closed and the child is closed too', async () => {
    let parentCalls = 0;
    const c = await env.start({
      options: { agent: { llm: { usageId: 'test', model: 'scripted' }, tools: ['terminal', 'think', 'finish', 'delegate'] } },
      model: (input) => {
        if (input.conversationId.includes('.sub-')) return terminal('child work');
        parentCalls++;
        return { toolCalls: [{ name: 'delegate', arguments: { task: 'a sub task' } }] };
      },
    });
    const childId = `${c.id}.sub-1`;
    const child = env.client.workflow.getHandle(childId);
    // As soon as the child exists (its start may not have reached the parent yet), close the parent.
    await waitFor('the child to exist', () => child.describe().then(() => true), 20_000, 5);
    await c.handle.signal(closeSignal);
    const result = (await c.handle.result()) as ConversationState;
    assert.equal(result.closed, true);
    const childResult = (await child.result()) as ConversationState;
    assert.equal(childResult.closed, true, 'the close reached the child');
    assert.equal((await child.describe()).status.name, 'COMPLETED');
    assert.equal(parentCalls, 1);
  });

  test('a close while running ends the workflow; its state stays readable', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const c = await env.start({ model: () => terminal('sleep'), host: { run: async (i) => (await released, runDefault(i)) } });
    await waitFor('the command to run', () => c.toolCalls.length === 1);
    await c.handle.signal(closeSignal);
    release();
    const result = (await c.handle.result()) as ConversationState;
    assert.equal(result.closed, true);
    assert.equal(c.modelCalls.length, 1, 'no model call after the close');
    assert.equal((await c.state()).closed, true);
  });

  test('an idle conversation completes after the idle timeout', async () => {
    const c = await env.start({ run: false, options: { idleTimeoutMs: 500 }, model: () => done });
    const result = (await c.handle.result()) as ConversationState;
    assert.equal(result.status, 'idle');
    assert.equal(result.closed, false);
    assert.equal(c.modelCalls.length, 0);
    await assertCompletedByIdleTimer(c.handle, 500);
  });

  test('a finished conversation completes after the idle timeout', async () => {
    const c = await env.start({ options: { idleTimeoutMs: 500 }, model: () => done });
    const result = (await c.handle.result()) as ConversationState;
    assert.equal(result.status, 'finished');
    assert.equal(result.closed, false);
    assert.equal(c.modelCalls.length, 1);
    await assertCompletedByIdleTimer(c.handle, 500);
  });

  test('before the idle timeout, a message and run start a new run', async () => {
    // A timeout far longer than the test's steps take on a loaded machine: the message comes before it.
    const c = await env.start({ options: { idleTimeoutMs: 120_000 }, model: () => done });
    await c.until('finished', (s) => s.status === 'finished');
    await c.handle.signal(messageSignal, 'one more');
    await c.handle.executeUpdate(runUpdate);
    const second = await c.until('finished again', (s) => s.status === 'finished' && s.runNumber === 2);
    assert.equal(second.pendingMessages, 0);
    assert.equal(c.modelCalls.length, 2);
    await c.handle.signal(closeSignal);
    assert.equal(((await c.handle.result()) as ConversationState).closed, true);
  });
});

// The `wait` tool: a durable timer in the workflow. A message, a resume or a pause ends a long wait
// early; the observation says how. (A wait surviving its worker's death is test/e2e/conversation.test.ts's.)
describe('the wait tool', () => {
  /** Waits an hour (for CI), then answers with what it observed. */
  const waiter =
    (seen: ConversationEvent[][]) =>
    (_input: unknown, events: ConversationEvent[]): Reply => {
      seen.push(events);
      const observation = [...events].reverse().find((e): e is ObservationEvent => e.kind === 'observation');
      if (!observation) return { toolCalls: [{ name: 'wait', arguments: { seconds: 3600, reason: 'waiting for CI' } }] };
      return { content: `observed: ${observation.content}` };
    };

  test('a message ends a long wait early; the model then sees it', async () => {
    const seen: ConversationEvent[][] = [];
    const c = await env.start({
      options: { agent: { llm: { usageId: 'test', model: 'scripted' }, tools: ['terminal', 'wait'] } },
      firstMessage: 'wait 3600',
      model: waiter(seen),
    });
    const waiting = await c.until('the wait to begin', (s) => !!s.waitingUntil);
    assert.equal(waiting.waitingUntil?.reason, 'waiting for CI');
    await c.handle.signal(messageSignal, 'CI is green, go on');
    const final = await c.until('finished', ended);
    assert.equal(final.status, 'finished');
    assert.match(final.finalMessage ?? '', /ended early after \d+ s: a message from the user arrived/);
    assert.equal(final.waitingUntil, null);
    assert.ok(userTexts(seen[seen.length - 1]!).includes('CI is green, go on'), 'the message reached the model');
  });

  test('resume ends a wait; pause ends it too and the conversation is paused', async () => {
    const agent = { llm: { usageId: 'test', model: 'scripted' }, tools: ['terminal', 'wait'] };
    const c = await env.start({ options: { agent }, firstMessage: 'wait 3600', model: waiter([]) });
    await c.until('the wait to begin', (s) => !!s.waitingUntil);
    await c.handle.signal(pauseSignal, {});
    const paused = await c.until('paused', (s) => s.status === 'paused');
    assert.equal(paused.waitingUntil, null);
    const observation = (await c.events()).find((e): e is ObservationEvent => e.kind === 'observation' && e.tool === 'wait');
    assert.match(observation?.content ?? '', /the conversation was paused/);

    const again = await env.start({ options: { agent }, firstMessage: 'wait 3600', model: waiter([]) });
    await again.until('the second wait to begin', (s) => !!s.waitingUntil);
    await again.handle.executeUpdate(runUpdate);
    const final = await again.until('finished', ended);
    assert.match(final.finalMessage ?? '', /the user resumed the conversation/);
  });
});

/**
 * The order in the workflow's history: a timer of the idle timeout started, it fired, and only then
 * did the workflow complete, with no signal (a close) on the way. A workflow that completed at once,
 * or on anything but that timer, has no such history.
 */
async function assertCompletedByIdleTimer(handle: WorkflowHandle, idleTimeoutMs: number): Promise<void> {
  const events = (await handle.fetchHistory()).events ?? [];
  const ms = (d: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(d?.seconds ?? 0) * 1000 + (d?.nanos ?? 0) / 1e6;
  const started = events.findIndex((e) => ms(e.timerStartedEventAttributes?.startToFireTimeout) === idleTimeoutMs);
  assert.ok(started >= 0, `a timer of ${idleTimeoutMs} ms started`);
  const timerId = events[started]!.timerStartedEventAttributes!.timerId;
  const fired = events.findIndex((e) => e.timerFiredEventAttributes?.timerId === timerId);
  const completed = events.findIndex((e) => e.workflowExecutionCompletedEventAttributes);
  assert.ok(started < fired && fired < completed, `the idle timer fired (event ${fired}) before the workflow completed (${completed})`);
  assert.ok(!events.some((e) => e.workflowExecutionSignaledEventAttributes), 'nothing signalled it');
}
