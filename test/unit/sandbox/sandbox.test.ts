// src/sandbox/sandbox.ts: the bubblewrap argument list, and real bwrap around the terminal in this process.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { execa } from 'execa';
import {
  blockedNetworks,
  bwrapArgs,
  describeSandbox,
  execInWorkspace,
  hiddenDirs,
  isHostUnsafeVariable,
  KEPT_NETWORK_CHECK,
  onHost,
  parseSandbox,
  resolveSandbox,
  sandboxedCommand,
  type SandboxOptions,
  BARE_VIEW,
  filesystemView,
  type FilesystemView,
  parseSandboxRead,
} from '../../../src/sandbox/sandbox.js';
import { commandBaseEnv, runTerminal } from '../../../src/tools/terminal.js';
import { leaseNetwork } from '../../../src/sandbox/kept-network.js';
import { procStatFields } from '../../../src/sandbox/proc-stat.js';
import { setUpSpawner } from '../../../src/sandbox/spawner.js';

import { ROOT, waitFor } from '../../support/harness.js';
import { tempDir } from '../../support/temp-dirs.js';

// As a worker runs them: its own programs found on its PATH (this process's here).
const HOST = onHost({ kind: 'bwrap', network: 'host' }, process.env);
const NONE: SandboxOptions = { kind: 'bwrap', network: 'none' };
const INTERNET = onHost({ kind: 'bwrap', network: 'internet' }, process.env);
// Commands start through the spawn helper, as on a worker.
setUpSpawner({ helper: true, env: process.env });

describe('the bubblewrap argument list', () => {
  // A host with merged /usr, a shadow file and one SSH host key.
  const VIEW: FilesystemView = {
    entries: [{ path: '/usr' }, { path: '/bin', link: 'usr/bin' }, { path: '/etc' }, { path: '/opt/go' }],
    masked: [
      { path: '/etc/shadow', kind: 'file' },
      { path: '/etc/ssl/private', kind: 'directory' },
    ],
  };

  test('a starting directory or shown folder outside the system ones is shown read-only, unless it is or lies in a hidden one', () => {
    const bound = (cwd: string) => {
      const args = bwrapArgs(HOST, { workspace: '/tmp/clone/ws', cwd, hide: ['/root', '/tmp/faheem-home'], view: VIEW });
      const at = args.indexOf('--ro-bind-try');
      // Before the workspace's bind, so a workspace inside it stays writable.
      if (at !== -1) assert.ok(at < args.indexOf('--bind'), args.join(' '));
      return at === -1 ? undefined : args[at + 1];
    };
    assert.equal(bound('/tmp/clone'), '/tmp/clone');
    assert.equal(bound('/srv/tools'), '/srv/tools');
    assert.equal(bound('/tmp/faheem-home/x'), undefined);
    assert.equal(bound('/root/x'), undefined);
    assert.equal(bound('/tmp'), undefined);
    assert.equal(bound('/usr/lib'), undefined, 'a system directory is visible already');
    assert.equal(bound('sub'), undefined, 'inside the workspace');
    const shown = bwrapArgs(HOST, {
      workspace: '/tmp/ws',
      show: ['/work/pkg', '/tmp/faheem-home'],
      hide: ['/tmp/faheem-home', '/work/pkg/.faheem'],
      view: VIEW,
    });
    assert.deepEqual(
      shown.flatMap((a, i) => (a === '--ro-bind-try' ? [shown[i + 1]] : [])),
      ['/work/pkg'],
      "the worker's package is shown, a hidden directory never",
    );
    const cover = shown.indexOf('/work/pkg/.faheem');
    assert.ok(cover > shown.indexOf('--ro-bind-try') && shown[cover - 1] === '--tmpfs', 'its own .faheem is covered after it is shown');
  });

  test('an allowlist: the system directories read-only, secrets masked, private /tmp, the workspace writable, nothing else; own PID and IPC namespaces, no capabilities', () => {
    const args = bwrapArgs(HOST, { workspace: '/srv/ws', hide: ['/root', '/tmp/faheem-home'], view: VIEW });
    assert.deepEqual(args, [
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/bin',
      '/bin',
      '--ro-bind',
      '/etc',
      '/etc',
      '--ro-bind',
      '/opt/go',
      '/opt/go',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      '--bind',
      '/srv/ws',
      '/srv/ws',
      '--ro-bind',
      '/dev/null',
      '/etc/shadow',
      '--tmpfs',
      '/etc/ssl/private',
      '--remount-ro',
      '/etc/ssl/private',
      '--remount-ro',
      '/',
      '--unshare-pid',
      '--unshare-ipc',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      '--chdir',
      '/srv/ws',
    ]);
    assert.ok(!args.join(' ').includes('--ro-bind / /'), 'never the host root');
    assert.ok(!args.includes('/root') && !args.includes('/srv'), 'a hidden directory nothing shows needs no cover; /srv is not shown');
    assert.ok(!args.includes('--unshare-net'), 'network host shares the network');
    assert.ok(bwrapArgs(NONE, { workspace: '/tmp/ws' }).includes('--unshare-net'));
    // The user's home is an empty folder (programs expect one), unless something shows it anyway.
    const homed = bwrapArgs(NONE, { workspace: '/srv/ws', emptyHome: '/root', view: VIEW });
    assert.equal(homed[homed.indexOf('/root') - 1], '--dir');
    assert.ok(!bwrapArgs(NONE, { workspace: '/root/ws', emptyHome: '/root', view: VIEW }).includes('--dir'));
  });

  test('a workspace inside a hidden directory is shown; a hidden directory inside the workspace stays hidden', () => {
    const args = bwrapArgs(NONE, {
      workspace: '/home/u/project',
      cwd: 'src',
      hide: ['/home/u', '/home/u/project/.faheem', '/home/u/.faheem'],
      binds: [{ path: '/tmp/faheem-term-1' }, { path: '/home/u/.faheem/outputs/c1', readOnly: true }],
      view: BARE_VIEW,
    });
    assert.deepEqual(args, [
      '--ro-bind',
      '/usr',
      '/usr',
      '--ro-bind',
      '/etc',
      '/etc',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
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
      '/home/u/project/.faheem',
      '--remount-ro',
      '/',
      '--unshare-pid',
      '--unshare-ipc',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      '--unshare-net',
      '--chdir',
      '/home/u/project/src',
    ]);
    // The home that is the workspace is not hidden from it.
    const own = bwrapArgs(HOST, { workspace: '/root', hide: ['/root'] });
    assert.deepEqual(own.slice(6, 13), ['--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind']);
    assert.equal(own.filter((a) => a === '--remount-ro').length, 1, 'only the root');
    // A hidden folder inside a shown system directory (the pool's workspaces under /srv, shown by the operator) is covered before the workspace in it.
    const pooled = bwrapArgs(NONE, {
      workspace: '/srv/pool/conv-a',
      hide: ['/srv/pool'],
      view: { entries: [{ path: '/srv' }], masked: [] },
    });
    assert.ok(pooled.indexOf('/srv/pool') < pooled.indexOf('/srv/pool/conv-a'), pooled.join(' '));
    assert.equal(pooled[pooled.indexOf('/srv/pool') - 1], '--tmpfs');
  });

  test("the host's view: the system directories as they are here, the operator's additions, /etc's secrets", () => {
    const view = filesystemView(['/opt/not-here-' + process.pid, ROOT]);
    const paths = view.entries.map((e) => e.path);
    assert.ok(paths.includes('/usr') && paths.includes('/etc') && paths.includes(ROOT), paths.join(' '));
    assert.ok(!paths.some((p) => p.startsWith('/opt/not-here')), 'a missing one is left out');
    for (const e of view.entries) if (e.link) assert.equal(readlinkSync(e.path), e.link);
    assert.ok(view.masked.every((m) => m.path.startsWith('/etc/')));
    if (existsSync('/etc/shadow')) assert.ok(view.masked.some((m) => m.path === '/etc/shadow' && m.kind === 'file'));
    assert.deepEqual(parseSandboxRead(' /opt/go , /srv/data/ ,'), ['/opt/go', '/srv/data']);
    assert.throws(() => parseSandboxRead('opt/go'), /absolute/);
  });

  test('the command runs through env: the sandbox ignores C-c, the command gets it; no sandbox, no change', () => {
    assert.deepEqual(sandboxedCommand(undefined, { workspace: '/w' }, 'bash', ['-c', 'x'], { A: '1' }), {
      file: 'bash',
      args: ['-c', 'x'],
      env: { A: '1' },
    });
    const { file, args } = sandboxedCommand(HOST, { workspace: '/w' }, 'bash', ['-c', 'x']);
    assert.match(file, /^\/.*\/env$/, "the worker's env, by its absolute path");
    assert.equal(args[0], '--ignore-signal=INT');
    assert.match(args[1]!, /^\/.*\/bwrap$/);
    const rest = args.slice(args.indexOf('--'));
    assert.match(rest[1]!, /^\/.*\/env$/);
    assert.deepEqual([rest[0], ...rest.slice(2)], ['--', '--default-signal=INT', '--', 'bash', '-c', 'x']);
  });

  test("a command's exported PATH or LD_PRELOAD never chooses or changes the sandbox's own programs; the command still gets them", () => {
    const env = { PATH: '/ws/bin:/usr/bin', LD_PRELOAD: '/ws/evil.so', BASH_ENV: '/ws/rc', 'BASH_FUNC_mktemp%%': '() { :; }', KEEP: 'k' };
    for (const sandbox of [HOST, INTERNET]) {
      const run = sandboxedCommand(sandbox, { workspace: '/ws' }, 'bash', ['-c', 'x'], env);
      assert.ok(run.file.startsWith('/') && !run.file.startsWith('/ws'), run.file);
      assert.deepEqual(run.env, { PATH: '/ws/bin:/usr/bin', KEEP: 'k' });
      const setenv = run.args.flatMap((a, i) => (a === '--setenv' ? [run.args.slice(i + 1, i + 3).join('=')] : []));
      assert.deepEqual(setenv.sort(), ['BASH_ENV=/ws/rc', 'BASH_FUNC_mktemp%%=() { :; }', 'LD_PRELOAD=/ws/evil.so']);
      for (const a of run.args) assert.ok(!a.startsWith('/ws/bin'), `no program from the command's PATH: ${a}`);
    }
    assert.ok(isHostUnsafeVariable('LD_LIBRARY_PATH') && !isHostUnsafeVariable('PATH') && !isHostUnsafeVariable('LANG'));
  });

  test("internet: bash starts slirp4netns for the namespace bwrap made, refusing private and this host's networks; resolv.conf names its DNS", () => {
    const run = sandboxedCommand(INTERNET, { workspace: '/w', resolvConf: '/h/resolv.conf' }, 'bash', ['-c', 'x']);
    assert.match(run.file, /^\/.*\/bash$/);
    assert.deepEqual(run.args.slice(0, 3), ['--norc', '--noprofile', '-c']);
    assert.match(run.args[3]!, /slirp4netns|\$slirp/);
    const [, , , , name, , , slirp, nsenter, ip, blocked, report, bwrap, ...rest] = run.args;
    assert.equal(name, 'faheem-sandbox');
    assert.equal(report, '', 'a command does not print the pid of its sandbox');
    assert.match(slirp!, /slirp4netns$/);
    assert.match(nsenter!, /nsenter$/);
    assert.match(ip!, /ip$/);
    assert.ok(blocked!.split(' ').includes('10.0.0.0/8') && blocked!.split(' ').includes('169.254.0.0/16'));
    assert.match(bwrap!, /bwrap$/);
    assert.deepEqual(rest.slice(0, 4), ['--info-fd', '3', '--block-fd', '4']);
    assert.ok(rest.includes('--unshare-net'));
    const at = rest.indexOf('/h/resolv.conf');
    assert.equal(rest[at - 1], '--ro-bind');
    assert.ok(!bwrapArgs(HOST, { workspace: '/w', resolvConf: '/h/resolv.conf' }).includes('/h/resolv.conf'));
  });

  test('internet in a kept network: nsenter enters the holder (and its user namespace if it has one), bwrap makes no network of its own', () => {
    const run = sandboxedCommand(
      INTERNET,
      { workspace: '/w', resolvConf: '/h/resolv.conf', keptNetwork: { pid: 4242, startTime: '777', userns: false } },
      'bash',
      ['-c', 'x'],
    );
    assert.match(run.file, /nsenter$/);
    assert.deepEqual(run.args.slice(0, 4), ['--target', '4242', '--net', '--']);
    // The check between nsenter and bwrap: the namespace entered is the holder's, the holder the one that started then.
    assert.match(run.args[4]!, /\/sh$/);
    assert.deepEqual(run.args.slice(5, 9), ['-c', KEPT_NETWORK_CHECK, 'faheem-net', '4242']);
    assert.equal(run.args[9], '777');
    assert.match(run.args[10]!, /env$/);
    assert.equal(run.args[11], '--ignore-signal=INT');
    assert.match(run.args[12]!, /bwrap$/);
    assert.ok(!run.args.includes('--unshare-net'));
    assert.equal(run.args[run.args.indexOf('/h/resolv.conf') - 1], '--ro-bind');
    const owned = sandboxedCommand(
      INTERNET,
      { workspace: '/w', resolvConf: '/h/resolv.conf', keptNetwork: { pid: 4242, startTime: '777', userns: true } },
      'bash',
      ['-c', 'x'],
    );
    assert.deepEqual(owned.args.slice(0, 6), ['--target', '4242', '--net', '--user', '--preserve-credentials', '--']);
    // Other networks never enter one.
    const none = sandboxedCommand(
      onHost(NONE, process.env),
      { workspace: '/w', keptNetwork: { pid: 4242, startTime: '777', userns: false } },
      'bash',
      ['-c', 'x'],
    );
    assert.ok(none.args.includes('--unshare-net') && !none.args.includes('4242'));
  });

  test('the kept network check runs the program only for the process that started then, in its network, whatever its name', async () => {
    // A process named like stat's fields (its name holds ") " and numbers): the check reads past its name.
    const dir = await tempDir('faheem-kept-check-');
    const named = path.join(dir, 'x) 1 2 3');
    await execa('cp', [(await execa('sh', ['-c', 'command -v sleep'])).stdout.trim(), named]);
    const holder = execa(named, ['30']);
    try {
      await waitFor('the named process', () => existsSync(`/proc/${holder.pid}/stat`), 5_000);
      assert.match(readFileSync(`/proc/${holder.pid}/stat`, 'utf8'), /\(x\) 1 2 3\)/);
      const startTime = procStatFields(holder.pid!)![19]!;
      const check = (start: string) =>
        execa('sh', ['-c', KEPT_NETWORK_CHECK, 'faheem-net', String(holder.pid), start, 'echo', 'ran'], { reject: false, all: true });
      const same = await check(startTime);
      assert.equal(same.exitCode, 0, same.all);
      assert.equal(same.stdout, 'ran');
      // Another process now with that pid (a different start time): nothing runs.
      const other = await check(String(Number(startTime) + 1));
      assert.equal(other.exitCode, 125);
      assert.match(other.all ?? '', /the kept network is gone; the command was not started/);
      assert.ok(!other.stdout.includes('ran'));
    } finally {
      holder.kill('SIGKILL');
      await holder.catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the sandbox's own programs: found once on the worker's PATH; its resolv.conf under the worker's FAHEEM_HOME", async () => {
    const dir = await tempDir('faheem-sbx-host-');
    try {
      const bin = path.join(dir, 'bin');
      await mkdir(bin);
      for (const p of ['env', 'bash']) {
        const found = (await execa('sh', ['-c', `command -v ${p}`])).stdout.trim();
        await execa('ln', ['-s', found, path.join(bin, p)]);
      }
      const sandbox = onHost({ kind: 'bwrap', network: 'internet' }, { PATH: bin, FAHEEM_HOME: path.join(dir, 'home') });
      const run = sandboxedCommand(sandbox, { workspace: '/w' }, 'bash', ['-c', 'x'], { PATH: '/ws/bin' });
      assert.equal(run.file, path.join(bin, 'bash'));
      const resolv = path.join(dir, 'home', 'sandbox', 'resolv.conf');
      assert.equal(await readFile(resolv, 'utf8'), 'nameserver 10.0.2.3\n');
      assert.equal(run.args[run.args.indexOf(resolv) - 1], '--ro-bind');
      await rm(path.join(bin, 'bash'));
      assert.equal(sandboxedCommand(sandbox, { workspace: '/w' }, 'bash', []).file, path.join(bin, 'bash'), 'found once');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("blocked networks: the private, shared, link-local and reserved ranges, and each of this host's addresses and networks", () => {
    const nets = blockedNetworks({
      lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '', internal: true, cidr: '127.0.0.1/8' }],
      eth0: [
        { address: '203.0.113.7', netmask: '255.255.255.0', family: 'IPv4', mac: '', internal: false, cidr: '203.0.113.7/24' },
        { address: 'fe80::1', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '', internal: false, cidr: 'fe80::1/64', scopeid: 2 },
      ],
    });
    for (const n of [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '100.64.0.0/10',
      '169.254.0.0/16',
      '203.0.113.7/32',
      '203.0.113.0/24',
    ]) {
      assert.ok(nets.includes(n), n);
    }
    assert.ok(!nets.some((n) => n.startsWith('127.') || n.includes(':')), nets.join(' '));
  });

  test('settings: bwrap by default with the internet network; none is the opt-out; unknown values are refused', () => {
    assert.deepEqual(parseSandbox(undefined, undefined), { kind: 'default', network: 'internet', networkChosen: false });
    assert.deepEqual(parseSandbox('none', 'host'), { kind: 'none', network: 'host', networkChosen: true });
    assert.deepEqual(parseSandbox('bwrap', undefined), { kind: 'bwrap', network: 'internet', networkChosen: false });
    assert.deepEqual(parseSandbox('BWRAP', 'none'), { kind: 'bwrap', network: 'none', networkChosen: true });
    assert.deepEqual(parseSandbox(undefined, 'host'), { kind: 'default', network: 'host', networkChosen: true });
    assert.throws(() => parseSandbox('none', 'none'), /needs a sandbox: drop --sandbox none/);
    assert.throws(() => parseSandbox('docker', undefined), /"docker" is not known; use bwrap/);
    assert.throws(() => parseSandbox('bwrap', 'lan'), /"lan" is not known; use internet, none, host/);
    assert.equal(
      describeSandbox(NONE),
      'commands run under bubblewrap (workspace writable, system folders read-only, /tmp private, nothing else of this host; network none)',
    );
    assert.match(describeSandbox(INTERNET), /network internet: public addresses only, never this host or private ones/);
    assert.match(describeSandbox(undefined), /unsandboxed, with this user's rights \(--sandbox none\)/);
  });

  test('the default falls back, and says so: no bwrap, no sandbox; an explicit bwrap or network that does not work fails', async () => {
    const noBwrap = { ...process.env, PATH: '/nonexistent' };
    const fallback = await resolveSandbox(parseSandbox(undefined, undefined), noBwrap);
    assert.equal(fallback.sandbox, undefined);
    assert.match(fallback.warning!, /commands run UNSANDBOXED.*bubblewrap is not installed/);
    await assert.rejects(resolveSandbox(parseSandbox('bwrap', undefined), noBwrap), /bubblewrap is not installed \(bwrap is not on PATH\)/);
    assert.deepEqual(await resolveSandbox(parseSandbox('none', undefined), noBwrap), { sandbox: undefined });
    // bwrap here, but none of the internet network's programs: no network rather than the host's.
    // Outside /tmp: the sandbox's private /tmp would hide it from the trial command.
    const bin = await mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : ROOT, 'faheem-sbx-bin-'));
    try {
      for (const p of ['bwrap', 'env', 'sh', 'touch', 'rm']) {
        const found = (await execa('sh', ['-c', `command -v ${p}`])).stdout.trim();
        await execa('ln', ['-s', found, path.join(bin, p)]);
      }
      const onlyBwrap = { ...process.env, PATH: bin };
      const net = await resolveSandbox(parseSandbox(undefined, undefined), onlyBwrap);
      assert.deepEqual({ kind: net.sandbox?.kind, network: net.sandbox?.network }, NONE);
      assert.equal(
        sandboxedCommand(net.sandbox, { workspace: '/w' }, 'true', []).file,
        path.join(bin, 'env'),
        "its programs: the worker's PATH's",
      );
      assert.match(net.warning!, /commands get no network: .*needs slirp4netns, nsenter, ip/);
      await assert.rejects(resolveSandbox(parseSandbox(undefined, 'internet'), onlyBwrap), /needs slirp4netns, nsenter, ip/);
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
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
      const { file, args, env } = sandboxedCommand(HOST, { workspace: ws, hide: [home, path.join(ws, '.faheem')] }, 'sh', ['-c', script], {
        PATH: process.env.PATH!,
      });
      const r = await execa(file, args, { env, extendEnv: false, all: true, reject: false });
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

for (const sandbox of [HOST, INTERNET])
  describe(`the terminal under bubblewrap, network ${sandbox.network} (in this process)`, () => {
    const processes = async (start: string) => (await execa('pgrep', ['-f', `^${start}`], { reject: false })).stdout.trim();
    const ctx = async (session: string) => ({
      workspace: await tempDir('faheem-sbx-ws-'),
      sandbox,
      sandboxHide: hiddenDirs(process.env),
      baseEnv: commandBaseEnv(process.env),
      session,
      softTimeoutMs: 1000,
    });

    test('C-c reaches the command, not the sandbox: it ends with 130 and its shell state is kept; the background job goes with it', async () => {
      const c = await ctx(`cc-${sandbox.network}-${process.pid}`);
      const marker = `3013${sandbox.network === 'host' ? 1 : 2}.${process.pid}`;
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
      // Under coverage (FAHEEM_TEST_COVERAGE=1) Node itself adds NODE_V8_COVERAGE to every child's environment.
      const coverage = process.env.NODE_V8_COVERAGE ? { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE } : {};
      assert.deepEqual(stopped.terminal.env, { KEPT: 'yes', ...coverage }, 'the EXIT trap still wrote the state');
      await waitFor('the background job to end', async () => (await processes(`sleep ${marker}`)) === '', 5_000);
    });

    if (sandbox.network === 'internet')
      test("a conversation's commands share its kept network, another's is its own; one whose holder died is made again", async () => {
        const netOf = async (session: string) => {
          const r = await runTerminal(
            { command: 'readlink /proc/self/ns/net; ip -o route get 1.1.1.1' },
            { cwd: '/', env: {} },
            await ctx(session),
          );
          assert.equal(r.exitCode, 0, r.content);
          assert.match(r.content, /via 10\.0\.2\.2 dev tap0/, 'out through slirp4netns');
          return r.content.split('\n')[0]!;
        };
        const a = `kept-a-${process.pid}`;
        const first = await netOf(a);
        assert.equal(await netOf(a), first);
        assert.notEqual(await netOf(`kept-b-${process.pid}`), first);
        // A tool's ctx.exec and a hook (execInWorkspace with the conversation's lease) run in it too.
        const lease = await leaseNetwork(sandbox, a);
        assert.ok(lease, 'a lease on the kept network');
        try {
          const exec = await execInWorkspace('readlink', ['/proc/self/ns/net'], {
            workspace: (await ctx(a)).workspace,
            sandbox,
            baseEnv: commandBaseEnv(process.env),
            hide: [],
            keptNetwork: lease.network,
          });
          assert.equal(exec.stdout.trim(), first, exec.stderr);
        } finally {
          lease.release();
        }
        assert.notEqual(first, readlinkSync('/proc/self/ns/net'));
        // The holder is the sleep in that namespace: kill it, and the next command gets a new network.
        const holder = holderIn(first);
        assert.ok(holder, 'a holder sleeps in the kept network');
        process.kill(Number(holder), 'SIGKILL');
        await waitFor('the old network to be gone', () => !readdirSync('/proc').some((p) => /^\d+$/.test(p) && nsIs(p, first)), 5_000);
        // (A new namespace may get the old one's inode number: the holder tells them apart.)
        const again = await netOf(a);
        const newHolder = holderIn(again);
        assert.ok(newHolder && newHolder !== holder, 'a new holder made the network again');
      });

    test('reset stops the running command and everything it started', async () => {
      const c = await ctx(`reset-${sandbox.network}-${process.pid}`);
      const marker = `3014${sandbox.network === 'host' ? 1 : 2}.${process.pid}`;
      const first = await runTerminal({ command: `(setsid sleep ${marker} &); sleep ${marker}` }, { cwd: c.workspace, env: {} }, c);
      assert.equal(first.exitCode, -1, first.content);
      await waitFor('both sleeps', async () => (await processes(`sleep ${marker}`)).split('\n').length === 2, 5_000);
      const reset = await runTerminal({ command: '', reset: true }, first.terminal, c);
      assert.match(reset.content, /the running command was stopped/);
      await waitFor('every sleep to end, even the one in its own session', async () => (await processes(`sleep ${marker}`)) === '', 5_000);
    });
  });

/** The pid of the sleep (a kept network's holder) in the network namespace `ns`. */
function holderIn(ns: string): string | undefined {
  return readdirSync('/proc').find((p) => {
    try {
      return /^\d+$/.test(p) && readlinkSync(`/proc/${p}/ns/net`) === ns && readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'sleep';
    } catch {
      return false;
    }
  });
}

/** Whether process `pid` is in the namespace `ns` (false once it is gone). */
function nsIs(pid: string, ns: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`) === ns;
  } catch {
    return false;
  }
}
