// The conversation's commands as pure functions (src/conversation/workflow/runner/commands.ts) over its state as
// plain data (run-state.ts), and ConversationRun holding them with a recording effects port: no
// Temporal anywhere. What each command records (events), wants (effects, in order: the order of the
// commands old histories hold) and leaves (state).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ActionEvent, ConversationInput, ConversationStatus, ChildReport } from '../../../../../src/core/types.js';
import { emptyMetrics } from '../../../../../src/core/types.js';
import {
  answerRewind,
  askConfirmation,
  askMove,
  clearConfirmation,
  close,
  decide,
  drain,
  fail,
  markStuck,
  message,
  messageRefused,
  pause,
  pauseAtStart,
  processesStopAsked,
  receiveMessage,
  record,
  recordAndShow,
  recordCheckpoint,
  recordRewind,
  reportToParent,
  requestRun,
  resume,
  rewind,
  setConfirmationPolicy,
  setStatus,
  setToolState,
  start,
  takeRewind,
} from '../../../../../src/conversation/workflow/runner/commands.js';
import type { CommandResult, Effect, Facts, RunSnapshot } from '../../../../../src/conversation/workflow/runner/commands.js';
import { ConversationRun, type RunEnvironment } from '../../../../../src/conversation/workflow/runner/conversation-run.js';
import { refusal as confirmationRefusal } from '../../../../../src/conversation/workflow/runner/confirmation-gate.js';
import type { EffectsPort } from '../../../../../src/conversation/workflow/runner/effects.js';
import { rewindOutcome } from '../../../../../src/time-travel/workflow/rewind-requests.js';
import type { ChangeNotice } from '../../../../../src/live/stream-id.js';
import {
  initialSession,
  initialState,
  rewoundTo,
  sessionStartDue,
  stopHookActive,
  treeCost,
  waitInterrupted,
  withCheckpointEntry,
  withChildReport,
  withChildStarted,
  withChildWork,
  withCondensation,
  withForkMade,
  withMovedStep,
  withPromptsChecked,
  withReply,
  withSessionStarted,
  withSetup,
  withStopHookActive,
  withToolState,
  withWait,
} from '../../../../../src/conversation/workflow/runner/run-state.js';
import type { Session } from '../../../../../src/conversation/workflow/runner/run-state.js';
import { CARRIED_STATE_VERSION } from '../../../../../src/conversation/workflow/legacy/carried-state.js';
import { checkMessageText } from '../../../../../src/conversation/workflow/messages.js';
import type { PatchId } from '../../../../../src/conversation/workflow/legacy/patches.js';

const STATUSES: ConversationStatus[] = ['idle', 'running', 'paused', 'waiting_for_confirmation', 'finished', 'error', 'stuck'];

function input(over: Partial<ConversationInput> = {}, options: Partial<ConversationInput['options']> = {}): ConversationInput {
  return {
    options: {
      workspace: '/w',
      agent: { llm: { usageId: 'u', model: 'm' }, tools: ['terminal', 'finish'] },
      toolTaskQueue: 'host',
      maxIterations: 50,
      confirmationPolicy: 'never',
      idleTimeoutMs: 1000,
      ...options,
    },
    ...over,
  };
}

function model(status: ConversationStatus = 'running', session: Partial<Session> = {}): RunSnapshot {
  const state = { ...initialState(input(), 'run-1', 0), status };
  return { state, session: { ...initialSession(input()), started: true, ...session } };
}

function facts(over: Partial<Facts> = {}): Facts {
  return {
    pendingMessages: 0,
    waitingForHost: false,
    hasParent: false,
    patched: () => true,
    nextIndex: 0,
    now: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

/** `n` actions waiting for approve / reject (the session's part a confirmation opens). */
function waiting(n: number): Pick<Session, 'confirmation'> {
  const action = (i: number) =>
    ({
      kind: 'action',
      source: 'agent',
      index: i,
      timestamp: '',
      toolCallId: `c${i}`,
      tool: 'terminal',
      arguments: { command: 'ls' },
    }) as ActionEvent;
  return { confirmation: { actions: Array.from({ length: n }, (_, i) => action(i)) } };
}

const kinds = (effects: readonly Effect[]) => effects.map((e) => ('signal' in e ? `${e.kind}:${e.signal}` : e.kind));

describe('run state (plain data)', () => {
  test('a new conversation: idle, nothing counted, the terminal in the workspace, one run', () => {
    const s = initialState(input(), 'r1', 0);
    assert.equal(s.status, 'idle');
    assert.deepEqual(s.runs, [{ runId: 'r1', from: 0 }]);
    assert.deepEqual(s.toolState, { terminal: { cwd: '/w', env: {} } });
    assert.equal(s.iterations + s.runNumber + s.steps + s.childCount + s.runCost, 0);
    assert.deepEqual(s.hooks, { sessionStartedRun: -1, stopHookRun: -1, checkedPromptsUpTo: 0 });
    assert.equal('forkedFrom' in s, false);
    assert.equal('setup' in s, false);
  });

  test('carried state of version 1 (terminal and tasks beside toolState) migrates; runs are appended', () => {
    const carried = {
      events: [],
      status: 'paused' as const,
      iterations: 3,
      runNumber: 2,
      metrics: emptyMetrics(),
      lastError: null,
      modelSeenEvents: 7,
      terminal: { cwd: '/w/sub', env: { A: '1' } },
      tasks: [{ title: 't', status: 'todo' as const }],
      runs: [{ runId: 'r0', from: 0 }],
    };
    const s = initialState(input({ carried }), 'r1', 12);
    assert.deepEqual(s.toolState, { terminal: { cwd: '/w/sub', env: { A: '1' } }, task_tracker: carried.tasks });
    assert.deepEqual(s.runs, [
      { runId: 'r0', from: 0 },
      { runId: 'r1', from: 12 },
    ]);
    assert.equal(s.status, 'paused');
    assert.equal(initialSession(input({ carried })).started, true);
  });

  test('a fork carries its origin and whether its workspace is made', () => {
    const origin = { id: 'src', step: 3, commit: 'c'.repeat(40) };
    const s = initialState(input({ fork: { origin, sourceWorkspace: '/src' } }), 'r1', 5);
    assert.deepEqual(s.forkedFrom, origin);
    assert.equal(s.forkMade, false);
    assert.deepEqual(s.runs, [{ runId: 'r1', from: 0 }], "a fork's first run holds the events it was given");
    assert.equal(withForkMade(s).forkMade, true);
  });

  test('changes return new objects and leave the old one as it was', () => {
    const s = initialState(input(), 'r1', 0);
    const frozen = JSON.stringify(s);
    const reply = { usage: { promptTokens: 100, completionTokens: 5, cacheReadTokens: 0 }, cost: 0.5, latencyMs: 10 };
    const next = withReply(s, reply as never);
    assert.equal(next.iterations, 1);
    assert.equal(next.steps, 1);
    assert.equal(next.lastPromptTokens, 100);
    assert.equal(next.runCost, 0.5);
    assert.equal(next.metrics.llmCalls, 1);
    const tooled = withToolState(next, 'task_tracker', [{ title: 'x' }]);
    assert.deepEqual(Object.keys(tooled.toolState), ['terminal', 'task_tracker']);
    assert.equal(withCondensation(tooled, reply).lastPromptTokens, 0);
    assert.equal(withSetup(withSetup(s, { tools: [] }), { tools: [] }).setup?.version, 2);
    assert.equal(JSON.stringify(s), frozen);
  });

  test('children: started, updated, reported (never lower), tree cost', () => {
    let s = initialState(input(), 'r1', 0);
    s = withChildStarted(s, { id: 'c.sub-1', status: 'running', cost: 0, task: 't' });
    assert.equal(s.childCount, 1);
    s = withChildReport(s, { id: 'c.sub-1', status: 'paused', cost: 2 } as ChildReport) ?? assert.fail('ours');
    assert.equal(withChildReport(s, { id: 'other', status: 'paused', cost: 1 } as ChildReport), undefined);
    s = withChildReport(s, { id: 'c.sub-1', status: 'running', cost: 1 } as ChildReport) ?? assert.fail('ours');
    assert.deepEqual(s.children, [{ id: 'c.sub-1', status: 'running', cost: 2, task: 't' }]);
    assert.equal(treeCost({ ...s, metrics: { ...s.metrics, accumulatedCost: 1 } }), 3);
    assert.equal(withChildWork(s, 4, 1.5).iterations, 4);
  });

  test('hooks: SessionStart once a run, the Stop hook active in its run only', () => {
    let s = { ...initialState(input(), 'r1', 0), runNumber: 1 };
    assert.ok(sessionStartDue(s));
    s = withSessionStarted(s);
    assert.ok(!sessionStartDue(s));
    assert.ok(!stopHookActive(s));
    s = withStopHookActive(s);
    assert.ok(stopHookActive(s));
    assert.ok(!stopHookActive({ ...s, runNumber: 2 }));
    assert.equal(withPromptsChecked(s, 9).hooks.checkedPromptsUpTo, 9);
  });

  test('checkpoints and a rewind: the tools state as after the step, a running command ended, later steps left behind', () => {
    let s = withToolState(initialState(input(), 'r1', 0), 'terminal', { cwd: '/w/a', env: {}, running: { pid: 1 } });
    s = withCheckpointEntry(s, 0, { index: 0, time: 't0' }, { commit: 'a', added: 0, changed: 0, deleted: 0 });
    s = withToolState(s, 'terminal', { cwd: '/w/b', env: {} });
    s = withCheckpointEntry(s, 1, { index: 4, time: 't1' }, { commit: 'b', added: 1, changed: 0, deleted: 0 });
    s = { ...s, steps: 1, lastError: 'x' };
    const back = rewoundTo(s, s.checkpoints[0]!, '/w');
    assert.equal(back.steps, 0);
    assert.deepEqual(back.toolState, { terminal: { cwd: '/w/a', env: {} } });
    assert.equal(back.lastError, null);
    assert.deepEqual(
      back.checkpoints.map((c) => [c.step, c.rewound === true]),
      [
        [0, false],
        [1, true],
      ],
    );
    assert.equal(s.checkpoints[1]!.rewound, undefined, 'the old list is unchanged');
  });

  test('the wait: begun, ended early by the first reason only, over', () => {
    let session = initialSession(input());
    assert.equal(waitInterrupted(session, 'pause'), session, 'no wait: nothing changes');
    session = withWait(session, { until: 'u', reason: 'r' });
    session = waitInterrupted(waitInterrupted(session, 'message'), 'close');
    assert.equal(session.activeWait?.endedBy, 'message');
    assert.equal(withWait(session, undefined).activeWait, undefined);
  });

  test('the moved step is carried, then taken', () => {
    const s = withMovedStep(initialState(input(), 'r1', 0), { kind: 'approval', toolCallIds: ['a'] });
    assert.deepEqual(s.movedStep, { kind: 'approval', toolCallIds: ['a'] });
    assert.equal('movedStep' in withMovedStep(s, undefined), false);
  });
});

describe('commands (pure)', () => {
  test('setStatus: event, search attribute, details, the parent told; nothing for the same status', () => {
    const step = setStatus(model('idle'), facts({ hasParent: true }), 'running');
    assert.equal(step.state.status, 'running');
    assert.deepEqual(step.events, [{ kind: 'status', source: 'environment', status: 'running' }]);
    assert.deepEqual(kinds(step.effects), ['status-attribute', 'details', 'report-to-parent']);
    const same = setStatus(model('running'), facts({ hasParent: true }), 'running');
    assert.deepEqual([same.events, same.effects], [[], []]);
    assert.deepEqual(kinds(setStatus(model('idle'), facts(), 'running').effects), ['status-attribute', 'details']);
  });

  test('pause in every status: only running or waiting conversations pause', () => {
    for (const status of STATUSES) {
      const step = pause(model(status), facts(), { reason: 'r' });
      const pauses = status === 'running' || status === 'waiting_for_confirmation';
      assert.equal(step.state.status, pauses ? 'paused' : status, status);
      assert.deepEqual(
        step.events.map((e) => e.kind),
        pauses ? ['status', 'pause'] : [],
        status,
      );
      assert.deepEqual(kinds(step.effects), pauses ? ['status-attribute', 'details', 'cancel-model', 'tell-children:pause'] : [], status);
    }
  });

  test('pause --now interrupts the tool; a plain pause cancels only a call not picked up yet', () => {
    const now = pause(model(), facts(), { now: true });
    assert.deepEqual(
      now.effects.filter((e) => e.kind === 'cancel-tool'),
      [{ kind: 'cancel-tool', interrupt: true }],
    );
    const plain = pause(model(), facts({ waitingForHost: true }), {});
    assert.deepEqual(
      plain.effects.filter((e) => e.kind === 'cancel-tool'),
      [{ kind: 'cancel-tool', interrupt: false }],
    );
    assert.equal(
      pause(model(), facts(), {}).effects.some((e) => e.kind === 'cancel-tool'),
      false,
    );
  });

  test('pause --now (a rewind too) asks that what the conversation left running on its host stop; a plain pause does not', () => {
    const now = pause(model(), facts(), { now: true });
    assert.equal(now.session.processesStopDue, true);
    assert.equal(rewind(model(), facts(), 1).session.processesStopDue, true);
    assert.equal(pause(model(), facts(), {}).session.processesStopDue, undefined);
    assert.equal(pause(model('finished'), facts(), { now: true }).session.processesStopDue, undefined, 'nothing to pause: nothing asked');
    const asked = processesStopAsked(now, facts());
    assert.equal(asked.session.processesStopDue, undefined);
    assert.deepEqual([asked.events, asked.effects], [[], []]);
  });

  test('a pause before the start is kept for it; pauseAtStart applies it once running (patched)', () => {
    const early = pause(model('idle', { started: false }), facts(), { reason: 'parent paused' });
    assert.deepEqual(early.session.pauseAtStart, { reason: 'parent paused' });
    assert.deepEqual(early.events, []);
    const running = { state: { ...early.state, status: 'running' as const }, session: early.session };
    assert.equal(pauseAtStart(running, facts()).state.status, 'paused');
    assert.equal(pauseAtStart(running, facts({ patched: () => false })).state.status, 'running', 'old histories');
    assert.equal(pauseAtStart(model('running'), facts()).state.status, 'running', 'no pause kept');
  });

  test('a pause ends the wait in progress', () => {
    const step = pause(model('running', { activeWait: { until: 'u', reason: 'r' } }), facts(), {});
    assert.equal(step.session.activeWait?.endedBy, 'pause');
  });

  test('run from each status', () => {
    const expected: Record<ConversationStatus, ConversationStatus> = {
      idle: 'running',
      running: 'running',
      paused: 'running',
      waiting_for_confirmation: 'running',
      finished: 'finished',
      error: 'running',
      stuck: 'running',
    };
    for (const status of STATUSES) {
      const step = requestRun(model(status, waiting(status === 'waiting_for_confirmation' ? 1 : 0)), facts());
      assert.equal(step.state.status, expected[status], status);
    }
  });

  test('run starts a new run: counters reset, a resume event and children resumed after a pause', () => {
    const m = model('paused');
    const before = { ...m, state: { ...m.state, iterations: 9, runCost: 2, runNumber: 3, lastError: 'e' } };
    const step = requestRun(before, facts());
    assert.deepEqual([step.state.iterations, step.state.runCost, step.state.runNumber, step.state.lastError], [0, 0, 4, null]);
    assert.deepEqual(
      step.events.map((e) => e.kind),
      ['resume', 'status'],
    );
    assert.deepEqual(kinds(step.effects), ['status-attribute', 'details', 'tell-children:resume']);
    const fromIdle = requestRun(model('idle'), facts());
    assert.deepEqual(
      fromIdle.events.map((e) => e.kind),
      ['status'],
    );
    assert.deepEqual(kinds(fromIdle.effects), ['status-attribute', 'details']);
  });

  test('run while waiting approves; paused with actions goes back to waiting (never approves)', () => {
    const approve = requestRun(model('waiting_for_confirmation', waiting(2)), facts());
    assert.deepEqual(approve.session.confirmation?.decision, { approved: true });
    assert.equal(approve.session.confirmation?.actions.length, 2);
    assert.equal(approve.state.status, 'running');
    const back = requestRun(model('paused', waiting(1)), facts());
    assert.equal(back.state.status, 'waiting_for_confirmation');
    assert.deepEqual(
      back.events.map((e) => e.kind),
      ['resume', 'status'],
    );
    assert.equal((back.events[1] as { reason?: string }).reason, '1 action(s) need approval: terminal ls');
    assert.equal(back.session.confirmation?.decision, undefined);
  });

  test('run on a running conversation resumes a paused child and ends a wait; a finished one with no news stays', () => {
    const m = model('running', { activeWait: { until: 'u', reason: 'r' } });
    const withChild = { ...m, state: withChildStarted(m.state, { id: 'c', status: 'paused', cost: 0, task: 't' }) };
    const step = requestRun(withChild, facts());
    assert.deepEqual(kinds(step.effects), ['tell-children:resume']);
    assert.equal(step.session.activeWait?.endedBy, 'resume');
    assert.equal(requestRun(model('finished'), facts()).events.length, 0);
    assert.equal(requestRun(model('finished'), facts({ pendingMessages: 1 })).state.status, 'running');
  });

  test('run on a closed conversation throws; resume does nothing', () => {
    assert.throws(() => requestRun(model('paused', { closeRequested: true }), facts()), /closed/);
    const step = resume(model('paused', { closeRequested: true }), facts());
    assert.equal(step.state.status, 'paused');
  });

  test('resume never approves (patched); old histories approved', () => {
    const asking = model('waiting_for_confirmation', waiting(1));
    assert.equal(resume(asking, facts()).effects.length, 0);
    const asked: PatchId[] = [];
    const old = resume(
      asking,
      facts({
        patched: (id) => {
          asked.push(id);
          return false;
        },
      }),
    );
    assert.deepEqual(asked, ['resume-signal-never-approves']);
    assert.equal(old.state.status, 'running');
    // Not waiting: the patch is not asked (its marker would be a new command).
    asked.length = 0;
    resume(model('paused'), facts({ patched: (id) => (asked.push(id), true) }));
    assert.deepEqual(asked, []);
  });

  test('decide: approve runs, reject only answers; the count of actions', () => {
    const yes = decide(model('waiting_for_confirmation', waiting(3)), facts(), { approved: true });
    assert.equal(yes.value, 3);
    assert.equal(yes.state.status, 'running');
    assert.deepEqual(yes.session.confirmation?.decision, { approved: true });
    const no = decide(model('waiting_for_confirmation', waiting(1)), facts(), { approved: false, reason: 'no' });
    assert.equal(no.state.status, 'waiting_for_confirmation');
    assert.deepEqual(no.effects, []);
    assert.deepEqual(no.session.confirmation, { actions: waiting(1).confirmation?.actions, decision: { approved: false, reason: 'no' } });
    const by = { tenant: 'acme', key: 'ci-bot' };
    const named = decide(model('waiting_for_confirmation', waiting(1)), facts({ actor: by }), { approved: false });
    assert.deepEqual(named.session.confirmation?.decision, { approved: false, by }, 'who answered is named on the decision the loop reads');
  });

  test('askConfirmation: the actions wait, no answer yet, the status says what needs approval', () => {
    const actions = waiting(2).confirmation!.actions;
    const step = askConfirmation(
      model('running', { confirmation: { actions: [], decision: { approved: true } } }),
      facts({ hasParent: true }),
      actions,
    );
    assert.deepEqual(step.session.confirmation, { actions });
    assert.equal(step.state.status, 'waiting_for_confirmation');
    assert.deepEqual(
      step.events.map((e) => [e.kind, (e as { reason?: string }).reason]),
      [['status', '2 action(s) need approval: terminal ls; terminal ls']],
    );
    assert.deepEqual(kinds(step.effects), ['status-attribute', 'details', 'report-to-parent']);
    // Already waiting (an approval carried to a new version): the actions open, no second status event.
    const again = askConfirmation(model('waiting_for_confirmation'), facts(), actions);
    assert.deepEqual([again.session.confirmation, again.events.length, again.effects.length], [{ actions }, 0, 0]);
  });

  test('clearConfirmation: nothing waits, no answer; nothing recorded, nothing done', () => {
    const answered = decide(model('waiting_for_confirmation', waiting(1)), facts(), { approved: false });
    const step = clearConfirmation(answered, facts());
    assert.equal(step.session.confirmation, undefined);
    assert.equal('confirmation' in step.session, false);
    assert.deepEqual([step.events.length, step.effects.length, step.state], [0, 0, answered.state]);
  });

  test('the confirmation is session data: a decision without actions waiting is kept until the next ask drops it', () => {
    const early = decide(model('waiting_for_confirmation'), facts(), { approved: true });
    assert.equal(early.value, 0);
    assert.deepEqual(early.session.confirmation, { actions: [], decision: { approved: true } });
    const actions = waiting(1).confirmation!.actions;
    assert.deepEqual(askConfirmation(early, facts(), actions).session.confirmation, { actions });
  });

  test('close: closed, the wait ended, a pending rewind failed, in-flight work cancelled, children closed, woken', () => {
    const m = model('running', { activeWait: { until: 'u', reason: 'r' }, rewinds: { lastId: 4, pending: { id: 4, to: 1 }, answers: {} } });
    const step = close(m, facts({ waitingForHost: true }));
    assert.equal(step.session.closeRequested, true);
    assert.equal(step.session.activeWait?.endedBy, 'close');
    assert.equal(step.session.wakeups, m.session.wakeups + 1);
    assert.deepEqual(step.session.rewinds, { lastId: 4, answers: { 4: { error: 'the conversation was closed before the rewind' } } });
    assert.deepEqual(kinds(step.effects), ['cancel-model', 'cancel-tool', 'tell-children:close']);
    assert.deepEqual(kinds(close(model(), facts()).effects), ['cancel-model', 'tell-children:close']);
    assert.equal(close(model(), facts()).state.status, 'running', 'the loop ends the run');
  });

  test('rewind: rejects what waits, pauses now, closes children', () => {
    const step = rewind(model('waiting_for_confirmation', waiting(1)), facts(), 2);
    assert.deepEqual(kinds(step.effects), [
      'status-attribute',
      'details',
      'cancel-model',
      'cancel-tool',
      'tell-children:pause',
      'tell-children:close',
    ]);
    assert.deepEqual(step.session.confirmation?.decision, { approved: false, reason: 'the conversation is being rewound to step 2' });
    assert.equal(step.state.status, 'paused');
    const idle = rewind(model('idle'), facts(), 0);
    assert.deepEqual(kinds(idle.effects), ['tell-children:close']);
    assert.equal(idle.session.wakeups, 1);
  });

  test('message: recorded, the wait ended, a finished conversation idle', () => {
    for (const status of STATUSES) {
      const step = message(model(status, { activeWait: { until: 'u', reason: 'r' } }), facts(), 'hi');
      assert.deepEqual(step.events[0], { kind: 'message', source: 'user', text: 'hi' });
      assert.equal(step.session.activeWait?.endedBy, 'message');
      const idles = status === 'finished' || status === 'stuck';
      assert.equal(step.state.status, idles ? 'idle' : status, status);
      assert.deepEqual(kinds(step.effects), idles ? ['status-attribute', 'details', 'details'] : ['details'], status);
    }
    assert.deepEqual(messageRefused(model(), facts(), 'the message is empty').events, [
      { kind: 'error', source: 'environment', message: 'message not added: the message is empty' },
    ]);
  });

  test('fail and markStuck: lastError and the status (an error event when asked)', () => {
    const failed = fail(model(), facts(), 'boom', { event: true });
    assert.equal(failed.state.lastError, 'boom');
    assert.deepEqual(
      failed.events.map((e) => e.kind),
      ['error', 'status'],
    );
    assert.deepEqual(
      fail(model(), facts(), 'boom', { event: false }).events.map((e) => e.kind),
      ['status'],
    );
    const stuck = markStuck(model(), facts(), 'again');
    assert.deepEqual([stuck.state.status, stuck.state.lastError], ['stuck', 'again']);
  });

  test('askMove and reportToParent', () => {
    const moved = askMove(model(), facts());
    assert.deepEqual([moved.session.moveAsked, moved.session.wakeups], [true, 1]);
    assert.deepEqual(reportToParent(model(), facts()).effects, []);
    assert.deepEqual(reportToParent(model(), facts({ hasParent: true })).effects, [
      { kind: 'report-to-parent', status: 'running', cost: 0 },
    ]);
  });

  test('the start: the search attributes, the first message checked, then run, the details once; no run when closed meanwhile', () => {
    const check = (t: unknown) => String(t);
    const opts = { agent: { llm: { model: 'm' } } };
    const carried = start(model('running', { started: false }), facts(), { carried: {}, options: opts }, check);
    assert.deepEqual([carried.events, carried.effects, carried.session.started], [[], [], true]);
    const started = start(model('idle', { started: false }), facts(), { firstMessage: 'go', run: true, options: opts }, check);
    assert.equal(started.state.status, 'running');
    assert.deepEqual(
      started.events.map((e) => e.kind),
      ['message', 'status'],
    );
    assert.deepEqual(kinds(started.effects), ['status-attribute', 'details', 'status-attribute', 'details', 'details']);
    assert.deepEqual(started.effects[0], { kind: 'status-attribute', status: 'idle', model: 'm' });
    const closed = model('idle', { closeRequested: true, started: false });
    assert.equal(start(closed, facts(), { run: true, options: opts }, check).state.status, 'idle');
    assert.throws(() =>
      start(model('idle'), facts(), { firstMessage: ' ', options: opts }, () => {
        throw new Error('the message is empty');
      }),
    );
  });

  test('commands never change the model they are given', () => {
    const m = model('waiting_for_confirmation', { activeWait: { until: 'u', reason: 'r' }, ...waiting(1) });
    const frozen = JSON.stringify(m);
    pause(m, facts(), { now: true });
    requestRun(m, facts());
    decide(m, facts(), { approved: true });
    askConfirmation(m, facts(), []);
    clearConfirmation(m, facts());
    close({ ...m, session: { ...m.session, rewinds: { lastId: 1, pending: { id: 1, to: 0 }, answers: {} } } }, facts());
    rewind(m, facts(), 1);
    answerRewind(m, facts(), 1, { error: 'x' });
    takeRewind(m, facts(), 1);
    message(m, facts(), 'x');
    fail(m, facts(), 'x', { event: true });
    assert.equal(JSON.stringify(m), frozen);
  });
});

/** A port that records what the run asked of Temporal. */
function recordingEnv(patched: (id: PatchId) => boolean = () => true): { env: RunEnvironment; calls: string[] } {
  const calls: string[] = [];
  const effects: EffectsPort = {
    searchAttributes: (v) => calls.push(`upsert ${v.status}${v.model !== undefined ? ` ${v.model}` : ''}`),
    details: () => calls.push('details'),
    signalParent: (id, r) => calls.push(`signal ${id} ${r.status}`),
  };
  return { env: { workflowId: 'conv-1', runId: 'run-1', effects, patched, targetVersionChanged: () => false }, calls };
}

/** A run's start, as the workflow applies it. */
const begin = (run: ConversationRun) => run.apply(start, run.input, checkMessageText);

describe('ConversationRun without Temporal', () => {
  test('the start of a conversation with a first message and run: the commands in their order, details once', () => {
    const { env, calls } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hello', run: true }), env);
    begin(run);
    assert.equal(run.status, 'running');
    assert.deepEqual(calls, ['upsert idle m', 'upsert running', 'details']);
    assert.deepEqual(
      run.log.held().map((e) => e.kind),
      ['message', 'status'],
    );
    assert.equal(run.pendingMessages(), 1);
  });

  test('addMessage answers with the index of the message, also when the status event follows it (finished -> idle)', () => {
    const { env } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hello', run: true }), env);
    begin(run);
    run.apply(setStatus, 'finished');
    const index = run.apply(message, 'once more');
    const held = run.log.held();
    assert.equal(held.find((e) => e.index === index)?.kind, 'message');
    assert.equal(held.at(-1)?.kind, 'status', 'the status event came after it');
  });

  test('each change is announced once, for followers: the event count, status, run number, and when the status began', () => {
    const { env } = recordingEnv();
    const notices: ChangeNotice[] = [];
    const run = ConversationRun.fromInput(input({ firstMessage: 'hello', run: true }), {
      ...env,
      effects: { ...env.effects, changed: (n) => notices.push(n) },
    });
    begin(run);
    run.apply(setStatus, 'running'); // no change: no notice
    run.apply(pause, { reason: 'x' }); // two events (the status and the pause), one notice
    run.apply(close);
    assert.deepEqual(notices, [
      { events: 2, status: 'running', runNumber: 1, since: 2 },
      { events: 4, status: 'paused', runNumber: 1, since: 4 },
      { events: 4, status: 'paused', runNumber: 1, since: 4, closing: true },
    ]);
  });

  test('a sub-agent reports to its parent on every status change', () => {
    const { env, calls } = recordingEnv();
    const run = ConversationRun.fromInput(input({ run: true }, { parent: { id: 'parent', depth: 0 } }), env);
    begin(run);
    run.apply(pause, { reason: 'x' });
    assert.deepEqual(
      calls.filter((c) => c.startsWith('signal')),
      ['signal parent running', 'signal parent paused'],
    );
  });

  test('toCarried is the state, its version and the held events; a new run from it continues', () => {
    const { env } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hello', run: true }), env);
    begin(run);
    run.apply(setToolState, 'task_tracker', [{ title: 'a', status: 'todo' }]);
    const carried = run.toCarried();
    assert.equal(carried.version, CARRIED_STATE_VERSION);
    assert.deepEqual({ ...carried, version: undefined, events: undefined }, { ...run.state, version: undefined, events: undefined });
    assert.equal(carried.events.length, 2);
    const next = ConversationRun.fromInput(input({ carried }), { ...env, runId: 'run-2' });
    begin(next);
    assert.equal(next.status, 'running');
    assert.deepEqual(next.runs, [
      { runId: 'run-1', from: 0 },
      { runId: 'run-2', from: 2 },
    ]);
    assert.deepEqual(next.toolStateOf('task_tracker'), [{ title: 'a', status: 'todo' }]);
    assert.deepEqual(JSON.parse(JSON.stringify(next.toCarried())).runNumber, 1);
  });

  test('the confirmation policy is state: set by its command, carried on continue-as-new, never written into the options', () => {
    const { env } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hello' }, { confirmationPolicy: 'never' }), env);
    begin(run);
    assert.equal(run.apply(setConfirmationPolicy, 'always'), 'always');
    assert.equal(run.confirmationPolicy, 'always');
    assert.equal(run.snapshot().confirmationPolicy, 'always');
    assert.equal(run.options.confirmationPolicy, 'never', 'the input is not changed');
    assert.equal(run.currentOptions().confirmationPolicy, 'always', 'what a sub-agent or a fork inherits');
    assert.ok(!run.systemPrompt.includes('security_risk'), 'the prompt changes with the next run');
    const next = ConversationRun.fromInput(input({ carried: run.toCarried() }, { confirmationPolicy: 'never' }), {
      ...env,
      runId: 'run-2',
    });
    assert.equal(next.confirmationPolicy, 'always');
    assert.ok(next.systemPrompt.includes('security_risk'));
    // A run carried by an older worker changed the policy in the options it continued with.
    const { confirmationPolicy: _policy, ...older } = run.toCarried();
    const fromOlder = ConversationRun.fromInput(input({ carried: older }, { confirmationPolicy: 'risky' }), { ...env, runId: 'run-3' });
    assert.equal(fromOlder.confirmationPolicy, 'risky');
  });

  test('a message signal that is not valid is an error event; a closed conversation takes no message', () => {
    const { env } = recordingEnv();
    const run = ConversationRun.fromInput(input(), env);
    begin(run);
    run.apply(receiveMessage, '');
    assert.equal(run.log.held().at(-1)?.kind, 'error');
    run.apply(close);
    assert.throws(() => run.validateMessage('hi'), /closed/);
    assert.equal(run.snapshot().closed, true);
  });

  test('events the loop records get their indices, the clock time and a wakeup; details only when asked', () => {
    const { env, calls } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hi' }), env);
    begin(run);
    calls.length = 0;
    const woken = run.wakeups;
    const indices = run.apply(
      record,
      { kind: 'error', source: 'environment', message: 'a' },
      { kind: 'error', source: 'environment', message: 'b' },
    );
    assert.deepEqual(indices, [1, 2]);
    assert.equal(run.log.get(2)?.kind, 'error');
    assert.equal(run.wakeups, woken + 2);
    assert.deepEqual(calls, []);
    run.apply(recordAndShow, { kind: 'host', source: 'environment', queue: 'q', available: false });
    assert.deepEqual(calls, ['details']);
  });

  test('a rewind: its event, the state as after the step, paused, the details once', () => {
    const { env, calls } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'go', run: true }), env);
    begin(run);
    run.apply(recordCheckpoint, 1, { commit: 'c1', added: 1, changed: 0, deleted: 0 });
    run.apply(setToolState, 'task_tracker', ['later']);
    run.apply(record, { kind: 'error', source: 'environment', message: 'later' });
    const entry = run.checkpoints.active(1)!;
    calls.length = 0;
    const answer = run.apply(recordRewind, entry, { before: 'c2', notUndone: 'n', workspace: '/w' });
    assert.deepEqual(answer, { toStep: 1, commit: 'c1', before: 'c2', dropped: 1 });
    assert.equal(run.status, 'paused');
    assert.equal(run.toolStateOf('task_tracker'), undefined, 'the tools as after step 1');
    assert.deepEqual(calls, ['upsert paused', 'details']);
    assert.deepEqual(
      run.log
        .held()
        .slice(-2)
        .map((e) => e.kind),
      ['rewind', 'status'],
    );
  });

  test('the run drains: waits answer at once, a pending rewind is told it will not happen', () => {
    const { env } = recordingEnv();
    const run = ConversationRun.fromInput(input(), env);
    begin(run);
    const id = run.apply(rewind, 1);
    assert.deepEqual(run.pendingRewind, { id, to: 1 });
    assert.equal(run.rewindRefusal(1), 'a rewind is already in progress');
    run.apply(drain);
    assert.equal(run.draining, true);
    assert.equal(run.pendingRewind, undefined);
    assert.equal(run.rewindAnswered(id), true);
    assert.throws(() => rewindOutcome(run.apply(takeRewind, id)), /before the rewind/);
    assert.equal(run.rewindAnswered(id), false, 'read once');
  });

  test('rewind requests live in the session: asked (the next id), answered by the loop, read once by the asker', () => {
    const { env, calls } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hi', run: true }), env);
    begin(run);
    assert.equal(run.pendingRewind, undefined);
    const first = run.apply(rewind, 0);
    assert.equal(first, 1);
    assert.equal(run.status, 'paused', 'what runs stops (as a pause --now)');
    calls.length = 0;
    const answer = { toStep: 0, commit: 'c0', before: 'b', dropped: 2 };
    run.apply(answerRewind, first, { answer });
    assert.deepEqual(calls, [], 'no Temporal command, no details');
    assert.equal(run.pendingRewind, undefined);
    assert.notEqual(run.rewindRefusal(0), 'a rewind is already in progress');
    assert.deepEqual(rewindOutcome(run.apply(takeRewind, first)), answer);
    assert.throws(() => rewindOutcome(run.apply(takeRewind, first)), /the rewind did not happen/);
    const second = run.apply(rewind, 0);
    assert.equal(second, 2);
    run.apply(close);
    assert.throws(() => rewindOutcome(run.apply(takeRewind, second)), /closed before the rewind/);
    const next = ConversationRun.fromInput(input({ carried: run.toCarried() }), { ...env, runId: 'run-2' });
    assert.equal(next.pendingRewind, undefined, 'not carried');
  });

  test('the confirmation lives in the session: the state query shows what waits, approve / reject refuse as before', () => {
    const { env, calls } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hi', run: true }), env);
    begin(run);
    const actions = waiting(1).confirmation!.actions;
    assert.equal(confirmationRefusal(run.confirmation), 'nothing is waiting for confirmation');
    run.apply(askConfirmation, actions);
    assert.equal(run.status, 'waiting_for_confirmation');
    assert.deepEqual(run.snapshot().pendingActions, [{ toolCallId: 'c0', tool: 'terminal', arguments: { command: 'ls' } }]);
    assert.equal(confirmationRefusal(run.confirmation), undefined);
    assert.equal(run.apply(decide, { approved: true }), 1);
    assert.equal(run.status, 'running');
    assert.deepEqual(run.confirmation?.decision, { approved: true });
    assert.equal(confirmationRefusal(run.confirmation), 'nothing is waiting for confirmation', 'answered once');
    calls.length = 0;
    run.apply(clearConfirmation);
    assert.deepEqual([run.confirmation, run.snapshot().pendingActions, calls], [undefined, [], []]);
    const next = ConversationRun.fromInput(input({ carried: run.toCarried() }), { ...env, runId: 'run-2' });
    assert.equal(next.confirmation, undefined, 'not carried');
  });

  test('the snapshot reads the state', () => {
    const { env } = recordingEnv();
    const run = ConversationRun.fromInput(input({ firstMessage: 'hi' }), env);
    begin(run);
    const snap = run.snapshot();
    assert.equal(snap.id, 'conv-1');
    assert.equal(snap.status, 'idle');
    assert.equal(snap.events, 1);
    assert.equal(snap.pendingMessages, 1);
    assert.deepEqual(snap.terminal, { cwd: '/w', env: {} });
    assert.equal(snap.forkPending, false);
  });
});

describe('every command in every status: the status, its event and its commands go together', () => {
  const requests: [string, (m: RunSnapshot, f: Facts) => CommandResult<unknown>][] = [
    ['pause', (m, f) => pause(m, f, {})],
    ['pause --now', (m, f) => pause(m, f, { now: true, reason: 'r' })],
    ['run', (m, f) => requestRun(m, f)],
    ['resume', (m, f) => resume(m, f)],
    ['approve', (m, f) => decide(m, f, { approved: true })],
    ['reject', (m, f) => decide(m, f, { approved: false })],
    ['close', (m, f) => close(m, f)],
    ['rewind', (m, f) => rewind(m, f, 1)],
    ['message', (m, f) => message(m, f, 'hi')],
    ['fail', (m, f) => fail(m, f, 'x', { event: false })],
    ['stuck', (m, f) => markStuck(m, f, 'x')],
    ['askMove', (m, f) => askMove(m, f)],
  ];
  for (const [name, command] of requests) {
    test(name, () => {
      for (const status of STATUSES) {
        for (const hasParent of [false, true]) {
          for (const pendingActions of [0, 2]) {
            const m = model(status, waiting(pendingActions));
            const step = command(m, facts({ hasParent }));
            const where = `${name} in ${status} (parent ${hasParent}, ${pendingActions} pending)`;
            const statusEvents = step.events.filter((e) => e.kind === 'status');
            const upserts = step.effects.filter((e) => e.kind === 'status-attribute');
            const reports = step.effects.filter((e) => e.kind === 'report-to-parent');
            // One status event, one upsert (and, for a sub-agent, one report) per change, in step.
            assert.equal(upserts.length, statusEvents.length, where);
            assert.equal(reports.length, hasParent ? statusEvents.length : 0, where);
            assert.deepEqual(
              upserts.map((e) => (e as { status: string }).status),
              statusEvents.map((e) => (e as { status: string }).status),
              where,
            );
            const last = statusEvents.at(-1) as { status?: ConversationStatus } | undefined;
            assert.equal(step.state.status, last?.status ?? status, where);
            // Details whenever the status changed (published once, after the rest).
            if (statusEvents.length > 0)
              assert.ok(
                step.effects.some((e) => e.kind === 'details'),
                where,
              );
            // The model given is never changed.
            assert.equal(m.state.status, status, where);
          }
        }
      }
    });
  }
});
