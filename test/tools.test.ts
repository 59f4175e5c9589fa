// The tools on their own: real files, real bash processes.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { StartLog } from '../src/activities/start-log.js';
import { editFile } from '../src/tools/file-editor.js';
import { FileEditorTool, TerminalTool, ThinkTool } from '../src/tools/builtin.js';
import { retryClass } from '../src/tools/define.js';
import { commandBaseEnv, runTerminal, MAX_OUTPUT_CHARS, CommandInterrupted } from '../src/tools/terminal.js';
import type { TerminalState } from '../src/types.js';

const tmp = (p: string) => mkdtemp(path.join(tmpdir(), p));

describe('file_editor', () => {
  async function setup() {
    const workspace = await tmp('fe-ws-');
    const undoDir = await tmp('fe-undo-');
    return { workspace, ctx: { workspace, undoDir } };
  }

  test('create, view with line numbers, str_replace, insert, undo_edit', async () => {
    const { workspace, ctx } = await setup();
    let r = await editFile({ command: 'create', path: 'src/a.txt', file_text: 'one\ntwo\nthree\n' }, ctx);
    assert.equal(r.isError, false, r.content);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'one\ntwo\nthree\n');

    r = await editFile({ command: 'view', path: path.join(workspace, 'src/a.txt') }, ctx);
    assert.match(r.content, /^\s+1\tone$/m);
    assert.match(r.content, /^\s+3\tthree$/m);
    r = await editFile({ command: 'view', path: 'src/a.txt', view_range: [2, -1] }, ctx);
    assert.doesNotMatch(r.content, /\tone/);
    assert.match(r.content, /\s+2\ttwo/);

    r = await editFile({ command: 'str_replace', path: 'src/a.txt', old_str: 'two', new_str: 'TWO' }, ctx);
    assert.equal(r.isError, false, r.content);
    r = await editFile({ command: 'insert', path: 'src/a.txt', insert_line: 0, new_str: 'zero' }, ctx);
    assert.equal(r.isError, false, r.content);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'zero\none\nTWO\nthree\n');

    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'one\ntwo\nthree\n');
    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.match(r.content, /removed/);
    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.equal(r.isError, true);
  });

  test('directory view lists two levels and leaves hidden files out', async () => {
    const { workspace, ctx } = await setup();
    await mkdir(path.join(workspace, 'pkg/inner/deep'), { recursive: true });
    await writeFile(path.join(workspace, 'pkg/inner/x.ts'), '');
    await writeFile(path.join(workspace, '.secret'), '');
    const r = await editFile({ command: 'view', path: '.' }, ctx);
    assert.match(r.content, /pkg\//);
    assert.match(r.content, /pkg\/inner\//);
    assert.doesNotMatch(r.content, /x\.ts/);
    assert.doesNotMatch(r.content, /\.secret/);
  });

  test('errors are observations, not exceptions', async () => {
    const { workspace, ctx } = await setup();
    await writeFile(path.join(workspace, 'dup.txt'), 'a\nb\na\n');
    const cases: [unknown, RegExp][] = [
      [{ command: 'str_replace', path: 'dup.txt', old_str: 'a', new_str: 'c' }, /occurs 2 times.*lines 1, 3/],
      [{ command: 'str_replace', path: 'dup.txt', old_str: 'zzz', new_str: 'c' }, /does not occur/],
      [{ command: 'create', path: 'dup.txt', file_text: 'other' }, /already exists/],
      [{ command: 'view', path: 'missing.txt' }, /does not exist/],
      [{ command: 'insert', path: 'dup.txt', insert_line: 99, new_str: 'x' }, /past the end/],
      [{ command: 'explode', path: 'dup.txt' }, /Invalid arguments for file_editor: command/],
      [{ path: 'dup.txt' }, /Invalid arguments/],
      [{ command: 'view', path: '/etc/passwd' }, /outside the workspace/],
      [{ command: 'view', path: '../../etc/passwd' }, /outside the workspace/],
      [{ command: 'create', path: '../escape.txt', file_text: 'x' }, /outside the workspace/],
    ];
    for (const [args, expected] of cases) {
      const r = await editFile(args, ctx);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(r.content, expected, JSON.stringify(args));
    }
    // Creating identical content again is fine (a retried call).
    const again = await editFile({ command: 'create', path: 'dup.txt', file_text: 'a\nb\na\n' }, ctx);
    assert.equal(again.isError, false);
  });

  test('a symlink cannot lead out of the workspace', async () => {
    const { workspace, ctx } = await setup();
    const outside = await tmp('fe-outside-');
    await writeFile(path.join(outside, 'target.txt'), 'secret');
    await symlink(outside, path.join(workspace, 'link'));
    const r = await editFile({ command: 'view', path: 'link/target.txt' }, ctx);
    assert.equal(r.isError, true);
    assert.match(r.content, /outside the workspace/);
  });

  test('binary and huge files are refused, long views clipped', async () => {
    const { workspace, ctx } = await setup();
    await writeFile(path.join(workspace, 'bin.dat'), Buffer.from([1, 0, 2]));
    assert.match((await editFile({ command: 'view', path: 'bin.dat' }, ctx)).content, /binary/);
    await writeFile(path.join(workspace, 'big.txt'), 'x'.repeat(11 * 1024 * 1024));
    assert.match((await editFile({ command: 'view', path: 'big.txt' }, ctx)).content, /over 10 MB/);
    await writeFile(path.join(workspace, 'long.txt'), 'line\n'.repeat(10_000));
    assert.match((await editFile({ command: 'view', path: 'long.txt' }, ctx)).content, /clipped at 16000/);
  });
});

describe('terminal', () => {
  async function setup() {
    const workspace = await tmp('term-ws-');
    return { workspace, state: { cwd: workspace, env: {} } as TerminalState, ctx: { workspace, baseEnv: commandBaseEnv() } };
  }

  test('runs in the workspace; cwd and exported variables carry over; exit code reported', async () => {
    const { workspace, ctx, state } = await setup();
    let r = await runTerminal({ command: 'pwd && mkdir -p sub && cd sub && export GREETING=hi && LOCAL=1' }, state, ctx);
    assert.equal(r.exitCode, 0);
    assert.ok(r.content.includes(workspace));
    assert.equal(r.terminal.cwd, path.join(workspace, 'sub'));
    assert.equal(r.terminal.env.GREETING, 'hi');
    assert.equal(r.terminal.env.LOCAL, undefined, 'unexported variables do not carry over');

    r = await runTerminal({ command: 'echo "$GREETING from $(basename "$PWD")"; exit 3' }, r.terminal, ctx);
    assert.match(r.content, /hi from sub/);
    assert.equal(r.exitCode, 3);
    assert.match(r.content, /exited with code 3/);

    r = await runTerminal({ command: 'unset GREETING; echo "[${GREETING:-gone}]"' }, r.terminal, ctx);
    assert.match(r.content, /\[gone\]/);
    assert.equal(r.terminal.env.GREETING, undefined);

    r = await runTerminal({ command: 'true', reset: true }, r.terminal, ctx);
    assert.equal(r.terminal.cwd, workspace);
  });

  test('the environment is kept exactly: values with newlines and quotes, declared-only exports, set -e, functions named like tools', async () => {
    const { ctx, state } = await setup();
    let r = await runTerminal({ command: `export MULTI=$'a\\nb "c" $d'; export EMPTY=; export DECLARED; set -eu; env() { echo shadowed; }; false` }, state, ctx);
    assert.equal(r.exitCode, 1, 'the command\'s own exit code, under set -e');
    assert.equal(r.terminal.env.MULTI, 'a\nb "c" $d');
    assert.equal(r.terminal.env.EMPTY, '');
    assert.ok(!('DECLARED' in r.terminal.env), 'exported without a value: nothing to carry');
    r = await runTerminal({ command: 'printf "%s|" "$MULTI" "${EMPTY-unset}"' }, r.terminal, ctx);
    assert.ok(r.content.startsWith('a\nb "c" $d||'), r.content);
  });

  test('commands do not read ~/.bashrc, even started as bash would take for a remote shell (stdin a socket, SHLVL 0)', async () => {
    const { workspace, state } = await setup();
    const home = await tmp('term-home-');
    await writeFile(path.join(home, '.bashrc'), 'echo BASHRC-RAN\nexport FROM_RC=1\n');
    const ctx = { workspace, baseEnv: { ...commandBaseEnv(), HOME: home, SHLVL: '0' } };
    const r = await runTerminal({ command: 'echo "rc:${FROM_RC:-none}"' }, state, ctx);
    assert.ok(!r.content.includes('BASHRC-RAN'), r.content);
    assert.match(r.content, /rc:none/);
  });

  test('a syntax error is reported and the state survives', async () => {
    const { ctx, state } = await setup();
    const r = await runTerminal({ command: 'if then fi' }, { ...state, env: { KEEP: '1' } }, ctx);
    assert.notEqual(r.exitCode, 0);
    assert.match(r.content, /syntax error/);
    assert.equal(r.terminal.env.KEEP, '1');
  });

  test('long output keeps head and tail and says so; the full output is saved', async () => {
    const { ctx, state } = await setup();
    const outputDir = await tmp('term-out-');
    const r = await runTerminal({ command: 'seq 1 200000' }, state, { ...ctx, outputDir });
    assert.ok(r.content.length < MAX_OUTPUT_CHARS + 500, `content is ${r.content.length} characters`);
    assert.match(r.content, /^1\n2\n3\n/);
    assert.match(r.content, /200000\n/);
    assert.match(r.content, /characters omitted/);
    const file = /The full output is in (\S+)\./.exec(r.content)?.[1];
    assert.ok(file);
    assert.equal((await readFile(file, 'utf8')).split('\n').length, 200001);
  });

  test('the hard timeout stops the command and its children', async () => {
    const { ctx, state } = await setup();
    const r = await runTerminal({ command: 'echo started; sleep 30 & sleep 30', timeout: 1 }, state, ctx);
    assert.equal(r.isError, true);
    assert.match(r.content, /started/);
    assert.match(r.content, /stopped after 1 s/);
  });

  test('an abort interrupts the process group and keeps partial output', async () => {
    const { ctx, state } = await setup();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    await assert.rejects(
      runTerminal({ command: 'echo partial; sleep 30' }, state, { ...ctx, signal: controller.signal }),
      (err: unknown) => err instanceof CommandInterrupted && err.partialOutput.includes('partial'),
    );
  });

  test('the worker\'s secrets are not in the command environment, nor in the saved state', async () => {
    const { ctx, state } = await setup();
    const baseEnv = commandBaseEnv({ PATH: process.env.PATH, LLM_API_KEY: 'sk-should-not-leak', OPENAI_API_KEY: 'sk-nope', HOME: '/root' });
    const r = await runTerminal({ command: 'env; export MY_TOKEN=abc' }, state, { ...ctx, baseEnv, secrets: ['sk-should-not-leak'] });
    assert.doesNotMatch(r.content, /sk-should-not-leak|sk-nope/);
    assert.equal(r.terminal.env.MY_TOKEN, undefined);
  });

  test('bad arguments become error observations', async () => {
    const { ctx, state } = await setup();
    assert.match((await runTerminal({}, state, ctx)).content, /Invalid arguments for terminal/);
    assert.match((await runTerminal({ command: '   ' }, state, ctx)).content, /empty/);
    assert.match((await runTerminal({ command: 'x', is_input: true }, state, ctx)).content, /No command is running/);
  });

  test('a quiet command comes back still running; is_input sends text; the state follows when it ends', async () => {
    const { ctx, state } = await setup();
    const quick = { ...ctx, softTimeoutMs: 400 };
    let r = await runTerminal({ command: 'echo ready; read line; cd /tmp; echo "got $line"' }, state, quick);
    assert.equal(r.exitCode, -1);
    assert.match(r.content, /ready/);
    assert.match(r.content, /still running/);
    assert.equal(r.terminal.running?.command, 'echo ready; read line; cd /tmp; echo "got $line"');
    const busy = await runTerminal({ command: 'echo other' }, r.terminal, quick);
    assert.match(busy.content, /is still running/);
    r = await runTerminal({ command: 'hello', is_input: true }, r.terminal, quick);
    assert.match(r.content, /got hello/);
    assert.equal(r.exitCode, 0);
    assert.equal(r.terminal.running, undefined);
    assert.equal(r.terminal.cwd, '/tmp');
  });

  test('keys: C-c interrupts, C-d ends input; reset stops a running command', async () => {
    const { ctx, state } = await setup();
    const quick = { ...ctx, softTimeoutMs: 300 };
    let r = await runTerminal({ command: 'sleep 30' }, state, quick);
    assert.match(r.content, /still running/);
    r = await runTerminal({ command: 'C-c', is_input: true }, r.terminal, quick);
    assert.equal(r.exitCode, 130);
    r = await runTerminal({ command: 'cat' }, r.terminal, quick);
    r = await runTerminal({ command: 'abc', is_input: true }, r.terminal, quick);
    assert.match(r.content, /abc/);
    r = await runTerminal({ command: 'C-d', is_input: true }, r.terminal, quick);
    assert.equal(r.exitCode, 0);
    r = await runTerminal({ command: 'sleep 30' }, r.terminal, quick);
    r = await runTerminal({ command: '', reset: true }, r.terminal, quick);
    assert.match(r.content, /running command was stopped/);
    r = await runTerminal({ command: 'echo fresh' }, r.terminal, quick);
    assert.equal(r.exitCode, 0);
  });

  test('a command left running by a worker that died is reported, not pretended', async () => {
    const { ctx, state } = await setup();
    const lost = { ...state, running: { command: 'npm run dev', startedAt: new Date().toISOString() } };
    const r = await runTerminal({ command: 'C-c', is_input: true }, lost, { ...ctx, session: 'gone' });
    assert.equal(r.isError, true);
    assert.match(r.content, /left running by a worker that has since stopped/);
    assert.equal(r.terminal.running, undefined);
  });
});

describe('start log', () => {
  const attempt = (activityId: string, attempt: number, scheduledTimestampMs: number, runId = 'run-1') => ({
    workflowExecution: { workflowId: 'conv/1', runId },
    activityId,
    attempt,
    scheduledTimestampMs,
  });

  test('a retry runs only when the log shows no earlier attempt began, and the log could have shown it', async () => {
    const dir = await tmp('faheem-starts-');
    const day = 24 * 60 * 60 * 1000;
    const t0 = Date.now();
    const log = new StartLog(dir, 30 * day, t0);
    // Handed to a poll that never answered: no line, so the retry may run the command.
    assert.equal(await log.claim(attempt('5', 2, t0 + 1)), false);
    // It began (the claim above recorded it): a further retry must report, not run.
    assert.equal(await log.claim(attempt('5', 3, t0 + 1)), true);
    assert.equal(await log.claim(attempt('6', 1, t0 + 2)), false);
    assert.equal(await log.claim(attempt('6', 2, t0 + 2)), true);
    // After continue-as-new the same activity id belongs to a new run.
    assert.equal(await log.claim(attempt('5', 2, t0 + 3, 'run-2')), false);
    // Scheduled before the log existed (a new or wiped home): it cannot vouch, so report.
    assert.equal(await log.claim(attempt('7', 2, t0 - 1000)), true);

    // Forty days on, a new worker prunes the old runs; it vouches only from its cutoff.
    const later = new StartLog(dir, 30 * day, t0 + 40 * day);
    assert.equal(await later.claim(attempt('5', 3, t0 + 1)), true, 'pruned, so unknown rather than run');
    assert.equal(await later.claim(attempt('8', 2, t0 + 40 * day)), false);
    assert.deepEqual((await readdir(dir)).sort(), ['.since', 'conv%2F1']);
  });

  test('each tool declares what a retry may do', () => {
    assert.equal(retryClass(TerminalTool, { command: 'ls' }), 'report');
    assert.equal(retryClass(FileEditorTool, { command: 'view', path: 'a' }), 'repeat');
    assert.equal(retryClass(FileEditorTool, { command: 'create', path: 'a', file_text: 'x' }), 'repeat');
    assert.equal(retryClass(FileEditorTool, { command: 'str_replace', path: 'a' }), 'report');
    assert.equal(retryClass(ThinkTool, { thought: 'hm' }), 'repeat');
  });

  test('a call scheduled again after waiting for its host: reported if its first try began, run if not', async () => {
    const dir = await tmp('faheem-starts-');
    const t0 = Date.now();
    const log = new StartLog(dir, 30 * 24 * 60 * 60 * 1000, t0);
    // The first try began (its worker died later, and its retry then waited too long for a host)…
    assert.equal(await log.claim(attempt('8', 1, t0 + 1), { key: 'call_a', rescheduled: false }), false);
    // …so the call scheduled again under a new activity id reports instead of running twice.
    assert.equal(await log.claim(attempt('9', 1, t0 + 2), { key: 'call_a', rescheduled: true }), true);
    // A call whose first try never reached a host simply runs when scheduled again.
    assert.equal(await log.claim(attempt('10', 1, t0 + 3), { key: 'call_b', rescheduled: true }), false);
  });

  test('an unreadable log fails the attempt instead of running the command', async () => {
    const dir = await tmp('faheem-starts-');
    const log = new StartLog(dir);
    await mkdir(path.join(dir, 'conv%2F1', 'run-1'), { recursive: true }); // a directory where the file goes
    await assert.rejects(log.claim(attempt('5', 2, Date.now())), /EISDIR/);
  });
});
