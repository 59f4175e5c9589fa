// The terminal tool: each command runs in a fresh bash that starts from the conversation's durable
// shell state (cwd + exported variables) and hands back the state it ended in. Nothing lives in the
// worker between commands, so any worker, on restart, continues the same shell. On a sandboxed worker
// that bash runs under bubblewrap (see sandbox.ts): one sandbox a command, so its end (or a kill)
// ends every process the command started.
import { constants } from 'node:fs';
import { mkdtemp, rm, mkdir, open, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONFIG_DEFAULTS } from '../worker/config.js';
import { ToolInterruptedError } from '../core/errors.js';
import { commandBaseEnv, isSecretName, namedSecrets } from '../security/env-policy.js';
import { redact, redactPiece } from '../security/redact.js';
import type { TerminalResult, TerminalState } from '../core/types.js';
import { leaseNetwork } from '../sandbox/kept-network.js';
import { killGroup, sandboxedCommand, type Sandbox } from '../sandbox/sandbox.js';
import type { z } from 'zod';
import { describeInvalid, TerminalArgs } from './schemas.js';
import { spawnCommand, type SpawnedCommand } from '../sandbox/spawner.js';

export const MAX_OUTPUT_CHARS = 30_000;
/** Even a command that keeps printing is reported back, still running, after this long. */
const MAX_OBSERVE_MS = 10 * 60_000;
/** A command with no new output for this long is returned as still running (the worker's FAHEEM_TERMINAL_SOFT_TIMEOUT_S, see config.ts). */
const DEFAULT_SOFT_TIMEOUT_MS = CONFIG_DEFAULTS.terminalSoftTimeoutS * 1000;

// Reads the command from a variable (so a syntax error in it is reported, not fatal to the
// wrapper) and records cwd and environment on every way out, `exit` included. The environment is
// written with builtins, as `env -0` would write it (NAME=value NUL), which saves a process a
// command; a bash without `compgen` falls back to `env -0`. An `if`, not `&&`: under the command's
// own `set -e` a failed test would end the trap early.
const WRAPPER = `
__faheem_env() {
  if builtin compgen -e > "$__faheem_state/names" 2>/dev/null; then
    builtin mapfile -t __faheem_names < "$__faheem_state/names"
    for __faheem_v in "\${__faheem_names[@]}"; do
      if [[ -n \${!__faheem_v+x} ]]; then builtin printf '%s=%s\\0' "$__faheem_v" "\${!__faheem_v}"; fi
    done > "$__faheem_state/env"
  else
    env -0 > "$__faheem_state/env"
  fi
}
__faheem_cmd=$__FAHEEM_CMD; __faheem_state=$__FAHEEM_STATE; __faheem_ws=$__FAHEEM_WS; __faheem_cwd=$__FAHEEM_CWD
unset __FAHEEM_CMD __FAHEEM_STATE __FAHEEM_WS __FAHEEM_CWD
cd -- "$__faheem_cwd" 2>/dev/null || { echo "[note: $__faheem_cwd no longer exists; running in the workspace]"; cd -- "$__faheem_ws"; }
trap '__faheem_ec=$?; builtin pwd > "$__faheem_state/cwd"; __faheem_env; exit $__faheem_ec' EXIT
eval "$__faheem_cmd"
`;

export interface TerminalContext {
  workspace: string;
  /** Aborts the command: interrupt, terminate, then kill its process group. */
  signal?: AbortSignal;
  /** Where the full output of a truncated command is kept. */
  outputDir?: string;
  /** Values to hide from output. */
  secrets?: readonly string[];
  /** The environment commands start from (commandBaseEnv: the allowlisted variables of the worker's). */
  baseEnv: Record<string, string>;
  /** Which running command is ours: the conversation id. */
  session?: string;
  /** No new output for this long returns the command as still running. */
  softTimeoutMs?: number;
  /** Secrets by name: exported to a command only when it mentions the name; never kept in state. */
  secretEnv?: Record<string, string>;
  /** Run each command under this sandbox (default: none, with the worker user's rights). */
  sandbox?: Sandbox;
  /** Directories the sandbox hides (the worker's home, FAHEEM_HOME); see hiddenDirs. */
  sandboxHide?: readonly string[];
  /** Start commands through the spawn helper (the worker's FAHEEM_SPAWN_HELPER; default: on). */
  spawnHelper?: boolean;
  /** Told each piece of the command's output as it comes (stdout and stderr merged), for a live view. */
  onOutput?: (text: string) => void;
}

/** What an interrupted command throws (the same class as ToolInterruptedError): its output so far travels with it. */
export { ToolInterruptedError as CommandInterrupted };

// What commands start from and which secrets they may name is the env policy's; re-exported for older imports.
export { commandBaseEnv, namedSecrets };

/** A command left running after an observation (soft timeout), reachable with is_input. */
interface RunningCommand {
  command: string;
  startedAt: number;
  pid: number | undefined;
  proc: SpawnedCommand;
  stateDir: string;
  startState: TerminalState;
  envBase: Record<string, string>;
  output: OutputBuffer;
  lastOutputAt: number;
  exitCode: Promise<number>;
  outputEnded: Promise<void>;
  /** The live view of the call observing the command now (a later is_input call takes over). */
  onOutput?: ((text: string) => void) | undefined;
}

// Commands still running, by conversation. Lives in this worker process: the conversation's tool
// task queue brings its next terminal call back to this host (see README on one tool worker a host).
const running = new Map<string, RunningCommand>();

const KEYS: Record<string, string> = {
  Enter: '\n',
  Tab: '\t',
  Escape: '\x1b',
  Up: '\x1b[A',
  Down: '\x1b[B',
  Right: '\x1b[C',
  Left: '\x1b[D',
};

/** Runs a terminal call from the model's raw arguments (checked here: an invalid call is reported, not run). */
export async function runTerminal(rawArgs: unknown, state: TerminalState, ctx: TerminalContext): Promise<TerminalResult> {
  const parsed = TerminalArgs.safeParse(rawArgs);
  if (!parsed.success) return { content: describeInvalid('terminal', parsed.error), isError: true, terminal: state };
  return runTerminalCall(parsed.data, state, ctx);
}

/** Runs a terminal call whose arguments TerminalArgs has already checked (the tool's own schema, in runTool). */
export async function runTerminalCall(
  args: z.output<typeof TerminalArgs>,
  state: TerminalState,
  ctx: TerminalContext,
): Promise<TerminalResult> {
  const key = ctx.session ?? ctx.workspace;
  let current = running.get(key);
  const idleState: TerminalState = { cwd: state.cwd, env: state.env };

  if (args.reset) {
    const stopped = await stopSessionCommand(key);
    return {
      content: `The terminal was reset${stopped ? ' (the running command was stopped)' : ''}: working directory is the workspace, exported variables cleared.`,
      isError: false,
      terminal: { cwd: ctx.workspace, env: {} },
    };
  }
  if (args.is_input) {
    if (!current) {
      if (state.running) {
        return {
          content: `The command \`${state.running.command}\` was left running by a worker that has since stopped; it can no longer be reached. Its effects are unknown: check before running it again.`,
          isError: true,
          terminal: idleState,
        };
      }
      return { content: 'No command is running, so there is nothing to send input to.', isError: true, terminal: state };
    }
    sendInput(current, args.command);
  } else {
    if (current) {
      return {
        content: `The command \`${current.command}\` is still running (started ${Math.round((Date.now() - current.startedAt) / 1000)} s ago). Send input with is_input (text, or keys such as C-c to interrupt), wait with is_input and an empty command, or reset the terminal.`,
        isError: true,
        terminal: state,
      };
    }
    if (args.command.trim() === '') return { content: 'The command is empty.', isError: true, terminal: state };
    current = await start(args.command, idleState, ctx);
    running.set(key, current);
  }
  return observe(key, current, ctx, args.timeout);
}

/**
 * Stops the command conversation `session` has running in this worker (one left running past its soft
 * timeout, or one a call observes now): its whole process group, so, sandboxed, everything in its
 * sandbox. Whether there was one. Its conversation is stopping everything it started (a pause --now,
 * its close or end, hibernation, a lost host: see stopConversationProcesses).
 */
export async function stopSessionCommand(session: string): Promise<boolean> {
  const current = running.get(session);
  if (!current) return false;
  running.delete(session);
  await killGroup(current.pid);
  await rm(current.stateDir, { recursive: true, force: true });
  return true;
}

async function start(command: string, state: TerminalState, ctx: TerminalContext): Promise<RunningCommand> {
  const baseEnv = ctx.baseEnv;
  const mentioned = Object.fromEntries(Object.entries(ctx.secretEnv ?? {}).filter(([name]) => new RegExp(`\\b${name}\\b`).test(command)));
  const stateDir = await mkdtemp(path.join(tmpdir(), 'faheem-term-'));
  // Sandboxed, the command sees its state directory (to leave its cwd and env there) and, read-only,
  // this conversation's full outputs (the observations name those files); nothing else of the worker's.
  const binds: { path: string; readOnly?: boolean }[] = [{ path: stateDir }];
  if (ctx.sandbox && ctx.outputDir) {
    await mkdir(ctx.outputDir, { recursive: true });
    binds.push({ path: ctx.outputDir, readOnly: true });
  }
  // The conversation's kept network (kept-network.ts); none to be had: the command makes its own.
  const lease = await leaseNetwork(ctx.sandbox, ctx.session, ctx.spawnHelper);
  // Started by the spawn helper, so this (large) worker does not fork for every command.
  let proc: SpawnedCommand;
  try {
    // --norc: a bash whose stdin is a socket (as a child's pipes are, from Node) and whose SHLVL is
    // unset or 0 (a worker started by systemd, a container) would read ~/.bashrc first, taking its
    // time (a pyenv init there made each command take seconds) and changing what commands see.
    const shell = sandboxedCommand(
      ctx.sandbox,
      { workspace: ctx.workspace, hide: ctx.sandboxHide ?? [], binds, ...(lease ? { keptNetwork: lease.network } : {}) },
      'bash',
      ['--norc', '--noprofile', '-c', WRAPPER],
      {
        ...baseEnv,
        ...state.env,
        ...mentioned,
        __FAHEEM_CMD: command,
        __FAHEEM_STATE: stateDir,
        __FAHEEM_WS: ctx.workspace,
        __FAHEEM_CWD: state.cwd,
      },
    );
    proc = await spawnCommand(
      shell.file,
      shell.args,
      {
        cwd: ctx.workspace,
        env: shell.env,
        detached: true, // its own process group (and, sandboxed, PID namespace): everything it started stops together
      },
      ctx.spawnHelper,
    );
  } catch (err) {
    lease?.release();
    await rm(stateDir, { recursive: true, force: true });
    throw err;
  }
  void proc.exited.then(() => lease?.release());
  const rc: RunningCommand = {
    command,
    startedAt: Date.now(),
    pid: proc.pid,
    proc,
    stateDir,
    startState: state,
    envBase: { ...baseEnv, ...mentioned },
    output: new OutputBuffer(MAX_OUTPUT_CHARS),
    lastOutputAt: Date.now(),
    exitCode: proc.exited.then(({ code, signal, error }) => {
      if (error === undefined) return code ?? 128 + signalNumber(signal);
      rc.output.push(`\n[${error}]\n`);
      return -1;
    }),
    outputEnded: new Promise<void>((resolve) => {
      proc.output.once('end', resolve);
      proc.output.once('close', resolve);
    }),
  };
  proc.output.on('data', (chunk: string) => {
    rc.output.push(chunk);
    rc.lastOutputAt = Date.now();
    try {
      rc.onOutput?.(chunk);
    } catch {
      // A broken live view must not break the command.
    }
  });
  return rc;
}

function sendInput(rc: RunningCommand, input: string): void {
  if (input === '') return; // just wait for more output
  if (input === 'C-c') {
    if (rc.pid) process.kill(-rc.pid, 'SIGINT');
  } else if (input === 'C-d') {
    rc.proc.endInput();
  } else if (input === 'C-z') {
    if (rc.pid) process.kill(-rc.pid, 'SIGTSTP');
  } else if (/^C-[a-z]$/.test(input)) {
    rc.proc.write(String.fromCharCode(input.charCodeAt(2) - 96));
  } else {
    rc.proc.write(KEYS[input] ?? `${input}\n`);
  }
  rc.lastOutputAt = Date.now(); // the soft timeout counts from the input
}

/** Waits until the command exits, goes quiet (soft timeout), hits its hard timeout, or is aborted. */
async function observe(key: string, rc: RunningCommand, ctx: TerminalContext, timeoutS: number | undefined): Promise<TerminalResult> {
  rc.onOutput = ctx.onOutput;
  try {
    return await observeCommand(key, rc, ctx, timeoutS);
  } finally {
    if (rc.onOutput === ctx.onOutput) rc.onOutput = undefined;
  }
}

async function observeCommand(
  key: string,
  rc: RunningCommand,
  ctx: TerminalContext,
  timeoutS: number | undefined,
): Promise<TerminalResult> {
  const softMs = ctx.softTimeoutMs ?? DEFAULT_SOFT_TIMEOUT_MS;
  const hardAt = timeoutS !== undefined ? Date.now() + timeoutS * 1000 : Infinity;
  const reportBy = Date.now() + MAX_OBSERVE_MS;
  let exited: number | undefined;
  void rc.exitCode.then((code) => (exited = code));
  let outcome: 'exit' | 'quiet' | 'timeout' | 'interrupt' = 'exit';
  for (;;) {
    await Promise.race([rc.exitCode, new Promise((r) => setTimeout(r, 50))]);
    if (exited !== undefined) break;
    if (ctx.signal?.aborted) {
      outcome = 'interrupt';
      break;
    }
    if (Date.now() >= hardAt) {
      outcome = 'timeout';
      break;
    }
    if (Date.now() - rc.lastOutputAt >= softMs || Date.now() >= reportBy) {
      outcome = 'quiet';
      break;
    }
  }

  if (outcome === 'quiet') {
    const text = await rc.output.render(ctx.outputDir, ctx.secrets ?? []);
    rc.output = new OutputBuffer(MAX_OUTPUT_CHARS);
    return {
      content:
        `${text}${text.endsWith('\n') || !text ? '' : '\n'}[The command is still running (${Date.now() >= reportBy ? `after ${MAX_OBSERVE_MS / 1000} s` : `no new output for ${Math.round(softMs / 1000)} s`}). ` +
        'Send input with is_input (text, or keys such as C-c, C-d, Enter), wait with is_input and an empty command, or reset the terminal.]',
      isError: false,
      exitCode: -1,
      terminal: { ...rc.startState, running: { command: rc.command, startedAt: new Date(rc.startedAt).toISOString() } },
    };
  }

  // Unless stopped meanwhile (stopSessionCommand), and another command of the conversation started since.
  if (running.get(key) === rc) running.delete(key);
  if (outcome === 'interrupt' || outcome === 'timeout') await killGroup(rc.pid);
  const exitCode = await rc.exitCode;
  // Background jobs may keep the pipe open: give the output a moment, then stop reading.
  let grace: NodeJS.Timeout | undefined;
  await Promise.race([rc.outputEnded, new Promise((r) => (grace = setTimeout(r, 200)))]);
  clearTimeout(grace);
  rc.proc.destroyOutput();
  try {
    const text = await rc.output.render(ctx.outputDir, ctx.secrets ?? []);
    if (outcome === 'interrupt') throw new ToolInterruptedError(text);
    const secretValues = [...(ctx.secrets ?? []), ...Object.values(ctx.secretEnv ?? {})];
    const terminal = await readShellState(rc.stateDir, rc.startState, rc.envBase, secretValues);
    if (outcome === 'timeout') {
      return {
        content: `${text}\n[The command was stopped after ${timeoutS} s (its timeout); pass a larger "timeout" if it needs longer.]`,
        isError: true,
        exitCode: -1,
        terminal,
      };
    }
    const where = terminal.cwd !== rc.startState.cwd ? `; working directory is now ${terminal.cwd}` : '';
    return {
      content: `${text}${text.endsWith('\n') || !text ? '' : '\n'}[The command exited with code ${exitCode}${where}.]`,
      isError: false,
      exitCode,
      terminal,
    };
  } finally {
    await rm(rc.stateDir, { recursive: true, force: true });
  }
}

async function readShellState(
  stateDir: string,
  previous: TerminalState,
  baseEnv: Record<string, string>,
  secrets: readonly string[],
): Promise<TerminalState> {
  const [cwdText, raw] = await Promise.all([
    readStateFile(path.join(stateDir, 'cwd')).catch(() => ''),
    readStateFile(path.join(stateDir, 'env')).catch(() => undefined),
  ]);
  const cwd = cwdText.trim() || previous.cwd;
  if (raw === undefined) return { cwd, env: previous.env };
  const env: Record<string, string> = {};
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const key = entry.slice(0, eq);
    const value = entry.slice(eq + 1);
    // Keep only what the conversation changed; bash's own bookkeeping and secrets stay out.
    if (['_', 'SHLVL', 'PWD', 'OLDPWD'].includes(key) || key.startsWith('__FAHEEM') || isSecretName(key)) continue;
    if (secrets.some((secret) => secret && value.includes(secret))) continue; // durable state holds no secret
    if (baseEnv[key] !== value) env[key] = value;
  }
  return { cwd, env };
}

const MAX_STATE_FILE = 4_000_000;

/**
 * A file the command wrote into its state directory. The command could have put a symlink (to a file
 * the sandbox hides) or something huge there: only a plain file, not followed, and only so much.
 */
async function readStateFile(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_STATE_FILE) throw new Error(`${file} is not a plain file of a sensible size`);
    const buf = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const table: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return signal ? (table[signal] ?? 0) : 0;
}

/** The most of a command's output kept for its full-output file. */
const MAX_SPILL_CHARS = 50_000_000;

/**
 * Keeps the head and the tail of a long output in memory; the full text goes to a file. Both are
 * masked like the observation: the file (which a sandboxed command can read) as a whole, the head
 * and tail as pieces cut out of it (so a secret the cut went through leaves no part of itself).
 */
export class OutputBuffer {
  private head = '';
  private tail = '';
  private total = 0;
  private spill: string[] = [];
  private spilled = 0;
  constructor(private readonly limit: number) {}

  push(chunk: string): void {
    this.total += chunk.length;
    if (this.spilled < MAX_SPILL_CHARS) {
      this.spill.push(chunk);
      this.spilled += chunk.length;
    }
    const half = this.limit / 2;
    if (this.head.length < half) {
      const take = chunk.slice(0, half - this.head.length);
      this.head += take;
      chunk = chunk.slice(take.length);
    }
    if (chunk) this.tail = (this.tail + chunk).slice(-half);
  }

  /** The output as the model reads it, with `secrets` masked; a long one is cut, and kept whole (masked) in a file under `outputDir`. */
  async render(outputDir: string | undefined, secrets: readonly string[]): Promise<string> {
    if (this.total <= this.limit) {
      const text = this.head + this.tail;
      this.spill = [];
      return redact(text, secrets);
    }
    let where = '';
    if (outputDir) {
      await mkdir(outputDir, { recursive: true });
      const file = path.join(outputDir, `output-${Date.now()}.log`);
      const full = this.spill.join('');
      await writeFile(file, redactPiece(full, secrets, { after: full.length < this.total }));
      where = ` The full output is in ${file}.`;
    }
    this.spill = [];
    const omitted = this.total - this.head.length - this.tail.length;
    const head = redactPiece(this.head, secrets, { after: true });
    const tail = redactPiece(this.tail, secrets, { before: true });
    return `${head}\n[… ${omitted} characters omitted: the output had ${this.total} characters and only the first and last ${this.limit / 2} are shown.${where}]\n${tail}`;
  }
}
