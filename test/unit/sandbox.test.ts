// src/tools/sandbox.ts: the bubblewrap argument list, and real bwrap around the terminal in this process.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { execa } from 'execa';
import { bwrapArgs, describeSandbox, hiddenDirs, parseSandbox, sandboxedCommand, type SandboxOptions } from '../../src/tools/sandbox.js';
import { runTerminal } from '../../src/tools/terminal.js';

import { ROOT, waitFor } from '../support/harness.js';

const HOST: SandboxOptions = { kind: 'bwrap', network: 'host' };
const NONE: SandboxOptions = { kind: 'bwrap', network: 'none' };

describe('the bubblewrap argument list', () => {
  test('read-only root, private /tmp, the home hidden, the workspace writable, own PID namespace, no capabilities', () => {
    const args = bwrapArgs(HOST, { workspace: '/tmp/ws', hide: ['/root', '/tmp/faheem-home'] });
    assert.deepEqual(args, [
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/root', // FAHEEM_HOME under /tmp is hidden by the private /tmp already
      '--bind',
      '/tmp/ws',
      '/tmp/ws',
      '--remount-ro',
      '/root',
      '--unshare-pid',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      '--chdir',
      '/tmp/ws',
    ]);
    assert.ok(!args.includes('--unshare-net'), 'network host shares the network');
    assert.ok(bwrapArgs(NONE, { workspace: '/tmp/ws' }).includes('--unshare-net'));
  });

  test('a workspace inside a hidden directory is shown again; a hidden directory inside the workspace stays hidden', () => {
    const args = bwrapArgs(NONE, {
      workspace: '/home/u/project',
      cwd: 'src',
      hide: ['/home/u', '/home/u/project/.faheem', '/home/u/.faheem'],
      binds: [{ path: '/tmp/faheem-term-1' }, { path: '/home/u/.faheem/outputs/c1', readOnly: true }],
    });
    assert.deepEqual(args, [
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/home/u',
      '--bind',
      '/home/u/project',
      '/home/u/project',
      '--tmpfs',
      '/home/u/project/.faheem',
      '--bind',
      '/tmp/faheem-term-1',
      '/tmp/faheem-term-1',
      '--ro-bind',
      '/home/u/.faheem/outputs/c1',
      '/home/u/.faheem/outputs/c1',
      '--remount-ro',
      '/home/u',
      '--remount-ro',
      '/home/u/project/.faheem',
      '--unshare-pid',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      '--unshare-net',
      '--chdir',
      '/home/u/project/src',
    ]);
    // The home that is the workspace is not hidden from it.
    const own = bwrapArgs(HOST, { workspace: '/root', hide: ['/root'] });
    assert.ok(!own.includes('--remount-ro'));
    assert.deepEqual(own.slice(7, 12), ['--tmpfs', '/tmp', '--bind', '/root', '/root']);
  });

  test('the command runs through env: the sandbox ignores C-c, the command gets it; no sandbox, no change', () => {
    assert.deepEqual(sandboxedCommand(undefined, { workspace: '/w' }, 'bash', ['-c', 'x']), { file: 'bash', args: ['-c', 'x'] });
    const { file, args } = sandboxedCommand(HOST, { workspace: '/w' }, 'bash', ['-c', 'x']);
    assert.equal(file, 'env');
    assert.deepEqual(args.slice(0, 2), ['--ignore-signal=INT', 'bwrap']);
    assert.deepEqual(args.slice(args.indexOf('--')), ['--', 'env', '--default-signal=INT', '--', 'bash', '-c', 'x']);
  });

  test('settings: bwrap with host or none; none alone, or unknown values, are refused', () => {
    assert.equal(parseSandbox(undefined, undefined), undefined);
    assert.equal(parseSandbox('none', 'host'), undefined);
    assert.deepEqual(parseSandbox('bwrap', undefined), HOST);
    assert.deepEqual(parseSandbox('BWRAP', 'none'), NONE);
    assert.throws(() => parseSandbox(undefined, 'none'), /needs a sandbox: add --sandbox bwrap/);
    assert.throws(() => parseSandbox('docker', undefined), /"docker" is not known; use bwrap/);
    assert.throws(() => parseSandbox('bwrap', 'lan'), /"lan" is not known; use host or none/);
    assert.equal(describeSandbox(NONE), 'commands run under bubblewrap (workspace writable, /tmp private, network none)');
    assert.match(describeSandbox(undefined), /unsandboxed, with this user's rights \(use --sandbox bwrap/);
  });

  test('real bwrap: the workspace inside a hidden home is writable, the rest of the home is not there', async () => {
    // Outside /tmp (the private /tmp would hide it anyway), so the ordering of the mounts matters.
    const home = await mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : ROOT, 'faheem-sbx-home-'));
    try {
      const ws = path.join(home, 'project');
      await mkdir(path.join(ws, '.faheem'), { recursive: true });
      await writeFile(path.join(home, 'secret.txt'), 'top secret');
      await writeFile(path.join(ws, '.faheem', 'inner.txt'), 'inner secret');
      const script = 'cat ../secret.txt; ls -A .faheem; echo ok > w.txt; echo no > ../x.txt; echo no > .faheem/y.txt; echo done';
      const { file, args } = sandboxedCommand(HOST, { workspace: ws, hide: [home, path.join(ws, '.faheem')] }, 'sh', ['-c', script]);
      const r = await execa(file, args, { all: true, reject: false });
      assert.equal(r.exitCode, 0, r.all);
      assert.match(r.all, /secret\.txt: No such file or directory/);
      assert.doesNotMatch(r.all, /top secret|inner secret|inner\.txt/);
      assert.match(r.all, /x\.txt: Read-only file system/);
      assert.match(r.all, /y\.txt: Read-only file system/);
      assert.equal(await readFile(path.join(ws, 'w.txt'), 'utf8'), 'ok\n');
      assert.ok(!existsSync(path.join(home, 'x.txt')) && !existsSync(path.join(ws, '.faheem', 'y.txt')));
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('the terminal under bubblewrap (in this process)', () => {
  const processes = async (start: string) => (await execa('pgrep', ['-f', `^${start}`], { reject: false })).stdout.trim();
  const ctx = async (session: string) => ({
    workspace: await mkdtemp(path.join(os.tmpdir(), 'faheem-sbx-ws-')),
    sandbox: HOST,
    sandboxHide: hiddenDirs(),
    session,
    softTimeoutMs: 1000,
  });

  test('C-c reaches the command, not the sandbox: it ends with 130 and its shell state is kept; the background job goes with it', async () => {
    const c = await ctx(`cc-${process.pid}`);
    const marker = `3013.${process.pid}`;
    const first = await runTerminal(
      { command: `export KEPT=yes; sleep ${marker} & echo started; sleep 100` },
      { cwd: c.workspace, env: {} },
      c,
    );
    assert.equal(first.exitCode, -1, first.content);
    assert.match(first.content, /^started\n\[The command is still running/);
    assert.ok(await processes(`sleep ${marker}`));
    const stopped = await runTerminal({ command: 'C-c', is_input: true }, first.terminal, c);
    assert.equal(stopped.exitCode, 130, stopped.content);
    assert.deepEqual(stopped.terminal.env, { KEPT: 'yes' }, 'the EXIT trap still wrote the state');
    await waitFor('the background job to end', async () => (await processes(`sleep ${marker}`)) === '', 5_000);
  });

  test('reset stops the running command and everything it started', async () => {
    const c = await ctx(`reset-${process.pid}`);
    const marker = `3014.${process.pid}`;
    const first = await runTerminal({ command: `(setsid sleep ${marker} &); sleep ${marker}` }, { cwd: c.workspace, env: {} }, c);
    assert.equal(first.exitCode, -1, first.content);
    await waitFor('both sleeps', async () => (await processes(`sleep ${marker}`)).split('\n').length === 2, 5_000);
    const reset = await runTerminal({ command: '', reset: true }, first.terminal, c);
    assert.match(reset.content, /the running command was stopped/);
    await waitFor('every sleep to end, even the one in its own session', async () => (await processes(`sleep ${marker}`)) === '', 5_000);
  });
});
