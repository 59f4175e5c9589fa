// The shape of the loop's phases (src/conversation/workflow/runner and the workflow/ folders of the other capabilities): each is `phase(ctx, ...) → Outcome`, a
// union whose members say their `kind` with a string literal, so the caller switches over what
// happened instead of reading flags. Held at compile time for every phase listed below (npm run
// typecheck fails when one returns a boolean, void or a plain object), and at run time for the
// list itself: every exported async function of the runner that takes the run is a phase or is
// exempt for a stated reason.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { condense } from '../../../../../src/conversation/workflow/runner/condenser.js';
import { runHooks } from '../../../../../src/hooks/workflow/hooks.js';
import { callModel } from '../../../../../src/conversation/workflow/runner/model-call.js';
import { hibernateMidStep } from '../../../../../src/pool/workflow/pool-host.js';
import { prepareTools } from '../../../../../src/conversation/workflow/runner/setup.js';
import {
  askModel,
  finishMovedStep,
  runAction,
  startSession,
  stopHooks,
  submitPrompts,
  takeTurn,
} from '../../../../../src/conversation/workflow/runner/turn.js';
import {
  checkpointAfterStep,
  checkpointBeforeFirstStep,
  makeForkWorkspace,
  performRewind,
  recordFoldedCheckpoint,
} from '../../../../../src/time-travel/workflow/workspace-checkpoints.js';

/** What a phase comes to (a promise's value for an async one). */
type OutcomeOf<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;
/** Whether every member of `T` has a `kind` that is a string literal (not a bare string, boolean or void). */
type IsOutcome<T> = [T] extends [{ readonly kind: string }] ? (string extends T['kind'] ? false : true) : false;

const PHASES = {
  prepareTools,
  condense,
  callModel,
  takeTurn,
  askModel,
  startSession,
  submitPrompts,
  stopHooks,
  runAction,
  finishMovedStep,
  checkpointBeforeFirstStep,
  checkpointAfterStep,
  recordFoldedCheckpoint,
  performRewind,
  makeForkWorkspace,
  runHooks,
  hibernateMidStep,
};

// Compile-time: a phase that returns anything but an outcome union makes this `false`, and tsc fails.
type Shapes = { [K in keyof typeof PHASES]: IsOutcome<OutcomeOf<(typeof PHASES)[K]>> };
const everyPhaseReturnsAnOutcome: Shapes[keyof Shapes] extends true ? true : false = true;

/** Exported async functions of the runner that take the run and are not phases, and why. */
const EXEMPT: Record<string, string> = {
  runTool: 'a tool call: its result is the observation the model reads (ToolResult)',
  delegate: 'the delegate tool: its result is the observation',
  durableWait: 'the wait tool: its result is the observation',
  waitUntil: 'the wait tool: its result is the observation',
  onHost: 'runs any call on the workspace host: its result is that call’s',
  onPoolHost: 'runs any call on a pooled host: its result is that call’s',
  releaseToolsAtEnd: 'best effort at the end of the conversation: nothing comes of it',
  stopProcessesAfterPause: 'best effort after a pause --now: nothing comes of it',
  hibernate: 'gives the host folder back: nothing comes of it',
  takePoolHost: 'claims a host before a restore: nothing comes of it',
};

test('the phases listed return outcome unions (checked by the compiler)', () => {
  assert.equal(everyPhaseReturnsAnOutcome, true);
  for (const [name, phase] of Object.entries(PHASES)) assert.equal(typeof phase, 'function', name);
});

test('every exported async function of the runner that takes the run is a phase or exempt for a reason', () => {
  // The runner's phases live in the workflow/ folders of their capabilities (conversation, pool, hooks, ...).
  const src = path.join(import.meta.dirname, '..', '..', '..', '..', '..', 'src');
  const found: string[] = [];
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && f.split(path.sep).includes('workflow'),
  );
  for (const file of files) {
    const text = readFileSync(path.join(src, file), 'utf8');
    for (const m of text.matchAll(/^export async function (\w+)(?:<[^>]*>)?\(\s*run\b/gm)) found.push(m[1]!);
  }
  assert.ok(found.length >= 15, `${found.length} found`);
  const unlisted = found.filter((name) => !(name in PHASES) && !(name in EXEMPT));
  assert.deepEqual(unlisted, [], 'a new phase returns an outcome union and goes in PHASES (or in EXEMPT, with the reason)');
  const stale = [...Object.keys(EXEMPT)].filter((name) => !found.includes(name));
  assert.deepEqual(stale, [], 'exempt but no longer there');
});
