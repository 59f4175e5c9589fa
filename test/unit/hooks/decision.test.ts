// Claude Code's hook contract, case by case: from a hook's outcome to a decision, and many to one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { combineDecisions, decideAnswer, decideHook, type HookOutcome } from '../../../src/hooks/decision.js';

const hook = { command: './policy.sh' };
const strict = { command: './policy.sh', onFailure: 'block' as const };
const ok = (stdout: string, stderr = ''): HookOutcome => ({ exitCode: 0, stdout, stderr });
const json = (v: unknown) => ok(JSON.stringify(v));

describe('decideHook', () => {
  test('exit 0 with nothing to say allows', () => {
    assert.deepEqual(decideHook('PreToolUse', hook, ok('')), { kind: 'allow', errors: [] });
    assert.deepEqual(decideHook('PreToolUse', hook, ok('  \n', 'noise on stderr')), { kind: 'allow', errors: [] });
  });

  test('exit 2 blocks with stderr as the reason, on every event', () => {
    for (const event of ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SessionStart'] as const) {
      assert.deepEqual(decideHook(event, hook, { exitCode: 2, stdout: '{"decision":"approve"}', stderr: 'no rm -rf here\n' }), {
        kind: 'block',
        reason: 'no rm -rf here',
        errors: [],
      });
    }
    assert.match(
      decideHook('PreToolUse', hook, { exitCode: 2, stdout: '', stderr: '' }).reason!,
      /blocked this \(exit code 2\) without giving a reason/,
    );
  });

  test('{"decision": "block", "reason"} on exit 0 blocks', () => {
    assert.deepEqual(decideHook('Stop', hook, json({ decision: 'block', reason: 'tests still fail' })), {
      kind: 'block',
      reason: 'tests still fail',
      errors: [],
    });
    assert.match(decideHook('UserPromptSubmit', hook, json({ decision: 'block' })).reason!, /Blocked by the hook `\.\/policy\.sh`/);
    assert.deepEqual(decideHook('Stop', hook, json({ decision: 'approve' })), { kind: 'allow', errors: [] });
  });

  test('PreToolUse permissionDecision: allow, deny, ask, with updatedInput', () => {
    const pd = (permissionDecision: string, more: object = {}) =>
      json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, ...more } });
    assert.deepEqual(decideHook('PreToolUse', hook, pd('deny', { permissionDecisionReason: 'not on main' })), {
      kind: 'block',
      reason: 'not on main',
      errors: [],
    });
    assert.deepEqual(decideHook('PreToolUse', hook, pd('ask', { permissionDecisionReason: 'pushes need a person' })), {
      kind: 'ask',
      reason: 'pushes need a person',
      errors: [],
    });
    assert.deepEqual(decideHook('PreToolUse', hook, pd('allow', { permissionDecisionReason: 'read-only' })), {
      kind: 'allow',
      allowed: true,
      reason: 'read-only',
      errors: [],
    });
    assert.deepEqual(decideHook('PreToolUse', hook, pd('allow', { updatedInput: { command: 'ls -la' } })), {
      kind: 'allow',
      allowed: true,
      updatedInput: { command: 'ls -la' },
      errors: [],
    });
    // hookSpecificOutput wins over the older top-level decision; "approve" alone is an explicit allow
    assert.equal(
      decideHook('PreToolUse', hook, json({ decision: 'block', hookSpecificOutput: { permissionDecision: 'allow' } })).kind,
      'allow',
    );
    assert.deepEqual(decideHook('PreToolUse', hook, json({ decision: 'approve' })), { kind: 'allow', allowed: true, errors: [] });
    assert.equal(decideHook('PreToolUse', hook, json({ decision: 'block', reason: 'old style' })).reason, 'old style');
  });

  test('plain stdout is context for UserPromptSubmit and SessionStart, ignored elsewhere; additionalContext anywhere', () => {
    assert.deepEqual(decideHook('UserPromptSubmit', hook, ok('Today is Tuesday.\n')), {
      kind: 'allow',
      context: 'Today is Tuesday.',
      errors: [],
    });
    assert.deepEqual(decideHook('SessionStart', hook, ok('branch: main')), { kind: 'allow', context: 'branch: main', errors: [] });
    assert.deepEqual(decideHook('PreToolUse', hook, ok('checked')), { kind: 'allow', errors: [] });
    assert.deepEqual(
      decideHook('UserPromptSubmit', hook, json({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'ctx' } })),
      { kind: 'allow', context: 'ctx', errors: [] },
    );
    assert.deepEqual(decideHook('PostToolUse', hook, json({ hookSpecificOutput: { additionalContext: 'lint: 2 warnings' } })), {
      kind: 'allow',
      context: 'lint: 2 warnings',
      errors: [],
    });
    assert.deepEqual(decideHook('Stop', hook, json({ continue: false, stopReason: 'budget' })), {
      kind: 'allow',
      stop: 'budget',
      errors: [],
    });
  });

  test('failures fail open with an error, or block with onFailure: "block"', () => {
    const failures: [HookOutcome, RegExp][] = [
      [{ exitCode: 1, stdout: '', stderr: 'python: not found\n' }, /failed with exit code 1: python: not found/],
      [{ exitCode: 137, stdout: 'partial', stderr: '' }, /failed with exit code 137: partial/],
      [{ exitCode: null, stdout: '', stderr: '', timedOut: true }, /did not finish within its timeout of 60 s and was stopped/],
      [{ exitCode: null, stdout: '', stderr: '', error: 'spawn bash ENOENT' }, /failed: spawn bash ENOENT/],
      [ok('{"decision": "block", '), /starts like JSON but is not valid JSON/],
      [json({ decision: 'maybe' }), /printed JSON that is not a valid hook answer: decision/],
      [json({ hookSpecificOutput: { permissionDecision: 'perhaps' } }), /hookSpecificOutput\.permissionDecision/],
      [json({ hookSpecificOutput: { updatedInput: 'ls' } }), /updatedInput/],
      [
        json({ hookSpecificOutput: { hookEventName: 'PostToolUse', permissionDecision: 'deny' } }),
        /answered for the event PostToolUse during PreToolUse/,
      ],
    ];
    for (const [outcome, message] of failures) {
      const open = decideHook('PreToolUse', hook, outcome);
      assert.equal(open.kind, 'allow', message.source);
      assert.equal(open.errors.length, 1);
      assert.match(open.errors[0]!, /^The hook `\.\/policy\.sh` /);
      assert.match(open.errors[0]!, message);
      const closed = decideHook('PreToolUse', strict, outcome);
      assert.equal(closed.kind, 'block', message.source);
      assert.match(closed.reason!, message);
      assert.match(closed.reason!, /it is set to block when it fails/);
      assert.deepEqual(closed.errors, open.errors);
    }
    assert.match(
      decideHook('PreToolUse', { command: 'x', timeout: 2 }, { exitCode: null, stdout: '', stderr: '', timedOut: true }).errors[0]!,
      /timeout of 2 s/,
    );
    // permissionDecision outside PreToolUse is a mistake, not silently ignored
    assert.match(
      decideHook('Stop', hook, json({ hookSpecificOutput: { permissionDecision: 'deny' } })).errors[0]!,
      /only PreToolUse hooks can give \(this is Stop\)/,
    );
  });

  test('reasons are cut to a size history can hold', () => {
    const d = decideHook('PreToolUse', hook, { exitCode: 2, stdout: '', stderr: 'x'.repeat(50_000) });
    assert.ok(d.reason!.length < 10_100);
    assert.match(d.reason!, /characters cut/);
  });
});

describe('combineDecisions', () => {
  test('deny beats ask beats allow; contexts joined; the last updatedInput; errors kept', () => {
    const allow = { kind: 'allow' as const, allowed: true, updatedInput: { command: 'a' }, context: 'one', errors: [] };
    const ask = { kind: 'ask' as const, reason: 'ask me', updatedInput: { command: 'b' }, errors: [] };
    const block = { kind: 'block' as const, reason: 'no', errors: [] };
    const failed = { kind: 'allow' as const, context: 'two', errors: ['The hook `x` failed'] };
    assert.deepEqual(combineDecisions([]), { kind: 'allow', errors: [] });
    assert.deepEqual(combineDecisions([allow, failed]), {
      kind: 'allow',
      allowed: true,
      updatedInput: { command: 'a' },
      context: 'one\n\ntwo',
      errors: ['The hook `x` failed'],
    });
    assert.deepEqual(combineDecisions([allow, ask, failed]), {
      kind: 'ask',
      reason: 'ask me',
      updatedInput: { command: 'b' },
      context: 'one\n\ntwo',
      errors: ['The hook `x` failed'],
    });
    const all = combineDecisions([block, allow, ask, { ...block, reason: 'never' }]);
    assert.equal(all.kind, 'block');
    assert.equal(all.reason, 'no\nnever');
    assert.equal(all.allowed, undefined);
  });
});

describe('decideAnswer (TypeScript hooks)', () => {
  const fn = { command: 'worker hook PreToolUse[0]' };
  test('answers map onto the same decisions', () => {
    assert.deepEqual(decideAnswer('PreToolUse', fn, undefined), { kind: 'allow', errors: [] });
    assert.deepEqual(decideAnswer('PreToolUse', fn, { decision: 'deny', reason: 'no' }), { kind: 'block', reason: 'no', errors: [] });
    assert.deepEqual(decideAnswer('Stop', fn, { decision: 'block', reason: 'go on' }), { kind: 'block', reason: 'go on', errors: [] });
    assert.deepEqual(decideAnswer('PreToolUse', fn, { decision: 'ask', reason: 'r' }), { kind: 'ask', reason: 'r', errors: [] });
    assert.deepEqual(decideAnswer('PreToolUse', fn, { decision: 'allow', updatedInput: { a: 1 } }), {
      kind: 'allow',
      allowed: true,
      updatedInput: { a: 1 },
      errors: [],
    });
    assert.deepEqual(decideAnswer('UserPromptSubmit', fn, { context: 'c' }), { kind: 'allow', context: 'c', errors: [] });
  });
  test('a throw or a wrong answer is a failure', () => {
    assert.match(decideAnswer('PreToolUse', fn, undefined, 'boom').errors[0]!, /worker hook PreToolUse\[0\]` threw: boom/);
    assert.match(decideAnswer('PreToolUse', fn, { decision: 'nope' }).errors[0]!, /not a hook answer/);
    assert.match(decideAnswer('PreToolUse', fn, 'deny').errors[0]!, /not a hook answer/);
    assert.match(decideAnswer('Stop', fn, { decision: 'ask' }).errors[0]!, /only PreToolUse/);
    assert.equal(decideAnswer('PreToolUse', { ...fn, onFailure: 'block' }, undefined, 'boom').kind, 'block');
  });
});
