// Hooks as real processes: a policy script reading the event on stdin, hooks that hang, print
// garbage, rewrite arguments or add context, the environment they see, and the worker's own hooks.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CommandHook } from '../../../src/hooks/config.js';
import type { HookEvent, PreToolUseEvent } from '../../../src/hooks/event.js';
import { checkWorkerHooks, executeHooks, workerHookEvents, type HookRunnerDeps } from '../../../src/hooks/run-hook.js';
import { checkSandbox, onHost } from '../../../src/sandbox/sandbox.js';
import { waitFor } from '../../support/harness.js';

let ws: string;
const FAKE_KEY = 'sk-fake-llm-key-0123456789';
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  LLM_API_KEY: FAKE_KEY,
  GITHUB_TOKEN: 'ghp_faketoken123',
  VISIBLE: 'yes', // named in FAHEEM_COMMAND_ENV: hooks start from the allowlist, as commands do
  FAHEEM_COMMAND_ENV: 'VISIBLE',
};
const deps: HookRunnerDeps = { env, secretValues: [FAKE_KEY, 'ghp_faketoken123'] };

const pre = (command: string, tool = 'terminal'): PreToolUseEvent => ({
  hook_event_name: 'PreToolUse',
  session_id: 'conv-1',
  conversation_id: 'conv-1',
  cwd: ws,
  tool_name: tool,
  tool_input: { command },
  tool_use_id: 'call-1',
});
const cmd = (command: string, extra: Partial<CommandHook> = {}): CommandHook => ({ type: 'command', command, ...extra });
const run = (event: HookEvent, hooks: CommandHook[], d: HookRunnerDeps = deps, signal?: AbortSignal) =>
  executeHooks({ conversationId: 'conv-1', workspace: ws, event, hooks }, d, signal);

// A Claude Code style policy hook: reads the event JSON on stdin, refuses rm -rf.
const POLICY_EXIT2 = `
let s = ''; process.stdin.on('data', (c) => (s += c)).on('end', () => {
  const e = JSON.parse(s);
  if (e.tool_name === 'terminal' && /rm -rf/.test(e.tool_input.command)) { console.error('rm -rf is not allowed here'); process.exit(2); }
});`;
const POLICY_JSON = `
let s = ''; process.stdin.on('data', (c) => (s += c)).on('end', () => {
  const e = JSON.parse(s);
  if (/rm -rf/.test(e.tool_input.command)) console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'policy: ' + e.tool_input.command } }));
});`;

before(() => {
  ws = mkdtempSync(path.join(tmpdir(), 'faheem-hooks-'));
  writeFileSync(path.join(ws, 'policy.mjs'), POLICY_EXIT2);
  writeFileSync(path.join(ws, 'policy-json.mjs'), POLICY_JSON);
});
after(() => rmSync(ws, { recursive: true, force: true }));

describe('command hooks', () => {
  test('a policy hook blocks rm -rf with exit code 2 and lets other commands through', async () => {
    const blocked = await run(pre('rm -rf /tmp/x'), [cmd('node policy.mjs')]);
    assert.deepEqual(blocked.decision, { kind: 'block', reason: 'rm -rf is not allowed here', errors: [] });
    assert.equal(blocked.outcomes[0]!.exitCode, 2);
    assert.equal(blocked.outcomes[0]!.type, 'command');
    assert.equal(blocked.outcomes[0]!.decision, 'block');
    assert.ok(blocked.outcomes[0]!.durationMs >= 0);
    const allowed = await run(pre('ls'), [cmd('node "$CLAUDE_PROJECT_DIR/policy.mjs"')]);
    assert.deepEqual(allowed.decision, { kind: 'allow', errors: [] });
    assert.equal(allowed.outcomes[0]!.exitCode, 0);
  });

  test('a policy hook denies with JSON on exit 0', async () => {
    const r = await run(pre('rm -rf build'), [cmd('node policy-json.mjs')]);
    assert.deepEqual(r.decision, { kind: 'block', reason: 'policy: rm -rf build', errors: [] });
    assert.equal(r.outcomes[0]!.exitCode, 0);
  });

  test('the hook reads the event as JSON on stdin and runs in the workspace', async () => {
    const r = await run(pre('echo hi', 'file_editor'), [cmd('cat > event.json; pwd > where.txt')]);
    assert.equal(r.decision.kind, 'allow');
    assert.deepEqual(JSON.parse(readFileSync(path.join(ws, 'event.json'), 'utf8')), pre('echo hi', 'file_editor'));
    assert.equal(readFileSync(path.join(ws, 'where.txt'), 'utf8').trim(), ws);
  });

  test('a hook that hangs past its timeout is stopped, with all it started: a failure, or a block with onFailure', async () => {
    const pidFile = path.join(ws, 'hang.pid');
    const hang = `sleep 30 & echo $! > ${pidFile}; wait`;
    const r = await run(pre('ls'), [cmd(hang, { timeout: 1 })]);
    assert.equal(r.decision.kind, 'allow');
    assert.equal(r.decision.errors.length, 1);
    assert.match(r.decision.errors[0]!, /did not finish within its timeout of 1 s and was stopped/);
    assert.equal(r.outcomes[0]!.timedOut, true);
    assert.equal(r.outcomes[0]!.exitCode, null);
    // The group is killed (interrupt, terminate, kill) as the result comes back: wait for it, with a deadline.
    const child = Number(readFileSync(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(child, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (const until = Date.now() + 5000; alive() && Date.now() < until;) await new Promise((r) => setTimeout(r, 25));
    assert.equal(alive(), false, 'the background sleep was killed too');

    const strict = await run(pre('ls'), [cmd('sleep 30', { timeout: 1, onFailure: 'block' })]);
    assert.equal(strict.decision.kind, 'block');
    assert.match(strict.decision.reason!, /did not finish within its timeout of 1 s/);
  });

  test('garbage on stdout and a crash are failures that fail open', async () => {
    const r = await run(pre('ls'), [cmd('echo "{not json"'), cmd('echo oops >&2; exit 3'), cmd('kill -9 $$')]);
    assert.equal(r.decision.kind, 'allow');
    assert.equal(r.decision.errors.length, 3);
    assert.match(r.decision.errors[0]!, /starts like JSON but is not valid JSON/);
    assert.match(r.decision.errors[1]!, /failed with exit code 3: oops/);
    assert.match(r.decision.errors[2]!, /failed with exit code 137/);
    assert.deepEqual(
      r.outcomes.map((o) => o.exitCode),
      [0, 3, 137],
    );
    assert.match(r.outcomes[0]!.error!, /not valid JSON/);
  });

  test('updatedInput from the last hook that gave one; hooks run in parallel', async () => {
    // Each of the two hooks that answer marks that it started, then waits for the other's mark: run
    // one after the other, the first would give up (no mark comes) and answer nothing.
    const upd = (c: string, mine: string, theirs: string) =>
      `touch ${mine}; for i in $(seq 600); do [ -e ${theirs} ] && break; sleep 0.05; done; [ -e ${theirs} ] && ` +
      `echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: c } } })}'`;
    const r = await run(pre('ls'), [cmd(upd('ls -1', 'par-a', 'par-b')), cmd('true'), cmd(upd('ls -la', 'par-b', 'par-a'))]);
    assert.deepEqual(r.decision, { kind: 'allow', allowed: true, updatedInput: { command: 'ls -la' }, errors: [] });
  });

  test('UserPromptSubmit: plain stdout becomes context; exit 2 refuses the message', async () => {
    const event: HookEvent = { hook_event_name: 'UserPromptSubmit', session_id: 'c', conversation_id: 'c', cwd: ws, prompt: 'deploy now' };
    const r = await run(event, [cmd('echo "Branch: main"'), cmd('echo "Freeze until Friday"')]);
    assert.deepEqual(r.decision, { kind: 'allow', context: 'Branch: main\n\nFreeze until Friday', errors: [] });
    const refused = await run(event, [cmd(`grep -q deploy && { echo "no deploys during the freeze" >&2; exit 2; }; exit 0`)]);
    assert.deepEqual(refused.decision, { kind: 'block', reason: 'no deploys during the freeze', errors: [] });
  });

  test("the worker's secrets are not in a hook's environment, and output is masked", async () => {
    const r = await run(pre('ls'), [cmd('env > env.txt; echo "$FAHEEM_PROJECT_DIR"; echo "leak: ' + FAKE_KEY + '" >&2')]);
    const seen = readFileSync(path.join(ws, 'env.txt'), 'utf8');
    assert.doesNotMatch(seen, /LLM_API_KEY|sk-fake|GITHUB_TOKEN|ghp_/);
    assert.match(seen, /^VISIBLE=yes$/m);
    assert.equal(r.outcomes[0]!.stdout.trim(), ws);
    assert.doesNotMatch(r.outcomes[0]!.stderr, /sk-fake/);
    assert.match(r.outcomes[0]!.stderr, /<secret-hidden>/);
    const blocked = await run(pre('ls'), [cmd(`echo "key ${FAKE_KEY}" >&2; exit 2`)]);
    assert.equal(blocked.decision.reason, 'key <secret-hidden>');
  });

  test('long output is shortened in the record', async () => {
    const r = await run(pre('ls'), [cmd("head -c 100000 /dev/zero | tr '\\0' x")]);
    assert.ok(r.outcomes[0]!.stdout.length < 2200);
    assert.equal(r.decision.kind, 'allow');
  });

  test('an abort stops the hooks and rejects', async () => {
    // The hook marks that it started; the abort comes then. Not aborted, it would end well (and not reject).
    const ac = new AbortController();
    const mark = path.join(ws, 'abort-started');
    const running = run(pre('ls'), [cmd(`touch ${mark}; sleep 30`)], deps, ac.signal);
    await waitFor('the hook to start', () => existsSync(mark));
    ac.abort();
    await assert.rejects(running);
  });
});

describe("the worker's TypeScript hooks", () => {
  test('run after the command hooks, get the event, decide like them', async () => {
    const seen: string[] = [];
    const workerHooks = checkWorkerHooks({
      PreToolUse: [
        (e: PreToolUseEvent) => {
          seen.push(`${e.tool_name}:${String(e.tool_input.command)}`);
          return /push/.test(String(e.tool_input.command)) ? { decision: 'deny', reason: 'no pushes' } : undefined;
        },
        { run: async () => ({ decision: 'allow', updatedInput: { command: 'git status' } }) },
      ],
      Stop: () => {
        throw new Error('broken');
      },
    })!;
    assert.deepEqual(workerHookEvents(workerHooks), ['PreToolUse', 'Stop']);
    const d = { ...deps, workerHooks };
    const r = await run(pre('git push'), [cmd('echo "{}"')], d);
    assert.deepEqual(seen, ['terminal:git push']);
    assert.equal(r.decision.kind, 'block');
    assert.equal(r.decision.reason, 'no pushes');
    assert.deepEqual(r.decision.updatedInput, { command: 'git status' });
    assert.deepEqual(
      r.outcomes.map((o) => [o.type, o.hook, o.decision]),
      [
        ['command', 'echo "{}"', 'allow'],
        ['function', 'worker hook PreToolUse[0]', 'block'],
        ['function', 'worker hook PreToolUse[1]', 'allow'],
      ],
    );
    const stop = await run({ hook_event_name: 'Stop', session_id: 'c', conversation_id: 'c', cwd: ws, stop_hook_active: false }, [], d);
    assert.equal(stop.decision.kind, 'allow');
    assert.match(stop.decision.errors[0]!, /worker hook Stop\[0\]` threw: broken/);
  });

  test('one past its timeout is a failure', async () => {
    const workerHooks = checkWorkerHooks({ PreToolUse: { run: () => new Promise(() => undefined), timeout: 0.2, onFailure: 'block' } })!;
    const r = await run(pre('ls'), [], { ...deps, workerHooks });
    assert.equal(r.decision.kind, 'block');
    assert.match(r.decision.reason!, /timeout of 0.2 s/);
    assert.equal(r.outcomes[0]!.timedOut, true);
  });

  test('checkWorkerHooks refuses unknown events and non-functions', () => {
    assert.throws(
      () => checkWorkerHooks({ Notification: () => undefined }),
      /"Notification" is not a hook event; the known events are PreToolUse/,
    );
    assert.throws(() => checkWorkerHooks({ Stop: 'x' }), /hooks\.Stop must be a function/);
    assert.equal(checkWorkerHooks(undefined), undefined);
  });
});

describe('under the sandbox', () => {
  test('a hook runs confined: the workspace writable, the rest read-only', async (t) => {
    const sandbox = onHost({ kind: 'bwrap', network: 'host' }, process.env);
    try {
      await checkSandbox(sandbox, process.env);
    } catch (err) {
      // The CI sets FAHEEM_TEST_REQUIRE_SANDBOX=1: there a missing sandbox fails, never passes as a skip.
      const why = `no usable bwrap here: ${(err as Error).message}`;
      if (process.env.FAHEEM_TEST_REQUIRE_SANDBOX === '1') assert.fail(`${why} (FAHEEM_TEST_REQUIRE_SANDBOX=1)`);
      t.skip(why);
      return;
    }
    const outside = mkdtempSync(path.join(tmpdir(), 'faheem-hooks-outside-'));
    try {
      const r = await run(pre('ls'), [cmd(`touch inside.txt && touch ${outside}/escaped.txt`)], { ...deps, sandbox });
      assert.equal(existsSync(path.join(ws, 'inside.txt')), true);
      assert.equal(existsSync(path.join(outside, 'escaped.txt')), false);
      assert.match(r.decision.errors[0] ?? '', /failed with exit code 1/);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
