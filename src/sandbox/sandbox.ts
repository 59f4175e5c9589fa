// Sandboxed commands: where bubblewrap works, every terminal command (and every process a tool
// starts with ctx.exec, every hook command and MCP stdio server) runs under it: an allowlist of the
// host's filesystem (the system folders read-only, /etc without its secrets, the workspace writable,
// a private /tmp, nothing else: see FilesystemView), its own PID namespace (killing the sandbox ends
// every process in it; no other process's /proc/*/environ) and IPC namespace, no capabilities, and a
// network of its own (see SandboxNetwork).
import {
  accessSync,
  constants as fsConstants,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SandboxError, ToolInterruptedError } from '../core/errors.js';
import { faheemHome } from '../home.js';
import type { ExecOptions, ExecResult } from '../tools/define.js';
import { fileURLToPath } from 'node:url';
import type { ChildEnv } from '../environment.js';

export const SANDBOX_KINDS = ['bwrap'] as const;
export const SANDBOX_NETWORKS = ['internet', 'none', 'host'] as const;
/**
 * `internet`: a network namespace of its own behind slirp4netns (user-mode NAT): public addresses
 * only; the worker's loopback, the host's own addresses, private (RFC 1918, CGNAT) and link-local
 * ranges are unreachable. `none`: only a loopback of its own. `host`: the worker's network, its
 * loopback services (Temporal, metrics, codec server, console) included: unsafe, opt-in.
 */
export type SandboxNetwork = (typeof SANDBOX_NETWORKS)[number];

/** How a worker confines the commands it runs (absent: unsandboxed, with the worker user's rights). */
export interface SandboxOptions {
  kind: 'bwrap';
  /** See SandboxNetwork. */
  network: SandboxNetwork;
}

/**
 * The host side of a worker's sandbox: the programs it runs outside the sandbox (env, bwrap, bash,
 * slirp4netns, nsenter, ip), each found once on the worker's PATH, never on a command's (a
 * conversation's `export PATH=./bin:$PATH` must not choose what runs outside the sandbox), and the
 * resolv.conf the internet network shows, under the worker's FAHEEM_HOME.
 */
export class SandboxHost {
  private readonly programs = new Map<string, string>();
  private readonly searchPath: string | undefined;
  private readonly home: string;
  private readonly readable: readonly string[];
  private systemView: FilesystemView | undefined;
  /** The worker user's home: an empty read-only folder inside, so that `cd ~` works. */
  readonly userHome: string;

  /** `env`: the worker's environment (its PATH, FAHEEM_HOME and FAHEEM_SANDBOX_READ). */
  constructor(env: ChildEnv) {
    this.searchPath = env.PATH;
    this.home = faheemHome(env);
    this.readable = parseSandboxRead(env.FAHEEM_SANDBOX_READ);
    this.userHome = path.resolve(env.HOME || os.homedir());
  }

  /** What commands see of the host besides their workspace (see {@link filesystemView}); read once. */
  view(): FilesystemView {
    this.systemView ??= filesystemView(this.readable);
    return this.systemView;
  }

  /** A program's absolute path on the worker's PATH (its bare name when it is not there: starting it then fails with ENOENT, which says so). */
  program(name: string): string {
    let file = this.programs.get(name);
    if (!file) {
      file = findProgram(name, { PATH: this.searchPath });
      if (file) this.programs.set(name, file);
    }
    return file ?? name;
  }

  /** The PATH the sandbox's own host-side programs use: the worker's directories that hold them. */
  programPath(): string {
    const dirs = ['env', 'bash', 'bwrap', 'mktemp', 'slirp4netns', 'nsenter', 'ip']
      .map((p) => path.dirname(this.program(p)))
      .filter((d) => d !== '.');
    return [...new Set([...dirs, '/usr/sbin', '/usr/bin', '/sbin', '/bin'])].join(':');
  }

  /** A resolv.conf naming slirp4netns's DNS forwarder (10.0.2.3), kept under FAHEEM_HOME (made again if removed). */
  resolvConf(): string {
    const file = path.join(this.home, 'sandbox', 'resolv.conf');
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // not made yet
    }
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'nameserver 10.0.2.3\n', { mode: 0o644 });
    return file;
  }
}

/** A sandbox on this worker: what it is, and the host it runs from (see {@link onHost}). */
export interface Sandbox extends SandboxOptions {
  readonly host: SandboxHost;
}

/** The sandbox `options` on the worker whose environment is `env` (its PATH finds the sandbox's programs). */
export function onHost(options: SandboxOptions, env: ChildEnv): Sandbox {
  return { kind: options.kind, network: options.network, host: new SandboxHost(env) };
}

/**
 * What a worker was asked for (flags or environment): `default` is bwrap where it works, unsandboxed
 * (said at start) where it does not; `bwrap` must work; `none` is the opt-out. `networkChosen`: the
 * network was named, so it must work too (the default `internet` falls back to `none`).
 */
export interface SandboxRequest {
  kind: 'default' | 'bwrap' | 'none';
  network: SandboxNetwork;
  networkChosen: boolean;
}

export { SandboxError };

/**
 * What a user asks for, from a kind and a network mode as written (flags or environment). Unknown
 * values are refused, and so is `--sandbox none` with `--sandbox-network none` (no sandbox cannot
 * cut the network).
 */
export function parseSandbox(kind: string | undefined, network: string | undefined): SandboxRequest {
  const k = kind?.trim().toLowerCase() ?? '';
  const n = network?.trim().toLowerCase() ?? '';
  if (n && !(SANDBOX_NETWORKS as readonly string[]).includes(n)) {
    throw new SandboxError(`the sandbox network "${network}" is not known; use ${SANDBOX_NETWORKS.join(', ')}`);
  }
  const net = { network: (n || 'internet') as SandboxNetwork, networkChosen: n !== '' };
  if (k === '' || k === 'default' || k === 'auto') return { kind: 'default', ...net };
  if (k === 'none' || k === 'off') {
    if (n === 'none') throw new SandboxError('a sandbox network of "none" needs a sandbox: drop --sandbox none (bwrap is the default)');
    return { kind: 'none', ...net };
  }
  if (!(SANDBOX_KINDS as readonly string[]).includes(k)) {
    throw new SandboxError(`the sandbox "${kind}" is not known; use ${SANDBOX_KINDS.join(', ')} (or none)`);
  }
  return { kind: 'bwrap', ...net };
}

/** The sandbox a worker's environment asks for: FAHEEM_SANDBOX=bwrap|none, FAHEEM_SANDBOX_NETWORK=internet|none|host. */
export function sandboxFromEnv(env: ChildEnv): SandboxRequest {
  return parseSandbox(env.FAHEEM_SANDBOX, env.FAHEEM_SANDBOX_NETWORK);
}

/** One line for the worker's start: what its commands can do. */
export function describeSandbox(sandbox: SandboxOptions | undefined): string {
  if (!sandbox) return "commands run unsandboxed, with this user's rights (--sandbox none)";
  const net =
    sandbox.network === 'internet'
      ? 'network internet: public addresses only, never this host or private ones'
      : sandbox.network === 'host'
        ? "network host: this host's network, its loopback services included (unsafe)"
        : 'network none';
  return `commands run under bubblewrap (workspace writable, system folders read-only, /tmp private, nothing else of this host; ${net})`;
}

/** What a request resolved to on this host: the sandbox (or none) and, when it fell back, why. */
export interface ResolvedSandbox {
  sandbox: Sandbox | undefined;
  /** Set when the default could not be had: one line saying what commands get instead, and why. */
  warning?: string;
}

/**
 * Resolves a request on this host: an explicit `bwrap` (or a named network) that does not work
 * throws a SandboxError saying what to do; the default falls back, never silently and never to a
 * more open network: bwrap without a working `internet` network gets `none`, no bwrap gets no sandbox.
 * The probe is run once a process for each setting (see checkSandbox). The sandbox runs its own
 * programs from `env`'s PATH (see SandboxHost).
 */
export async function resolveSandbox(request: SandboxRequest, env: ChildEnv): Promise<ResolvedSandbox> {
  if (request.kind === 'none') return { sandbox: undefined };
  const wanted: SandboxOptions = { kind: 'bwrap', network: request.network };
  try {
    await checkSandbox(wanted, env);
    return { sandbox: onHost(wanted, env) };
  } catch (err) {
    if (!(err instanceof SandboxError)) throw err;
    const part = (err as SandboxError & { part?: string }).part;
    if (part === 'network' && !request.networkChosen) {
      const fallback: SandboxOptions = { kind: 'bwrap', network: 'none' };
      await checkSandbox(fallback, env); // bwrap itself worked: this is expected to
      return {
        sandbox: onHost(fallback, env),
        warning: `commands get no network: the sandbox's internet network cannot start here (${err.message}); install slirp4netns, nsenter (util-linux) and ip (iproute2), or choose --sandbox-network none|host`,
      };
    }
    if (request.kind === 'bwrap' || part === 'network') throw err;
    return {
      sandbox: undefined,
      warning: `commands run UNSANDBOXED, with this user's rights: ${err.message.replace(/^the sandbox bwrap was asked for, but /, '').replace(/: install it \(`apt-get install bubblewrap`\) or start the worker with --sandbox none$/, '')}. Install bubblewrap (apt-get install bubblewrap slirp4netns) to confine them, or pass --sandbox none to say this is meant`,
    };
  }
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
  /** With the internet network: a resolv.conf naming slirp4netns's DNS forwarder, shown as /etc/resolv.conf. */
  resolvConf?: string;
  /**
   * A session of its own (`--new-session`): no controlling terminal, so the program cannot push
   * keystrokes into the worker's terminal (TIOCSTI). For programs not started detached (MCP stdio
   * servers); commands are, and need their process group for C-c.
   */
  newSession?: boolean;
  /**
   * Directories to show read-only besides the system's (the worker's own package and Node, whose
   * node_modules an MCP server may run from), unless one is, holds or lies in a hidden directory.
   */
  show?: readonly string[];
  /** The host's system directories and what is masked in them (the host's {@link SandboxHost.view}; default: {@link BARE_VIEW}). */
  view?: FilesystemView;
  /** A folder made empty and read-only inside (the user's home, where programs expect one). */
  emptyHome?: string;
  /**
   * With the internet network: run in this kept network (its holder's namespaces, entered with
   * nsenter) instead of making one for this process (kept-network.ts).
   */
  keptNetwork?: KeptNetwork;
}

/**
 * A network namespace made once and entered by many commands: its holder's pid and start time
 * (/proc/PID/stat field 22: with the pid, one process ever), and whether it has a user namespace
 * of its own.
 */
export interface KeptNetwork {
  pid: number;
  startTime: string;
  userns: boolean;
}

/**
 * Run by sh between nsenter and bwrap: the namespace just entered must be the holder's, and the
 * holder still the process that made it (its start time, read after: a holder alive then was alive
 * when nsenter opened its pid). A pid reused meanwhile (by a process in this host's network, or in
 * another conversation's) fails here, before the command starts. Arguments: the pid, its start
 * time, then the program and its arguments. The start time is the 20th field after the command
 * name's last ") " (a name may hold spaces and parentheses).
 */
export const KEPT_NETWORK_CHECK = `pid=$1; start=$2; shift 2
gone() { echo "[faheem sandbox: the kept network is gone; the command was not started]" >&2; exit 125; }
[ /proc/self/ns/net -ef "/proc/$pid/ns/net" ] || gone
read -r stat < "/proc/$pid/stat" || gone
started() { shift 19; [ "$1" = "$start" ]; }
set -f
started \${stat##*) } || gone
set +f
exec "$@"
`;

const isWithin = (child: string, parent: string) => child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

/**
 * What a sandboxed process sees of the host besides its workspace, its private /tmp and the binds
 * of its plan: an allowlist. `entries` are shown read-only where they are (a directory) or made as
 * the host has them (a link: merged /usr's `/bin -> usr/bin`); `masked` are paths inside them that
 * hold secrets (`/etc/shadow`, host keys), shown empty.
 */
export interface FilesystemView {
  entries: readonly { path: string; link?: string }[];
  masked: readonly { path: string; kind: 'file' | 'directory' }[];
}

/** The system directories a toolchain needs; everything else of the host is absent unless the operator adds it (FAHEEM_SANDBOX_READ). */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;

/**
 * Secrets under /etc that a command never needs: password hashes, sudo rules, the host's SSH and
 * TLS private keys, Kerberos keytabs, systemd credentials. Glob-free: `ssh_host_*` is matched by
 * name in /etc/ssh.
 */
export const ETC_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssl/private',
  '/etc/security/opasswd',
  '/etc/krb5.keytab',
  '/etc/letsencrypt',
  '/etc/credstore',
  '/etc/credstore.encrypted',
  '/etc/docker',
  '/etc/faheem',
  '/etc/pki/tls/private',
  '/etc/kubernetes',
  '/etc/NetworkManager/system-connections',
  '/etc/ipsec.secrets',
  '/etc/ipsec.d/private',
  '/etc/ppp/chap-secrets',
  '/etc/ppp/pap-secrets',
  '/etc/wpa_supplicant',
  '/etc/openvpn',
  '/etc/wireguard',
  '/etc/restic',
] as const;

/** The view used where none is given (argument lists in tests): the system directories as plain directories. */
export const BARE_VIEW: FilesystemView = { entries: ['/usr', '/etc'].map((p) => ({ path: p })), masked: [] };

/** FAHEEM_SANDBOX_READ: absolute directories (comma-separated) commands may also read. */
export function parseSandboxRead(value: string | undefined): string[] {
  const dirs = (value ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d !== '');
  for (const d of dirs) {
    if (!path.isAbsolute(d)) throw new SandboxError(`FAHEEM_SANDBOX_READ names "${d}", which is not an absolute path`);
  }
  return dirs.map((d) => path.resolve(d));
}

/**
 * This host's view (see FilesystemView): the system directories that exist, each as a directory or
 * a link as it is here, then `readable` (the operator's; shown when they exist), and the /etc
 * secrets that exist.
 */
export function filesystemView(readable: readonly string[] = []): FilesystemView {
  const entries: { path: string; link?: string }[] = [];
  for (const p of [...SYSTEM_DIRS, ...readable]) {
    if (entries.some((e) => e.path === p)) continue;
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) entries.push({ path: p, link: readlinkSync(p) });
      else if (st.isDirectory()) entries.push({ path: p });
    } catch {
      // not on this host
    }
  }
  const masked: { path: string; kind: 'file' | 'directory' }[] = [];
  const mask = (p: string) => {
    try {
      const st = lstatSync(p);
      if (st.isDirectory()) masked.push({ path: p, kind: 'directory' });
      else if (st.isFile()) masked.push({ path: p, kind: 'file' });
    } catch {
      // not here
    }
  };
  for (const p of ETC_SECRETS) mask(p);
  try {
    for (const name of readdirSync('/etc/ssh')) if (/^ssh_host_.*_key$/.test(name)) mask(path.join('/etc/ssh', name));
  } catch {
    // no /etc/ssh
  }
  return { entries, masked };
}

/**
 * bubblewrap's options for a plan, up to the command (append `--`, the program and its arguments).
 * Pure: the paths are taken as they are given (absolute, existing). The root is empty: the view's
 * system directories read-only, /dev, /proc, a private /tmp, the shown directories read-only, the
 * workspace writable, the plan's binds, and nothing else of the host.
 */
export function bwrapArgs(sandbox: SandboxOptions, plan: BwrapPlan): string[] {
  const ws = path.resolve(plan.workspace);
  const view = plan.view ?? BARE_VIEW;
  const tmp = '/tmp';
  const hidden = [...new Set((plan.hide ?? []).map((d) => path.resolve(d)))].filter((d) => d !== ws && d !== '/');
  const system = view.entries.filter((e) => !e.link).map((e) => e.path);
  // A starting directory outside the workspace is shown read-only, as are the plan's `show`
  // directories (the worker's own package and Node), before the workspace (which may be inside
  // one and stays writable); never one that is or lies in a hidden directory (a start there fails,
  // saying it cannot change to it), nor /tmp itself. A hidden directory inside one is covered.
  const cwd = plan.cwd ? path.resolve(ws, plan.cwd) : ws;
  const shown = [cwd, ...(plan.show ?? []).map((d) => path.resolve(d))].filter(
    (d, i, all) =>
      all.indexOf(d) === i &&
      d !== '/' &&
      d !== tmp &&
      !isWithin(d, ws) &&
      !system.some((s) => isWithin(d, s)) &&
      !hidden.some((h) => isWithin(d, h)),
  );
  const visible = [...system, ...shown];
  // A hidden directory matters only where something shows it: inside a shown one (covered before
  // the workspace, which may be inside it) or inside the workspace (covered after it).
  const inside = hidden.filter((d) => isWithin(d, ws));
  const outside = hidden.filter((d) => !inside.includes(d) && visible.some((v) => isWithin(d, v)));

  const args: string[] = [];
  for (const e of view.entries) {
    if (e.link) args.push('--symlink', e.link, e.path);
    else args.push('--ro-bind', e.path, e.path);
  }
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', tmp);
  const home = plan.emptyHome ? path.resolve(plan.emptyHome) : undefined;
  if (home && home !== '/' && !isWithin(home, tmp) && !isWithin(ws, home) && !visible.some((v) => isWithin(home, v)))
    args.push('--dir', home);
  for (const d of shown) args.push('--ro-bind-try', d, d);
  for (const d of outside) args.push('--tmpfs', d);
  args.push('--bind', ws, ws);
  for (const d of inside) args.push('--tmpfs', d);
  for (const b of plan.binds ?? []) {
    const p = path.resolve(b.path);
    args.push(b.readOnly ? '--ro-bind' : '--bind', p, p);
  }
  for (const m of view.masked) {
    if (!visible.some((v) => isWithin(m.path, v)) || isWithin(m.path, ws)) continue;
    if (m.kind === 'file') args.push('--ro-bind', '/dev/null', m.path);
    else args.push('--tmpfs', m.path, '--remount-ro', m.path);
  }
  // /run is not shown (the host's Docker and D-Bus sockets); name resolution may live there. With
  // the internet network, names are resolved by slirp4netns's forwarder (the host's may be on loopback).
  const resolv = realTarget('/etc/resolv.conf');
  if (sandbox.network === 'internet' && plan.resolvConf) args.push('--ro-bind', plan.resolvConf, resolv ?? '/etc/resolv.conf');
  else if (resolv && !visible.some((v) => isWithin(resolv, v))) args.push('--ro-bind-try', resolv, resolv);
  // Not recursive: the workspace and the binds inside a read-only directory stay as they are.
  for (const d of [...outside, ...inside]) args.push('--remount-ro', d);
  args.push('--remount-ro', '/');
  args.push('--unshare-pid', '--unshare-ipc', '--die-with-parent', '--cap-drop', 'ALL');
  if (plan.newSession) args.push('--new-session');
  if (sandbox.network !== 'host' && !(sandbox.network === 'internet' && plan.keptNetwork)) args.push('--unshare-net');
  args.push('--chdir', cwd);
  return args;
}

/**
 * Variables that change what the host-side programs (env, bash, bwrap, slirp4netns, nsenter, ip) do:
 * the dynamic loader's, bash's start-up files and exported functions, resolver and locale overrides.
 * A command's exported state may hold them (`export LD_PRELOAD=./x.so`): the sandbox's own programs
 * start without them, and the command gets them back inside (bwrap --setenv).
 */
export function isHostUnsafeVariable(name: string): boolean {
  return /^(LD_|BASH_FUNC_)|^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|GCONV_PATH|LOCPATH|NLSPATH|HOSTALIASES|RESOLV_HOST_CONF|LOCALDOMAIN|RES_OPTIONS|MALLOC_CONF)$/.test(
    name,
  );
}

/** A program's absolute path on this PATH, if it is there. */
function findProgram(name: string, env: ChildEnv): string | undefined {
  for (const dir of (env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    if (!dir.startsWith('/')) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, fsConstants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Whether a program is on this PATH (for the checks). */
function hasProgram(name: string, env: ChildEnv): boolean {
  return findProgram(name, env) !== undefined;
}

/**
 * The addresses a command on the internet network must not reach, as routes to refuse inside its
 * namespace: private (RFC 1918), shared (CGNAT, 100.64/10, used by tailnets), link-local (cloud
 * metadata at 169.254.169.254), "this network", multicast and reserved ranges, and each of this host's
 * own addresses and attached networks (its services bound to 0.0.0.0, its neighbours: a Temporal in
 * the next container). slirp4netns's own --disable-host-loopback refuses 127/8 and its gateway.
 */
export function blockedNetworks(interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces()): string[] {
  const out = [
    '0.0.0.0/8',
    '10.0.0.0/8',
    '100.64.0.0/10',
    '169.254.0.0/16',
    '172.16.0.0/12',
    '192.168.0.0/16',
    '224.0.0.0/4',
    '240.0.0.0/4',
  ];
  for (const infos of Object.values(interfaces)) {
    for (const i of infos ?? []) {
      if (i.family !== 'IPv4' || i.internal) continue;
      out.push(`${i.address}/32`);
      const bits = Number((i.cidr ?? '').split('/')[1]);
      if (Number.isInteger(bits) && bits > 0 && bits < 32) out.push(`${networkOf(i.address, bits)}/${bits}`);
    }
  }
  return [...new Set(out)];
}

function networkOf(address: string, bits: number): string {
  const n = address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const net = (n & mask) >>> 0;
  return [net >>> 24, (net >>> 16) & 255, (net >>> 8) & 255, net & 255].join('.');
}

/**
 * The internet network's start, run by bash on the host before bwrap: bwrap stops before the
 * command (--block-fd) and says its child's pid (--info-fd); the routes to refuse are added in the
 * child's network namespace (nsenter, as the namespace's owner) while slirp4netns gives it a tap
 * device; only when both are done does the command start. Any failure kills bwrap: the command
 * never runs with a half-made network. slirp4netns exits when the sandbox does (--exit-fd: the last
 * writer of that pipe is the sandbox). slirp4netns parses the sandbox's packets, so it runs in a
 * mount namespace of its own under seccomp (--enable-sandbox --enable-seccomp). Arguments: PATH for these programs, the temporary directory,
 * slirp4netns, nsenter, ip, the networks to refuse (space-separated), whether to print
 * `faheem-net PID` once the network is made (a kept network's holder: kept-network.ts; empty: no),
 * then bwrap and its arguments.
 */
export const INTERNET_LAUNCHER = `trap '' INT
cmdpath=$PATH; PATH=$1; tmp=$2; slirp=$3; nsenter=$4; ip=$5; blocked=$6; report=$7; shift 7
d=$(mktemp -d -p "$tmp" faheem-net.XXXXXX) || exit 125
if ! mkfifo -m 600 "$d/i" "$d/b" "$d/r" "$d/e" "$d/s"; then rm -rf "$d"; exit 125; fi
exec 3<>"$d/i" 8<"$d/i" 4<>"$d/b" 5<>"$d/r" 6<>"$d/e" 7<"$d/e" 9<>"$d/s"
rm -rf "$d"
(
  exec 3>&- 6>&- 0</dev/null
  pid= sp= released=
  # Any way out but the release stops the sandbox: it must never wait, nor run without its network.
  trap '[ -n "$released" ] || { [ -n "$sp" ] && kill -KILL "$sp"; [ -n "$pid" ] && kill -KILL "$pid"; kill -KILL $$; } 2>/dev/null' EXIT
  fail() { echo "[faheem sandbox: $1; the command was not started]" >&2; exit 1; }
  while IFS= read -r line <&8; do case $line in *'"child-pid"'*) pid=\${line//[!0-9]/}; break;; esac; done
  exec 8<&-
  [ -n "$pid" ] || exit 0
  # bwrap sets up the namespace's loopback before it waits on --block-fd; touching the namespace
  # before that races with it (its netlink call fails). A route to 127.0.0.1 says it is done.
  for ((n = 0; n < 5000; n++)); do
    t=; IFS= read -r -d '' t <"/proc/$pid/net/fib_trie" 2>/dev/null
    [[ $t == *127.0.0.1* ]] && break
    [ -e "/proc/$pid" ] || fail 'the sandbox ended before its network was made'
    read -r -t 0.002 -u 9 _
  done
  exec 9<&-
  userns=(); [ "$(readlink /proc/$pid/ns/user)" = "$(readlink /proc/self/ns/user)" ] || userns=(--user --preserve-credentials)
  "$slirp" --configure --mtu=65520 --disable-host-loopback --enable-sandbox --enable-seccomp --ready-fd 5 --exit-fd 7 "$pid" tap0 </dev/null >/dev/null 2>&1 4>&- &
  sp=$!
  exec 7<&-
  for a in $blocked; do echo "route replace prohibit $a"; done | "$nsenter" --target "$pid" --net "\${userns[@]}" "$ip" -batch - 2>&1 >/dev/null 4>&- 5>&- | head -3 >&2; [ "\${PIPESTATUS[1]}" = 0 ] || fail 'could not refuse the private networks in its namespace (nsenter, ip)'
  read -r -N1 -t 10 ok <&5 || fail 'slirp4netns did not start its network'
  printf 1 >&4 && released=1
  [ -z "$report" ] || echo "faheem-net $pid"
) &
exec 5>&- 7<&- 8<&- 9<&-
PATH=$cmdpath exec "$@"
`;

/**
 * The worker's own package and the Node it runs, which MCP servers and commands may run from: the
 * package's folder (or, installed as a dependency, the node_modules that holds it and its hoisted
 * dependencies) and Node's installation prefix (when it is not under /usr already).
 */
export function workerDirs(): string[] {
  const pkg = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/+$/, '');
  // node_modules/faheemcode, or a scoped node_modules/@scope/faheemcode: the node_modules above it.
  const parts = pkg.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  const modules = at > 0 && parts.length - at <= 3 ? parts.slice(0, at + 1).join(path.sep) : undefined;
  const node = path.dirname(path.dirname(process.execPath));
  return [modules ?? pkg, node];
}

/** A directory's own `.faheem` folder (a project's server database, installed tools), when it has one. */
function stateFolder(dir: string): string[] {
  const d = path.join(dir, '.faheem');
  try {
    return lstatSync(d).isDirectory() ? [d] : [];
  } catch {
    return [];
  }
}

/**
 * The program, arguments and environment that run `file args` with environment `env` under the
 * sandbox, or unchanged without one. The sandbox's own programs are the worker's (absolute paths)
 * and start without the variables that would change them (isHostUnsafeVariable; the command gets
 * those back inside). The outer bwrap ignores SIGINT (so C-c reaches the command, not the sandbox) and
 * the command gets the default action back; killing bwrap (SIGTERM, SIGKILL) ends every process in
 * the sandbox, and with the internet network its slirp4netns too.
 */
export function sandboxedCommand(
  sandbox: Sandbox | undefined,
  plan: BwrapPlan,
  file: string,
  args: readonly string[],
  env: Record<string, string> = {},
): { file: string; args: string[]; env: Record<string, string> } {
  if (!sandbox) return { file, args: [...args], env };
  const outer: Record<string, string> = {};
  const inner: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (isHostUnsafeVariable(k)) inner.push('--setenv', k, v);
    else outer[k] = v;
  }
  const host = sandbox.host;
  const resolvConf = sandbox.network === 'internet' ? (plan.resolvConf ?? host.resolvConf()) : undefined;
  // `env` runs inside, first: its folder is shown wherever the worker found it.
  const envProgram = host.program('env');
  const show = [...(plan.show ?? workerDirs()), ...(path.isAbsolute(envProgram) ? [path.dirname(envProgram)] : [])];
  // The workspace's and the shown folders' own .faheem (a server's database, its tools) are hidden too.
  const hide = [...(plan.hide ?? []), ...[plan.workspace, ...show].flatMap(stateFolder)];
  const bwrap = [
    host.program('bwrap'),
    ...bwrapArgs(sandbox, { view: host.view(), emptyHome: host.userHome, ...plan, show, hide, ...(resolvConf ? { resolvConf } : {}) }),
    ...inner,
    '--',
    host.program('env'),
    '--default-signal=INT',
    '--',
    file,
    ...args,
  ];
  if (sandbox.network !== 'internet') return { file: host.program('env'), args: ['--ignore-signal=INT', ...bwrap], env: outer };
  const kept = plan.keptNetwork;
  if (kept) {
    // nsenter execs: the pid started is bwrap's, whose group a stop kills, as without a kept network.
    const userns = kept.userns ? ['--user', '--preserve-credentials'] : [];
    return {
      file: host.program('nsenter'),
      args: [
        '--target',
        String(kept.pid),
        '--net',
        ...userns,
        '--',
        host.program('sh'),
        '-c',
        KEPT_NETWORK_CHECK,
        'faheem-net',
        String(kept.pid),
        kept.startTime,
        host.program('env'),
        '--ignore-signal=INT',
        ...bwrap,
      ],
      env: outer,
    };
  }
  const [bwrapFile, ...bwrapRest] = bwrap;
  return {
    file: host.program('bash'),
    args: [...internetLauncher(host, false), bwrapFile!, '--info-fd', '3', '--block-fd', '4', ...bwrapRest],
    env: outer,
  };
}

/** bash's arguments that start INTERNET_LAUNCHER, up to bwrap (append bwrap and its arguments). */
export function internetLauncher(host: SandboxHost, report: boolean, blocked = blockedNetworks().join(' ')): string[] {
  return [
    '--norc',
    '--noprofile',
    '-c',
    INTERNET_LAUNCHER,
    'faheem-sandbox',
    host.programPath(),
    os.tmpdir(),
    host.program('slirp4netns'),
    host.program('nsenter'),
    host.program('ip'),
    blocked,
    report ? '1' : '',
  ];
}

/**
 * The directories a sandbox hides on this worker when something shown holds them: its user's home,
 * FAHEEM_HOME, the payload folder, the pool's workspaces folder (other conversations' workspaces), a
 * `file://` object store's folder (every conversation's shipped objects), and /run and /var/run (the
 * host's sockets), when they exist. What is not shown is absent anyway (see bwrapArgs): this list
 * matters for the ones inside a shown directory or the workspace.
 */
export function hiddenDirs(env: ChildEnv): string[] {
  const candidates = [
    env.HOME,
    os.homedir(),
    faheemHome(env),
    env.FAHEEM_PAYLOAD_DIR,
    env.FAHEEM_WORKSPACES_DIR || path.join(os.homedir(), '.faheem', 'workspaces'),
    fileStoreRoot(env.FAHEEM_OBJECT_STORE),
    '/run',
    '/var/run',
  ];
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

// A file:// store's folder; anything else (s3://, unset, malformed: the store says so itself) has none.
function fileStoreRoot(value: string | undefined): string | undefined {
  if (!value?.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(new URL(value));
  } catch {
    return undefined;
  }
}

/** A sandbox that cannot work here; `part` says whether bubblewrap or the internet network is what fails. */
function sandboxFailure(part: 'bwrap' | 'network', message: string): SandboxError {
  return Object.assign(new SandboxError(message), { part });
}

// One probe a process for each setting: a worker checks once at start, and doctor once.
const probes = new Map<string, Promise<string>>();

/**
 * Checks that the sandbox works here, the way commands will use it: bwrap (and, for the internet
 * network, slirp4netns, nsenter and ip) installed, and a trial command runs inside. Throws a
 * SandboxError that says what to do (its `part`: `bwrap` or `network`); returns bwrap's version.
 * Run once a process for each sandbox and PATH.
 */
export function checkSandbox(sandbox: SandboxOptions, env: ChildEnv): Promise<string> {
  const key = `${sandbox.network}\0${env.PATH ?? ''}`;
  let probe = probes.get(key);
  if (!probe) {
    probe = probeSandbox(sandbox, env);
    probes.set(key, probe);
    probe.catch(() => probes.delete(key)); // a failure is checked again next time (something may have been installed)
  }
  return probe;
}

async function probeSandbox(sandbox: SandboxOptions, env: ChildEnv): Promise<string> {
  const { execa } = await import('execa'); // loaded when used: most CLI commands never run a program
  if (!hasProgram('bwrap', env)) {
    throw sandboxFailure(
      'bwrap',
      'the sandbox bwrap was asked for, but bubblewrap is not installed (bwrap is not on PATH): install it (`apt-get install bubblewrap`) or start the worker with --sandbox none',
    );
  }
  const version = await execa(findProgram('bwrap', env) ?? 'bwrap', ['--version'], { env, reject: false, timeout: 10_000 });
  if (version.exitCode !== 0) {
    throw sandboxFailure(
      'bwrap',
      `the sandbox bwrap was asked for, but \`bwrap --version\` failed: ${(version.stderr || version.stdout || version.message || '').trim()}`,
    );
  }
  if (sandbox.network === 'internet') {
    const missing = ['slirp4netns', 'nsenter', 'ip'].filter((p) => !hasProgram(p, env));
    if (missing.length > 0) {
      throw sandboxFailure(
        'network',
        `the internet network needs ${missing.join(', ')}, not on PATH (apt-get install slirp4netns util-linux iproute2)`,
      );
    }
  }
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'faheem-sandbox-check-'));
  try {
    const script =
      'touch ./written || exit 3; ' +
      'if touch /faheem-sandbox-check 2>/dev/null; then rm -f /faheem-sandbox-check; echo "/ is writable inside the sandbox"; exit 4; fi';
    const trialOf = async (s: SandboxOptions) => {
      const run = sandboxedCommand(onHost(s, env), { workspace, hide: hiddenDirs(env) }, 'sh', ['-c', script], {
        PATH: env.PATH ?? '/usr/bin:/bin',
      });
      return execa(run.file, run.args, { env: run.env, extendEnv: false, reject: false, timeout: 20_000, all: true });
    };
    // bubblewrap itself first (without the internet network), so a failure names the right part.
    const trial = await trialOf(sandbox.network === 'internet' ? { kind: 'bwrap', network: 'none' } : sandbox);
    if (trial.exitCode !== 0) {
      throw sandboxFailure(
        'bwrap',
        `the sandbox bwrap was asked for, but bubblewrap cannot make its sandbox here: ${(trial.all || trial.message || '').trim() || `exit code ${trial.exitCode}`}. ` +
          'It needs user and PID namespaces (run as root, or allow unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1; ' +
          'in a container, allow them or run it privileged), and GNU env (coreutils 8.31 or later)',
      );
    }
    try {
      statSync(path.join(workspace, 'written'));
    } catch {
      throw sandboxFailure('bwrap', 'the sandbox bwrap was asked for, but a trial command could not write in its workspace');
    }
    if (sandbox.network === 'internet') {
      const net = await trialOf(sandbox);
      if (net.exitCode !== 0) {
        throw sandboxFailure(
          'network',
          `the internet network (slirp4netns) does not start here: ${(net.all || net.message || '').trim() || `exit code ${net.exitCode}`}`,
        );
      }
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
    sandbox: Sandbox | undefined;
    baseEnv: Record<string, string>;
    hide: readonly string[];
    signal?: AbortSignal;
    /** The conversation's kept network to run in (kept-network.ts leaseNetwork; the caller releases it). */
    keptNetwork?: KeptNetwork;
  },
): Promise<ExecResult> {
  if (options.signal?.aborted) throw new ToolInterruptedError('', `${command} was not started: the call was interrupted`);
  const { execa } = await import('execa');
  const cwd = path.resolve(options.workspace, options.cwd ?? '.');
  const plan = {
    workspace: options.workspace,
    cwd,
    hide: options.hide,
    ...(options.keptNetwork ? { keptNetwork: options.keptNetwork } : {}),
  };
  const run = sandboxedCommand(options.sandbox, plan, command, args, {
    ...options.baseEnv,
    ...options.env,
  });
  const child = execa(run.file, run.args, {
    cwd,
    env: run.env,
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
  // After SIGKILL too: its processes are gone a moment later, not at once (a busy machine schedules
  // them late), and a caller that was told "stopped" may look.
  for (const [sig, graceMs] of [
    ['SIGINT', 300],
    ['SIGTERM', 1000],
    ['SIGKILL', 1000],
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
