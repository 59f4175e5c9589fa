// Sandboxed commands: with `faheem worker --sandbox bwrap` every terminal command (and every process a
// tool starts with ctx.exec) runs under bubblewrap: the filesystem read-only except the workspace and
// a private /tmp, the worker's home and FAHEEM_HOME hidden, its own PID namespace (killing the sandbox
// ends every process in it), no capabilities, and optionally no network.
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SandboxError, ToolInterruptedError } from '../errors.js';
import { faheemHome } from '../home.js';
import type { ExecOptions, ExecResult } from './define.js';

export const SANDBOX_KINDS = ['bwrap'] as const;
export const SANDBOX_NETWORKS = ['host', 'none'] as const;
export type SandboxNetwork = (typeof SANDBOX_NETWORKS)[number];

/** How a worker confines the commands it runs (absent: unsandboxed, with the worker user's rights). */
export interface SandboxOptions {
  kind: 'bwrap';
  /** `host`: the worker's network; `none`: only a loopback of its own. */
  network: SandboxNetwork;
}

export { SandboxError };

/**
 * The sandbox from a kind and a network mode as a user writes them (flags or environment); undefined
 * for none. `network` alone is refused: it means nothing without a sandbox.
 */
export function parseSandbox(kind: string | undefined, network: string | undefined): SandboxOptions | undefined {
  const k = kind?.trim().toLowerCase() ?? '';
  const n = network?.trim().toLowerCase() ?? '';
  if (n && !(SANDBOX_NETWORKS as readonly string[]).includes(n)) {
    throw new SandboxError(`the sandbox network "${network}" is not known; use ${SANDBOX_NETWORKS.join(' or ')}`);
  }
  if (k === '' || k === 'none' || k === 'off') {
    if (n === 'none') throw new SandboxError('a sandbox network of "none" needs a sandbox: add --sandbox bwrap (or FAHEEM_SANDBOX=bwrap)');
    return undefined;
  }
  if (!(SANDBOX_KINDS as readonly string[]).includes(k)) {
    throw new SandboxError(`the sandbox "${kind}" is not known; use ${SANDBOX_KINDS.join(', ')} (or none)`);
  }
  return { kind: 'bwrap', network: (n || 'host') as SandboxNetwork };
}

/** The sandbox a worker's environment asks for: FAHEEM_SANDBOX=bwrap, FAHEEM_SANDBOX_NETWORK=none|host. */
export function sandboxFromEnv(env: NodeJS.ProcessEnv = process.env): SandboxOptions | undefined {
  return parseSandbox(env.FAHEEM_SANDBOX, env.FAHEEM_SANDBOX_NETWORK);
}

/** One line for the worker's start: what its commands can do. */
export function describeSandbox(sandbox: SandboxOptions | undefined): string {
  return sandbox
    ? `commands run under bubblewrap (workspace writable, /tmp private, network ${sandbox.network})`
    : "commands run unsandboxed, with this user's rights (use --sandbox bwrap to confine them)";
}

/** What one sandboxed process sees besides the read-only filesystem. */
export interface BwrapPlan {
  /** Absolute path: writable inside, and the starting directory. */
  workspace: string;
  /** Where the process starts (default: the workspace). */
  cwd?: string;
  /**
   * Existing directories to hide (the worker's home, FAHEEM_HOME): empty and read-only inside. One
   * that holds the workspace still shows the workspace; one inside the workspace is hidden there too.
   */
  hide?: readonly string[];
  /** More paths to show at the same place, after the hiding (e.g. the terminal's state directory). */
  binds?: readonly { path: string; readOnly?: boolean }[];
}

const isWithin = (child: string, parent: string) => child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

/**
 * bubblewrap's options for a plan, up to the command (append `--`, the program and its arguments).
 * Pure: the paths are taken as they are given (absolute, existing).
 */
export function bwrapArgs(sandbox: SandboxOptions, plan: BwrapPlan): string[] {
  const ws = path.resolve(plan.workspace);
  // /tmp is private and writable; the hidden directories are empty and read-only.
  const tmp = '/tmp';
  const hidden = [...new Set((plan.hide ?? []).map((d) => path.resolve(d)))].filter((d) => d !== ws && d !== '/');
  const covers = [tmp, ...hidden].filter((d) => d !== ws);
  // A directory inside another covered one is covered already, unless the workspace (shown again
  // on top of the cover) holds it.
  const needed = covers.filter((d) => isWithin(d, ws) || !covers.some((other) => other !== d && isWithin(d, other)));
  const inside = needed.filter((d) => isWithin(d, ws));
  const outside = needed.filter((d) => !inside.includes(d));

  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const d of outside) args.push('--tmpfs', d);
  args.push('--bind', ws, ws);
  for (const d of inside) args.push('--tmpfs', d);
  for (const b of plan.binds ?? []) {
    const p = path.resolve(b.path);
    args.push(b.readOnly ? '--ro-bind' : '--bind', p, p);
  }
  // Hiding /run hides the host's sockets (Docker, D-Bus); name resolution may live there too.
  const resolv = realTarget('/etc/resolv.conf');
  if (resolv && needed.some((d) => isWithin(resolv, d))) args.push('--ro-bind', resolv, resolv);
  // Not recursive: the workspace and the binds inside a hidden directory stay as they are.
  for (const d of needed) if (d !== tmp) args.push('--remount-ro', d);
  args.push('--unshare-pid', '--die-with-parent', '--cap-drop', 'ALL');
  if (sandbox.network === 'none') args.push('--unshare-net');
  args.push('--chdir', plan.cwd ? path.resolve(ws, plan.cwd) : ws);
  return args;
}

/**
 * The program and arguments that run `file args` under the sandbox, or unchanged without one. The
 * outer bwrap ignores SIGINT (so C-c reaches the command, not the sandbox) and the command gets the
 * default action back; killing bwrap (SIGTERM, SIGKILL) ends every process in the sandbox.
 */
export function sandboxedCommand(
  sandbox: SandboxOptions | undefined,
  plan: BwrapPlan,
  file: string,
  args: readonly string[],
): { file: string; args: string[] } {
  if (!sandbox) return { file, args: [...args] };
  return {
    file: 'env',
    args: ['--ignore-signal=INT', 'bwrap', ...bwrapArgs(sandbox, plan), '--', 'env', '--default-signal=INT', '--', file, ...args],
  };
}

/** The directories a sandbox hides on this worker: its user's home and FAHEEM_HOME, when they exist. */
export function hiddenDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  // /run and /var/run hold the host's Unix sockets (Docker, D-Bus): a read-only mount does not stop connect().
  const sockets = ['/run', '/var/run'].filter((d) => {
    try {
      return lstatSync(d).isDirectory();
    } catch {
      return false;
    }
  });
  const candidates = [env.HOME, os.homedir(), faheemHome(env), env.FAHEEM_PAYLOAD_DIR, ...sockets];
  const out: string[] = [];
  for (const c of candidates) {
    if (!c) continue;
    const d = path.resolve(c);
    if (out.includes(d)) continue;
    try {
      if (statSync(d).isDirectory()) out.push(d);
    } catch {
      // not there: nothing to hide
    }
  }
  return out;
}

/**
 * Checks that the sandbox works here, the way commands will use it: bwrap is installed and a trial
 * command runs inside. Throws a SandboxError that says what to do; returns bwrap's version.
 */
export async function checkSandbox(sandbox: SandboxOptions, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { execa } = await import('execa'); // loaded when used: most CLI commands never run a program
  const version = await execa('bwrap', ['--version'], { env, reject: false, timeout: 10_000 });
  if (version.exitCode !== 0) {
    const missing = (version as { code?: string }).code === 'ENOENT';
    throw new SandboxError(
      missing
        ? 'the sandbox bwrap was asked for, but bubblewrap is not installed (bwrap is not on PATH): install it (`apt-get install bubblewrap`) or start the worker without --sandbox'
        : `the sandbox bwrap was asked for, but \`bwrap --version\` failed: ${(version.stderr || version.stdout || version.message || '').trim()}`,
    );
  }
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'faheem-sandbox-check-'));
  try {
    const script =
      'touch ./written || exit 3; ' +
      'if touch /faheem-sandbox-check 2>/dev/null; then rm -f /faheem-sandbox-check; echo "/ is writable inside the sandbox"; exit 4; fi';
    const { file, args } = sandboxedCommand(sandbox, { workspace, hide: hiddenDirs(env) }, 'sh', ['-c', script]);
    const trial = await execa(file, args, { env, reject: false, timeout: 20_000, all: true });
    if (trial.exitCode !== 0) {
      throw new SandboxError(
        `the sandbox bwrap was asked for, but bubblewrap cannot make its sandbox here: ${(trial.all || trial.message || '').trim() || `exit code ${trial.exitCode}`}. ` +
          'It needs user and PID namespaces (run as root, or allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1; ' +
          'in a container, allow them or run it privileged), and GNU env (coreutils 8.31 or later)',
      );
    }
    try {
      statSync(path.join(workspace, 'written'));
    } catch {
      throw new SandboxError('the sandbox bwrap was asked for, but a trial command could not write in its workspace');
    }
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
  return version.stdout.trim();
}

const MAX_EXEC_BUFFER = 20_000_000;

/**
 * Runs a program in a workspace, under the sandbox when there is one, without a shell; stopped
 * (with everything it started) when `signal` aborts, which rejects with the output so far as the
 * error's `partialOutput`.
 */
export async function execInWorkspace(
  command: string,
  args: readonly string[],
  options: ExecOptions & {
    workspace: string;
    sandbox: SandboxOptions | undefined;
    baseEnv: Record<string, string>;
    hide: readonly string[];
    signal?: AbortSignal;
  },
): Promise<ExecResult> {
  if (options.signal?.aborted) throw new ToolInterruptedError('', `${command} was not started: the call was interrupted`);
  const { execa } = await import('execa');
  const cwd = path.resolve(options.workspace, options.cwd ?? '.');
  const run = sandboxedCommand(options.sandbox, { workspace: options.workspace, cwd, hide: options.hide }, command, args);
  const child = execa(run.file, run.args, {
    cwd,
    env: { ...options.baseEnv, ...options.env },
    extendEnv: false,
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
    detached: true, // its own process group: stopping it stops what it started
    reject: false,
    stripFinalNewline: false,
    maxBuffer: MAX_EXEC_BUFFER,
  });
  let stopped: 'timeout' | 'abort' | undefined;
  const stop = (why: 'timeout' | 'abort') => {
    if (stopped) return;
    stopped = why;
    void killGroup(child.pid);
  };
  const onAbort = () => stop('abort');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = options.timeoutMs !== undefined ? setTimeout(() => stop('timeout'), options.timeoutMs) : undefined;
  try {
    const r = await child;
    const stdout = String(r.stdout ?? '');
    const stderr = String(r.stderr ?? '');
    if (stopped === 'abort') throw new ToolInterruptedError(stdout + stderr, `${command} was interrupted`);
    if (stopped === 'timeout') return { stdout, stderr, exitCode: 124, timedOut: true };
    if ((r as { code?: string }).code === 'ENOENT') return { stdout, stderr: `${command}: not found\n`, exitCode: 127, timedOut: false };
    const code = r.exitCode ?? (r.signal ? 128 + (os.constants.signals[r.signal as NodeJS.Signals] ?? 0) : 1);
    return { stdout, stderr, exitCode: code, timedOut: false };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Interrupt, then terminate, then kill a whole process group, with short graces between. */
export async function killGroup(pid: number | undefined): Promise<void> {
  if (!pid) return;
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const [sig, graceMs] of [
    ['SIGINT', 300],
    ['SIGTERM', 1000],
    ['SIGKILL', 0],
  ] as const) {
    try {
      process.kill(-pid, sig);
    } catch {
      return;
    }
    const until = Date.now() + graceMs;
    while (Date.now() < until && alive()) await new Promise((r) => setTimeout(r, 25));
    if (!alive()) return;
  }
}

function realTarget(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}
