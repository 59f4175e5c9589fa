// A conversation's sandbox network, made once and entered by each of its commands. Making the
// internet network (INTERNET_LAUNCHER: a network namespace, slirp4netns, the refused routes) took
// ~12 ms and ~20 ms of CPU a command, the dearest part of a step; entering a kept one with nsenter
// costs about nothing. The holder is a bwrap that only sleeps in the namespace (started by the same
// launcher, so the network is exactly a command's), and each command's own bwrap (its mounts, PID
// namespace, no capabilities) runs inside that network. A conversation's commands share it, one
// after the other as before; other conversations never do. A holder goes after KEEP_MS without a
// command, when it dies (the next command makes another), with its worker (bwrap
// --die-with-parent, slirp4netns --exit-fd), when its conversation stops everything it started
// (stopKeptNetwork: a pause --now, its end, hibernation, a lost host), or when this host's addresses
// change (the routes it refuses were read when it started).
//
// Entering by pid is safe from the pid's reuse: after nsenter, before the command, a check
// (KEPT_NETWORK_CHECK) finds the namespace entered to be the holder's and the holder to be the
// process that started then (its start time); anything else stops there.
import { readlinkSync } from 'node:fs';
import { procStatFields } from './proc-stat.js';
import { spawnCommand, type SpawnedCommand } from './spawner.js';
import { blockedNetworks, internetLauncher, killGroup, type KeptNetwork, type Sandbox, type SandboxHost } from './sandbox.js';

/** How long a conversation's network is kept after its last command ended. */
export const KEEP_MS = 60_000;
/** How long a holder may take to make its network. */
const START_MS = 15_000;

/** A command's use of a kept network; release() when the command has ended. */
export interface NetworkLease {
  network: KeptNetwork;
  release(): void;
}

interface Holder {
  ready: Promise<KeptNetwork & { ns: string }>;
  proc?: SpawnedCommand;
  users: number;
  timer?: NodeJS.Timeout;
  gone: boolean;
  /** Its process has exited: its group is not killed again (the pid may be another's by now). */
  exited: boolean;
  /** The networks its routes refuse (blockedNetworks when it started). */
  blocked: string;
}

/** The kept networks of one worker, by conversation; see the module comment. */
export class KeptNetworks {
  private readonly holders = new Map<string, Holder>();

  constructor(
    private readonly host: SandboxHost,
    private readonly keepMs = KEEP_MS,
  ) {}

  /**
   * A lease on `key`'s network, made now if there is none (or its holder died). Rejects when no
   * network can be made; the caller then lets the command make its own (which says what failed).
   */
  async lease(key: string, spawnHelper: boolean | undefined): Promise<NetworkLease> {
    for (let attempt = 0; ; attempt++) {
      const blocked = blockedNetworks().join(' ');
      let holder = this.holders.get(key);
      // This host's addresses changed: a new holder refuses the new ones (the old one ends with its commands).
      if (holder && holder.blocked !== blocked) {
        this.holders.delete(key);
        if (holder.users === 0) void this.drop(key, holder);
        holder = undefined;
      }
      if (!holder || holder.gone) {
        holder = this.start(key, spawnHelper, blocked);
        this.holders.set(key, holder);
      }
      holder.users++;
      clearTimeout(holder.timer);
      const h = holder;
      let network: KeptNetwork & { ns: string };
      try {
        network = await h.ready;
      } catch (err) {
        this.unuse(key, h);
        void this.drop(key, h);
        throw err;
      }
      // Still the namespace it made: the holder has not died meanwhile.
      if (!h.gone && namespaceOf(network.pid, 'net') === network.ns) {
        let released = false;
        return {
          network: { pid: network.pid, startTime: network.startTime, userns: network.userns },
          release: () => {
            if (released) return;
            released = true;
            this.unuse(key, h);
          },
        };
      }
      this.unuse(key, h);
      void this.drop(key, h);
      if (attempt >= 1) throw new Error('the kept network ended as it was entered');
    }
  }

  /** Holders running now (tests). */
  get size(): number {
    return this.holders.size;
  }

  /** Stops every holder. */
  stopAll(): void {
    for (const [key, h] of this.holders) void this.drop(key, h);
  }

  /** Stops `key`'s holder now, in use or not (its conversation is stopping everything it started); resolves once it is gone. */
  async stop(key: string): Promise<void> {
    const h = this.holders.get(key);
    if (h) await this.drop(key, h);
  }

  private unuse(key: string, h: Holder): void {
    h.users--;
    if (h.users > 0 || h.gone) return;
    // Replaced meanwhile (this host's addresses changed): it goes with its last command.
    if (this.holders.get(key) !== h) return void this.drop(key, h);
    h.timer = setTimeout(() => void this.drop(key, h), this.keepMs);
    h.timer.unref();
  }

  private async drop(key: string, h: Holder): Promise<void> {
    h.gone = true;
    clearTimeout(h.timer);
    if (this.holders.get(key) === h) this.holders.delete(key);
    if (h.proc && !h.exited) await killGroup(h.proc.pid);
  }

  private start(key: string, spawnHelper: boolean | undefined, blocked: string): Holder {
    const h: Holder = { users: 0, gone: false, exited: false, blocked, ready: undefined as never };
    h.ready = (async () => {
      const host = this.host;
      const proc = await spawnCommand(
        host.program('bash'),
        [
          ...internetLauncher(host, true, blocked),
          host.program('bwrap'),
          '--info-fd',
          '3',
          '--block-fd',
          '4',
          // It only sleeps: the filesystem as it is, read-only, nothing to hide or to write.
          '--ro-bind',
          '/',
          '/',
          '--unshare-pid',
          '--unshare-ipc',
          '--unshare-net',
          '--die-with-parent',
          '--cap-drop',
          'ALL',
          '--',
          host.program('sleep'),
          'infinity',
        ],
        { cwd: '/', env: { PATH: host.programPath() }, detached: true },
        spawnHelper,
      );
      h.proc = proc;
      void proc.exited.then(() => {
        h.exited = true;
        void this.drop(key, h);
      });
      if (h.gone) {
        void killGroup(proc.pid);
        throw new Error('stopped before its network was made');
      }
      const pid = await readyPid(proc);
      const ns = namespaceOf(pid, 'net');
      // Its start time (stat field 22, clock ticks since boot): with the pid, one process ever.
      const startTime = procStatFields(pid)?.[19];
      // Never the worker's own network: that would be no sandbox network at all.
      if (!ns || ns === namespaceOf('self', 'net') || !startTime) throw new Error('the holder has no network namespace of its own');
      return { pid, ns, startTime, userns: namespaceOf(pid, 'user') !== namespaceOf('self', 'user') };
    })();
    h.ready.catch(() => undefined);
    return h;
  }
}

/** The holder's pid, from the launcher's `faheem-net PID` line; rejects with what it printed if it ends first. */
function readyPid(proc: SpawnedCommand): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => finish(new Error(`the sandbox network did not start in ${START_MS / 1000} s`)), START_MS);
    const finish = (result: number | Error) => {
      clearTimeout(timer);
      proc.output.off('data', onData);
      if (typeof result === 'number') resolve(result);
      else reject(result);
    };
    const onData = (chunk: string) => {
      out += chunk;
      const m = /^faheem-net (\d+)$/m.exec(out);
      if (m) finish(Number(m[1]));
      else if (out.length > 10_000) out = out.slice(-5_000);
    };
    proc.output.on('data', onData);
    void proc.exited.then(() => finish(new Error(out.trim() || 'the sandbox network ended before it was made')));
  });
}

/** The namespace a process is in (`net:[4026532…]`), or undefined if it is gone. */
function namespaceOf(pid: number | 'self', kind: 'net' | 'user'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    return undefined;
  }
}

/** The kept networks of each sandbox host (one per worker). */
const networks = new WeakMap<SandboxHost, KeptNetworks>();

/**
 * A lease on conversation `session`'s kept network, when its sandbox has the internet network;
 * undefined otherwise, or when none can be made (the process then makes its own, which says what
 * failed). Release it when the process has ended.
 */
export async function leaseNetwork(
  sandbox: Sandbox | undefined,
  session: string | undefined,
  spawnHelper?: boolean,
): Promise<NetworkLease | undefined> {
  if (sandbox?.network !== 'internet' || !session) return undefined;
  let kept = networks.get(sandbox.host);
  if (!kept) networks.set(sandbox.host, (kept = new KeptNetworks(sandbox.host)));
  return kept.lease(session, spawnHelper).catch(() => undefined);
}

/**
 * Stops conversation `session`'s kept network now, with whatever still runs in it (its conversation
 * is stopping everything it started: see stopConversationProcesses); resolves once its holder is gone.
 */
export async function stopKeptNetwork(sandbox: Sandbox | undefined, session: string): Promise<void> {
  if (sandbox) await networks.get(sandbox.host)?.stop(session);
}

/** Stops the kept networks of a sandbox's host (its worker stops; a process still running loses its network). */
export function stopKeptNetworks(sandbox: Sandbox | undefined): void {
  if (sandbox) networks.get(sandbox.host)?.stopAll();
}
