// src/tools/terminal.ts on its own: real bash processes.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { commandBaseEnv, runTerminal, MAX_OUTPUT_CHARS, CommandInterrupted, stopSessionCommand } from '../../../src/tools/terminal.js';
import type { TerminalState } from '../../../src/core/types.js';
import { setUpSpawner } from '../../../src/sandbox/spawner.js';
import { tempDir } from '../../support/temp-dirs.js';

setUpSpawner({ helper: true, env: process.env }); // commands start through the spawn helper, as on a worker

const tmp = tempDir;

describe('terminal', () => {
  async function setup() {
    const workspace = await tmp('term-ws-');
    return { workspace, state: { cwd: workspace, env: {} } as TerminalState, ctx: { workspace, baseEnv: commandBaseEnv(process.env) } };
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
    let r = await runTerminal(
      { command: `export MULTI=$'a\\nb "c" $d'; export EMPTY=; export DECLARED; set -eu; env() { echo shadowed; }; false` },
      state,
      ctx,
    );
    assert.equal(r.exitCode, 1, "the command's own exit code, under set -e");
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
    const ctx = { workspace, baseEnv: { ...commandBaseEnv(process.env), HOME: home, SHLVL: '0' } };
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

  test("the worker's secrets are not in the command environment, nor in the saved state", async () => {
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
    // The soft timeout is how long a silent command is waited for: long where output or an end is
    // due (it returns at the end at once; a busy machine may take a while to print), short where
    // the command is meant to be left running.
    const talky = { ...ctx, softTimeoutMs: 1_500 };
    const patient = { ...ctx, softTimeoutMs: 10_000 };
    let r = await runTerminal({ command: 'echo ready; read line; cd /tmp; echo "got $line"' }, state, talky);
    assert.equal(r.exitCode, -1);
    assert.match(r.content, /ready/);
    assert.match(r.content, /still running/);
    assert.equal(r.terminal.running?.command, 'echo ready; read line; cd /tmp; echo "got $line"');
    const busy = await runTerminal({ command: 'echo other' }, r.terminal, talky);
    assert.match(busy.content, /is still running/);
    r = await runTerminal({ command: 'hello', is_input: true }, r.terminal, patient);
    assert.match(r.content, /got hello/);
    assert.equal(r.exitCode, 0);
    assert.equal(r.terminal.running, undefined);
    assert.equal(r.terminal.cwd, '/tmp');
  });

  test("stopSessionCommand stops the session's command left running, with its process group; other sessions' run on", async (t) => {
    const { workspace, ctx, state } = await setup();
    // A failed assertion below must not leave a writer running for ever (one did, at load 9).
    t.after(() => Promise.all([stopSessionCommand('conv-mine'), stopSessionCommand('conv-theirs')]));
    const quick = { ...ctx, softTimeoutMs: 300 };
    // A writer that never prints, its pid in a file: left running past the soft timeout.
    const writer = (name: string) => `bash -c 'echo $$ > ${name}.pid; while true; do date +%s%N >> ${name}.txt; sleep 0.05; done'`;
    const mine = await runTerminal({ command: writer('mine') }, state, { ...quick, session: 'conv-mine' });
    const theirs = await runTerminal({ command: writer('theirs') }, state, { ...quick, session: 'conv-theirs' });
    assert.match(mine.content, /still running/);
    assert.match(theirs.content, /still running/);
    // Each writer writes its pid first thing; on a busy machine, maybe after its command came back.
    const pidOf = async (name: string) => {
      for (const deadline = Date.now() + 30_000; ;) {
        const pid = Number(await readFile(path.join(workspace, `${name}.pid`), 'utf8').catch(() => ''));
        if (pid > 0) return pid;
        if (Date.now() > deadline) throw new Error(`${name}.pid was not written`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const [minePid, theirsPid] = [await pidOf('mine'), await pidOf('theirs')];
    assert.equal(await stopSessionCommand('conv-mine'), true);
    assert.equal(alive(minePid), false, "the writer's own process (a child of the command's shell) is gone");
    assert.equal(alive(theirsPid), true, "another conversation's command runs on");
    assert.equal(await stopSessionCommand('conv-mine'), false, 'nothing left: nothing done');
    const after = await runTerminal({ command: '', is_input: true }, mine.terminal, { ...quick, session: 'conv-mine' });
    assert.match(after.content, /can no longer be reached/);
    assert.equal(await stopSessionCommand('conv-theirs'), true);
    assert.equal(alive(theirsPid), false);
  });

  test('keys: C-c interrupts, C-d ends input; reset stops a running command', async () => {
    const { ctx, state } = await setup();
    // Short where the command is meant to be left running silent; long where output or an end is due.
    const quick = { ...ctx, softTimeoutMs: 300 };
    const talky = { ...ctx, softTimeoutMs: 1_500 };
    const patient = { ...ctx, softTimeoutMs: 10_000 };
    let r = await runTerminal({ command: 'sleep 30' }, state, quick);
    assert.match(r.content, /still running/);
    r = await runTerminal({ command: 'C-c', is_input: true }, r.terminal, patient);
    assert.equal(r.exitCode, 130, r.content);
    r = await runTerminal({ command: 'cat' }, r.terminal, quick);
    r = await runTerminal({ command: 'abc', is_input: true }, r.terminal, talky);
    assert.match(r.content, /abc/);
    r = await runTerminal({ command: 'C-d', is_input: true }, r.terminal, patient);
    assert.equal(r.exitCode, 0, r.content);
    r = await runTerminal({ command: 'echo "state in $__faheem_state"; sleep 30' }, r.terminal, talky);
    const stateDir = /state in (\S+)/.exec(r.content)?.[1];
    assert.ok(stateDir && existsSync(stateDir), r.content);
    r = await runTerminal({ command: '', reset: true }, r.terminal, quick);
    assert.match(r.content, /running command was stopped/);
    assert.ok(!existsSync(stateDir), "the stopped command's state folder is gone");
    r = await runTerminal({ command: 'echo fresh' }, r.terminal, patient);
    assert.equal(r.exitCode, 0, r.content);
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
