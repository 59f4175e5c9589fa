// The carried state (what a run hands the next when it continues as new) of every version workers
// wrote: the fixtures in test/fixtures/carried-state (one per version) and every continue-as-new
// input of the recorded histories parse and build a run; a state of no known shape fails the
// workflow with CarriedStateInvalid (non-retryable), never a task retried for ever.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE } from '../../../../../src/core/failure-types.js';
import type { CarriedState, ConversationInput } from '../../../../../src/core/types.js';
import { CARRIED_STATE_VERSION, checkedCarried } from '../../../../../src/conversation/workflow/legacy/carried-state.js';
import { ConversationRun, type RunEnvironment } from '../../../../../src/conversation/workflow/runner/conversation-run.js';

const ROOT = path.join(import.meta.dirname, '..', '..', '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'carried-state');

const env: RunEnvironment = {
  workflowId: 'conv-1',
  runId: 'run-next',
  effects: { searchAttributes: () => undefined, details: () => undefined, signalParent: () => undefined },
  patched: () => true,
  targetVersionChanged: () => false,
};

function input(carried: unknown): ConversationInput {
  return {
    options: {
      workspace: '/w',
      agent: { llm: { usageId: 'u', model: 'm' }, tools: ['terminal', 'finish'] },
      toolTaskQueue: 'host',
      maxIterations: 50,
      confirmationPolicy: 'risky',
      idleTimeoutMs: 1000,
    },
    carried: carried as CarriedState,
  };
}

const fixture = (version: number): unknown => JSON.parse(readFileSync(path.join(FIXTURES, `v${version}.json`), 'utf8'));

/** Every continue-as-new input the recorded histories hold (JSON payloads), with where it came from. */
function recordedCarried(): { file: string; carried: unknown }[] {
  const dir = path.join(ROOT, 'test', 'histories');
  const out: { file: string; carried: unknown }[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { events?: Record<string, unknown>[] };
    for (const event of history.events ?? []) {
      const attrs = event.workflowExecutionContinuedAsNewEventAttributes as
        { input?: { payloads?: { metadata?: { encoding?: string }; data?: string }[] } } | undefined;
      const payload = attrs?.input?.payloads?.[0];
      if (!payload?.data || Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString() !== 'json/plain') continue;
      const next = JSON.parse(Buffer.from(payload.data, 'base64').toString()) as { carried?: unknown };
      if (next.carried) out.push({ file, carried: next.carried });
    }
  }
  return out;
}

describe('carried state of every version', () => {
  test('one fixture per version, each parses and builds a run that continues from it', () => {
    for (let version = 1; version <= CARRIED_STATE_VERSION; version++) {
      const carried = fixture(version) as CarriedState;
      assert.equal(carried.version ?? 1, version, `v${version}.json is version ${version}`);
      assert.deepEqual(checkedCarried(carried), carried, 'parsing keeps every field');
      const run = ConversationRun.fromInput(input(carried), env);
      assert.equal(run.status, carried.status, `v${version}`);
      assert.equal(run.runNumber, carried.runNumber);
      assert.equal(run.log.count, carried.events.at(-1)!.index + 1);
      assert.deepEqual(run.runs.at(-1), { runId: 'run-next', from: run.log.count });
      assert.equal(run.terminalState().cwd, (carried.toolState?.terminal as { cwd: string } | undefined)?.cwd ?? carried.terminal?.cwd);
      assert.equal(run.confirmationPolicy, 'risky', 'no policy carried: the options answer');
      // What it writes for the next run is the current version, and parses too.
      const next = run.toCarried();
      assert.equal(next.version, CARRIED_STATE_VERSION);
      assert.doesNotThrow(() => checkedCarried(JSON.parse(JSON.stringify(next))));
    }
  });

  test('the version 1 fixture has the first shape: the terminal and tasks beside, no toolState', () => {
    const v1 = fixture(1) as CarriedState;
    assert.equal('toolState' in v1 || 'version' in v1, false);
    const run = ConversationRun.fromInput(input(v1), env);
    assert.deepEqual(run.toolStateOf('task_tracker'), v1.tasks);
  });

  test('every continue-as-new input of the recorded histories parses and builds a run', () => {
    const recorded = recordedCarried();
    assert.ok(recorded.length >= 20, `${recorded.length} carried states in test/histories`);
    for (const { file, carried } of recorded) {
      assert.doesNotThrow(() => ConversationRun.fromInput(input(carried), env), file);
    }
  });

  test('a state of no known shape fails the workflow at once: CarriedStateInvalid, non-retryable, saying which fields', () => {
    const v2 = fixture(2) as Record<string, unknown>;
    const cases: [string, unknown, RegExp][] = [
      ['no events', { ...v2, events: undefined }, /events/],
      ['an unknown status', { ...v2, status: 'sleeping' }, /status/],
      ['a newer version', { ...v2, version: CARRIED_STATE_VERSION + 1 }, /version/],
      ['an event without its index', { ...v2, events: [{ kind: 'message', timestamp: 't' }] }, /events\.0\.index/],
      ['not an object', 'carried', /root/],
    ];
    for (const [name, carried, where] of cases) {
      assert.throws(
        () => ConversationRun.fromInput(input(carried), env),
        (err: unknown) =>
          err instanceof ApplicationFailure &&
          err.type === FAILURE.CarriedStateInvalid &&
          err.nonRetryable === true &&
          where.test(err.message),
        name,
      );
    }
  });
});
