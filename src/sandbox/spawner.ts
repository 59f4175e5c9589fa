// Terminal commands are started by a small helper process, not by the worker. On Linux, libuv spawns
// with fork(), whose cost grows with the forking process's memory: a worker of several hundred MB
// paid ~12 ms of main-thread CPU a command, its largest cost a step. The helper (spawn-helper.ts), a
// bare Node process, is forked once, lazily, and pays that cost on its own thread at its own small
// size; the process's entry point says whether to use it and with what environment (setUpSpawner).
// If it cannot start, or was not set up, commands start in this process with execa. Short
// programs whose output is wanted whole (the checkpoints' git calls) go the same way: runProgram.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { FaheemError } from '../core/errors.js';
import { commandBaseEnv } from '../security/env-policy.js';
import { fileURLToPath } from 'node:url';
import type { ChildEnv } from '../environment.js';

export interface SpawnOptions {
  cwd: string;
  /** The command's whole environment: nothing of this process's is added. */
  env: Record<string, string>;
  /** Its own process group (and session): process.kill(-pid) reaches everything it started. */
  detached: boolean;
}

export interface CommandExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the command was lost rather than seen to exit (the spawn helper died). */
  error?: string;
}

export interface SpawnedCommand {
  pid: number;
  /** stdout and stderr as text, merged in arrival order; ends when both are closed. */
  output: Readable;
  exited: Promise<CommandExit>;
  write(data: string): void;
  /** Closes the command's stdin (C-d). */
  endInput(): void;
  /** Stops reading the output, e.g. when background jobs keep the pipes open after the exit. */
  destroyOutput(): void;
}

/** How a program run to its end ended, with all it printed (see {@link runProgram}). */
export interface ProgramResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** A program that could not be started; `errno` is the system's (ENOENT: no such program). */
export class ProgramStartError extends FaheemError {
  /** The system's error code, when it gave one. */
  readonly errno: string | undefined;

  constructor(message: string, errno: string | undefined) {
    super('tool_not_started', message);
    this.errno = errno;
  }
}

/** Worker → helper. */
export type ToHelper =
  | { type: 'spawn'; id: number; file: string; args: string[]; cwd: string; env: Record<string, string>; detached: boolean }
  | { type: 'run'; id: number; file: string; args: string[]; cwd: string; env: Record<string, string>; input: Uint8Array }
  | { type: 'stdin'; id: number; data: string }
  | { type: 'stdin-end'; id: number }
  | { type: 'drop-output'; id: number };

/** Helper → worker. */
export type FromHelper =
  | { type: 'ready' }
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'spawn-error'; id: number; message: string }
  | { type: 'output'; id: number; data: string }
  | { type: 'output-end'; id: number }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: 'ran'; id: number; code: number | null; signal: NodeJS.Signals | null; stdout: Uint8Array; stderr: Uint8Array }
  | { type: 'run-error'; id: number; message: string; code?: string };

/** A helper that has not said it is ready by then is given up on (tsx under load is slow to start). */
const READY_TIMEOUT_MS = 15_000;
/** After the helper failed to start, commands start in-process for this long before it is tried again. */
const RETRY_AFTER_MS = 60_000;

/** How this process starts commands: what its entry point says in {@link setUpSpawner}. */
export interface SpawnerSetup {
  /** Through the spawn helper (FAHEEM_SPAWN_HELPER; `0` turns it off); false: in this process. */
  helper: boolean;
  /** This process's environment: the helper is forked with its allow-listed part only (commandBaseEnv). */
  env: ChildEnv;
}

// Set once a process, by its entry point (createWorker, the CLI), and read only here: the helper is
// one a process (forked once, shared by every caller), so whether to use it and the environment it
// starts with are facts of the process, not of a call. Unset (a program that only uses the SDK), no
// helper: commands start in this process, each with the environment its caller gives.
let setup: SpawnerSetup | undefined;

/**
 * Says how this process starts commands: through the spawn helper, forked (lazily, once) with the
 * allow-listed part of `env`, or in this process. Called by the entry point when it starts; a helper
 * already running keeps the environment it was forked with.
 */
export function setUpSpawner(how: SpawnerSetup): void {
  setup = { helper: how.helper, env: how.env };
}

/** The helper, when this call wants it (`useHelper`, else the process's setup) and the process set one up. */
async function helperFor(useHelper: boolean | undefined): Promise<Helper | undefined> {
  if (!setup || !(useHelper ?? setup.helper)) return undefined;
  return currentHelper(setup.env);
}

/**
 * Starts `file args` in its own process: through the spawn helper, or in this process when the
 * helper cannot be started or is not wanted (`useHelper` false; unset, the process's
 * {@link setUpSpawner} decides). Rejects when the program cannot be started.
 */
export async function spawnCommand(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
  useHelper?: boolean,
): Promise<SpawnedCommand> {
  const helper = await helperFor(useHelper);
  return helper ? helper.spawn(file, args, options) : spawnInProcess(file, args, options);
}

/**
 * Runs `file args` to its end with `input` on its stdin and answers what it printed: through the
 * spawn helper (so this process does not fork), or in this process as {@link spawnCommand} does.
 * Rejects with {@link ProgramStartError} when the program cannot be started.
 */
export async function runProgram(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: ChildEnv; input?: string | Buffer },
  useHelper?: boolean,
): Promise<ProgramResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.env)) if (v !== undefined) env[k] = v;
  const input = typeof options.input === 'string' ? Buffer.from(options.input, 'utf8') : (options.input ?? Buffer.alloc(0));
  const helper = await helperFor(useHelper);
  return helper ? helper.run(file, args, options.cwd, env, input) : runInProcess(file, args, options.cwd, env, input);
}

/** The running helper's pid, if any (for tests and diagnostics). */
export function spawnHelperPid(): number | undefined {
  return helper?.pid;
}

let helper: Helper | undefined;
let failedAt = -Infinity;
let warned = false;

async function currentHelper(env: ChildEnv): Promise<Helper | undefined> {
  if (Date.now() - failedAt < RETRY_AFTER_MS) return undefined;
  let h: Helper | undefined;
  try {
    h = helper ??= new Helper(env); // fork() itself may throw
    await h.ready;
    return h;
  } catch (err) {
    if (helper === h) helper = undefined;
    failedAt = Date.now();
    if (!warned) {
      warned = true;
      console.warn(
        `[faheem] the spawn helper could not start (${(err as Error).message}); terminal commands start in the worker process instead`,
      );
    }
    return undefined;
  }
}

/** The helper's entry: compiled next to this file, or its .ts source under tsx, which needs tsx's loader. */
function helperEntry(): { file: string; execArgv: string[] } {
  const fromSource = new URL(import.meta.url).pathname.endsWith('.ts');
  const file = fileURLToPath(new URL(fromSource ? './spawn-helper.ts' : './spawn-helper.js', import.meta.url));
  if (!fromSource) return { file, execArgv: [] }; // none of the worker's flags (--inspect, heap sizes)
  let loader = 'tsx';
  try {
    loader = import.meta.resolve('tsx'); // found from here, whatever the worker's cwd
  } catch {
    // keep the bare name: resolved from the cwd
  }
  return { file, execArgv: ['--import', loader] };
}

interface HelperCommand {
  spawned: boolean;
  resolveSpawn: () => void;
  rejectSpawn: (err: Error) => void;
  pid: number;
  detached: boolean;
  output: Readable;
  outputDone: boolean;
  exited: boolean;
  resolveExit: (exit: CommandExit) => void;
}

class Helper {
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;
  private readonly commands = new Map<number, HelperCommand>();
  private readonly runs = new Map<number, { resolve: (r: ProgramResult) => void; reject: (err: Error) => void }>();
  private nextId = 1;
  private started = false;
  private gone = false;

  /** `env`: this process's environment (the helper gets its allow-listed part). */
  constructor(env: ChildEnv) {
    const entry = helperEntry();
    // Detached: a Ctrl-C meant for the worker (which then drains its running commands) does not
    // reach the helper. It still exits when the worker does: its IPC channel closes.
    // Only the allowlisted variables: commands are its children, and /proc/<its pid>/environ is
    // readable by them (unsandboxed, as $PPID); the worker's keys must not be in it.
    this.child = fork(entry.file, [], {
      execArgv: entry.execArgv,
      env: commandBaseEnv({ ...env, FAHEEM_COMMAND_ENV: '' }),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'], // its stderr: a crash is seen in the worker's log
      detached: true,
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`it did not start within ${READY_TIMEOUT_MS / 1000} s`));
        this.child.kill('SIGKILL');
      }, READY_TIMEOUT_MS);
      this.child.on('message', (m: FromHelper) => {
        if (m.type === 'ready') {
          this.started = true;
          clearTimeout(timer);
          resolve();
          this.updateRef();
        } else this.onMessage(m);
      });
      this.child.on('error', (err) => {
        // Once it runs, its end shows as 'disconnect'; an error before means it did not start.
        if (this.started) return;
        clearTimeout(timer);
        reject(err);
        this.child.kill('SIGKILL');
        this.onGone(err.message);
      });
      // After 'disconnect' no more messages come: every output the helper sent has been read.
      this.child.on('disconnect', () => {
        clearTimeout(timer);
        reject(new Error('it exited'));
        this.onGone('the spawn helper exited');
      });
    });
    this.ready.catch(() => undefined);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  spawn(file: string, args: readonly string[], options: SpawnOptions): Promise<SpawnedCommand> {
    const id = this.nextId++;
    return new Promise<SpawnedCommand>((resolveSpawn, rejectSpawn) => {
      if (this.gone) return rejectSpawn(new Error('the spawn helper exited before the command started'));
      let resolveExit: (exit: CommandExit) => void = () => undefined;
      const exited = new Promise<CommandExit>((resolve) => (resolveExit = resolve));
      const output = new Readable({ read() {}, encoding: 'utf8' });
      const cmd: HelperCommand = {
        spawned: false,
        resolveSpawn: () =>
          resolveSpawn({
            pid: cmd.pid,
            output,
            exited,
            write: (data) => this.send({ type: 'stdin', id, data }),
            endInput: () => this.send({ type: 'stdin-end', id }),
            destroyOutput: () => {
              if (!cmd.outputDone) this.send({ type: 'drop-output', id });
              output.destroy();
              this.finishOutput(id, cmd);
            },
          }),
        rejectSpawn,
        pid: 0,
        detached: options.detached,
        output,
        outputDone: false,
        exited: false,
        resolveExit,
      };
      this.commands.set(id, cmd);
      this.updateRef();
      this.send({ type: 'spawn', id, file, args: [...args], cwd: options.cwd, env: options.env, detached: options.detached });
    });
  }

  run(file: string, args: readonly string[], cwd: string, env: Record<string, string>, input: Buffer): Promise<ProgramResult> {
    const id = this.nextId++;
    return new Promise<ProgramResult>((resolve, reject) => {
      if (this.gone) return reject(new ProgramStartError('the spawn helper exited before the program started', undefined));
      this.runs.set(id, { resolve, reject });
      this.updateRef();
      this.send({ type: 'run', id, file, args: [...args], cwd, env, input });
    });
  }

  private onMessage(m: Exclude<FromHelper, { type: 'ready' }>): void {
    if (m.type === 'ran' || m.type === 'run-error') {
      const run = this.runs.get(m.id);
      if (!run) return;
      this.runs.delete(m.id);
      this.updateRef();
      if (m.type === 'ran') {
        const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
        run.resolve({ code: m.code, signal: m.signal, stdout: buf(m.stdout), stderr: buf(m.stderr) });
      } else run.reject(new ProgramStartError(m.message, m.code));
      return;
    }
    const cmd = this.commands.get(m.id);
    if (!cmd) return;
    switch (m.type) {
      case 'spawned':
        cmd.spawned = true;
        cmd.pid = m.pid;
        cmd.resolveSpawn();
        break;
      case 'spawn-error':
        this.commands.delete(m.id);
        this.updateRef();
        cmd.rejectSpawn(new Error(m.message));
        break;
      case 'output':
        if (!cmd.outputDone) cmd.output.push(m.data);
        break;
      case 'output-end':
        if (!cmd.outputDone) cmd.output.push(null);
        this.finishOutput(m.id, cmd);
        break;
      case 'exit':
        cmd.exited = true;
        cmd.resolveExit({ code: m.code, signal: m.signal });
        this.forgetIfDone(m.id, cmd);
        break;
    }
  }

  private finishOutput(id: number, cmd: HelperCommand): void {
    cmd.outputDone = true;
    this.forgetIfDone(id, cmd);
  }

  private forgetIfDone(id: number, cmd: HelperCommand): void {
    if (!cmd.exited || !cmd.outputDone) return;
    this.commands.delete(id);
    this.updateRef();
  }

  /** Keeps this process alive while a command is in flight, and only then. */
  private updateRef(): void {
    if (this.gone) return;
    if (this.commands.size > 0 || this.runs.size > 0) {
      this.child.ref();
      this.child.channel?.ref();
    } else {
      this.child.unref();
      this.child.channel?.unref();
    }
  }

  private send(message: ToHelper): void {
    if (!this.gone && this.child.connected) this.child.send(message);
  }

  /**
   * The helper died: its commands can no longer be read or given input. Those still running are
   * killed (sandboxed ones already died with it: bwrap's --die-with-parent) and reported ended.
   */
  private onGone(reason: string): void {
    if (this.gone) return;
    this.gone = true;
    if (helper === this) helper = undefined;
    for (const cmd of this.commands.values()) {
      if (!cmd.spawned) {
        cmd.rejectSpawn(new Error(`${reason} before the command started`));
        continue;
      }
      if (!cmd.exited) {
        try {
          process.kill(cmd.detached ? -cmd.pid : cmd.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      if (!cmd.outputDone) cmd.output.push(null);
      cmd.resolveExit({ code: null, signal: null, error: `${reason} while the command ran; the command was stopped` });
    }
    this.commands.clear();
    // A program run to its end is short (git): its caller fails and may try again.
    for (const run of this.runs.values()) run.reject(new Error(`${reason} while a program ran`));
    this.runs.clear();
  }
}

/** The fallback: the command started from this process, as before the helper. */
async function spawnInProcess(file: string, args: readonly string[], options: SpawnOptions): Promise<SpawnedCommand> {
  const { execa } = await import('execa'); // loaded when used (the helper starts most commands)
  const child = execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    stdin: 'pipe',
    all: true,
    buffer: false,
    reject: false,
    detached: options.detached,
  });
  const exited = new Promise<CommandExit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const result = child.catch((err: unknown) => err);
  if (child.pid === undefined) {
    const failure = (await result) as { shortMessage?: string; message?: string };
    throw new Error(failure.shortMessage ?? failure.message ?? `${file} could not be started`);
  }
  const output = child.all ?? Readable.from([]);
  output.setEncoding('utf8');
  child.stdin?.on('error', () => undefined); // the process may exit before reading its input
  return {
    pid: child.pid,
    output,
    exited,
    write: (data) => void child.stdin?.write(data),
    endInput: () => void child.stdin?.end(),
    destroyOutput: () => void output.destroy(),
  };
}

/** {@link runProgram} without the helper. */
function runInProcess(
  file: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  input: Buffer,
): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => reject(new ProgramStartError(e.message, e.code)));
    child.on('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
    child.stdin.on('error', () => undefined); // it may exit before reading its input
    child.stdin.end(input);
  });
}
