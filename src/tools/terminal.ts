// The terminal tool: each command runs in a fresh bash that starts from the conversation's durable
// shell state (cwd + exported variables) and hands back the state it ended in. Nothing lives in the
// worker between commands, so any worker, on restart, continues the same shell.
import { execa } from 'execa';
import { mkdtemp, readFile, rm, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isSecretName, redact } from '../security/redact.js';
import type { TerminalResult, TerminalState } from '../types.js';
import { describeInvalid, TerminalArgs } from './schemas.js';

export const MAX_OUTPUT_CHARS = 30_000;
const DEFAULT_TIMEOUT_S = 120;

// Reads the command from a variable (so a syntax error in it is reported, not fatal to the
// wrapper) and records cwd and environment on every way out, `exit` included.
const WRAPPER = `
__faheem_cmd=$__FAHEEM_CMD; __faheem_state=$__FAHEEM_STATE; __faheem_ws=$__FAHEEM_WS; __faheem_cwd=$__FAHEEM_CWD
unset __FAHEEM_CMD __FAHEEM_STATE __FAHEEM_WS __FAHEEM_CWD
cd -- "$__faheem_cwd" 2>/dev/null || { echo "[note: $__faheem_cwd no longer exists; running in the workspace]"; cd -- "$__faheem_ws"; }
trap '__faheem_ec=$?; pwd > "$__faheem_state/cwd"; env -0 > "$__faheem_state/env"; exit $__faheem_ec' EXIT
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
  /** The environment commands start from (the worker's, minus secrets). */
  baseEnv?: Record<string, string>;
  /** Secrets by name: exported to a command only when it mentions the name; never kept in state. */
  secretEnv?: Record<string, string>;
}

/** Secrets the worker was given as FAHEEM_SECRET_<NAME>=value, by NAME. */
export function namedSecrets(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith('FAHEEM_SECRET_') && v) out[k.slice('FAHEEM_SECRET_'.length)] = v;
  return out;
}

export class CommandInterrupted extends Error {
  constructor(readonly partialOutput: string) {
    super('command interrupted');
  }
}

/** The worker's environment without its secrets: commands never see the LLM key. */
export function commandBaseEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !isSecretName(k) && !k.startsWith('LLM_') && !k.startsWith('TEMPORAL_')) out[k] = v;
  }
  return out;
}

export async function runTerminal(rawArgs: unknown, state: TerminalState, ctx: TerminalContext): Promise<TerminalResult> {
  const parsed = TerminalArgs.safeParse(rawArgs);
  if (!parsed.success) return { content: describeInvalid('terminal', parsed.error), isError: true, terminal: state };
  const args = parsed.data;
  if (args.reset) {
    return { content: 'The terminal was reset: working directory is the workspace, exported variables cleared.', isError: false, terminal: { cwd: ctx.workspace, env: {} } };
  }
  if (args.is_input) {
    return {
      content: 'No command is running, so there is nothing to send input to. Each command runs to completion (or its timeout); run the command again with the input piped in, e.g. `printf "y\\n" | cmd`.',
      isError: true,
      terminal: state,
    };
  }
  if (args.command.trim() === '') return { content: 'The command is empty.', isError: true, terminal: state };

  const baseEnv = ctx.baseEnv ?? commandBaseEnv();
  const mentioned = Object.fromEntries(
    Object.entries(ctx.secretEnv ?? {}).filter(([name]) => new RegExp(`\\b${name}\\b`).test(args.command)),
  );
  const startEnv = { ...baseEnv, ...state.env, ...mentioned };
  const stateDir = await mkdtemp(path.join(tmpdir(), 'faheem-term-'));
  const output = new OutputBuffer(MAX_OUTPUT_CHARS);
  const timeoutMs = (args.timeout ?? DEFAULT_TIMEOUT_S) * 1000;

  const child = execa('bash', ['-c', WRAPPER], {
    cwd: ctx.workspace,
    env: { ...startEnv, __FAHEEM_CMD: args.command, __FAHEEM_STATE: stateDir, __FAHEEM_WS: ctx.workspace, __FAHEEM_CWD: state.cwd },
    extendEnv: false,
    stdin: 'ignore',
    all: true,
    buffer: false,
    reject: false,
    detached: true, // its own process group, so that everything it started can be stopped together
  });
  child.all?.setEncoding('utf8');
  child.all?.on('data', (chunk: string) => output.push(chunk));
  const outputEnded = new Promise<void>((resolve) => {
    child.all?.once('end', resolve);
    child.all?.once('close', resolve);
  });

  let stopReason: 'timeout' | 'interrupt' | undefined;
  const stop = (reason: 'timeout' | 'interrupt') => {
    if (stopReason) return;
    stopReason = reason;
    void killGroup(child.pid);
  };
  const timer = setTimeout(() => stop('timeout'), timeoutMs);
  const onAbort = () => stop('interrupt');
  ctx.signal?.addEventListener('abort', onAbort);
  if (ctx.signal?.aborted) onAbort();

  try {
    const exitCode = await new Promise<number>((resolve) => {
      child.on('exit', (code, signal) => resolve(code ?? 128 + signalNumber(signal)));
      child.catch(() => undefined);
    });
    // Background jobs may keep the pipe open: give the output a moment, then stop reading.
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([outputEnded, new Promise((r) => (grace = setTimeout(r, 200)))]);
    clearTimeout(grace);
    child.all?.destroy();

    const text = redact(await output.render(ctx.outputDir), ctx.secrets ?? []);
    if (stopReason === 'interrupt') throw new CommandInterrupted(text);
    const secretValues = [...(ctx.secrets ?? []), ...Object.values(ctx.secretEnv ?? {})];
    const terminal = await readShellState(stateDir, state, { ...baseEnv, ...mentioned }, secretValues);
    if (stopReason === 'timeout') {
      return {
        content: `${text}\n[The command was stopped after ${timeoutMs / 1000} s (its timeout); pass a larger "timeout" if it needs longer.]`,
        isError: true,
        exitCode: -1,
        terminal,
      };
    }
    const where = terminal.cwd !== state.cwd ? `; working directory is now ${terminal.cwd}` : '';
    return { content: `${text}${text.endsWith('\n') || !text ? '' : '\n'}[The command exited with code ${exitCode}${where}.]`, isError: false, exitCode, terminal };
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener('abort', onAbort);
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** Interrupt, then terminate, then kill the whole process group, with short graces between. */
async function killGroup(pid: number | undefined): Promise<void> {
  if (!pid) return;
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const [sig, graceMs] of [['SIGINT', 300], ['SIGTERM', 1000], ['SIGKILL', 0]] as const) {
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

async function readShellState(
  stateDir: string,
  previous: TerminalState,
  baseEnv: Record<string, string>,
  secrets: readonly string[],
): Promise<TerminalState> {
  const cwd = (await readFile(path.join(stateDir, 'cwd'), 'utf8').catch(() => '')).trim() || previous.cwd;
  const raw = await readFile(path.join(stateDir, 'env'), 'utf8').catch(() => undefined);
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

function signalNumber(signal: NodeJS.Signals | null): number {
  const table: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return signal ? (table[signal] ?? 0) : 0;
}

/** Keeps the head and the tail of a long output in memory; the full text goes to a file. */
class OutputBuffer {
  private head = '';
  private tail = '';
  private total = 0;
  private spill: string[] = [];
  private spilled = 0;
  constructor(private readonly limit: number) {}

  push(chunk: string): void {
    this.total += chunk.length;
    if (this.spilled < 50_000_000) {
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

  async render(outputDir: string | undefined): Promise<string> {
    if (this.total <= this.limit) {
      const text = this.head + this.tail;
      this.spill = [];
      return text;
    }
    let where = '';
    if (outputDir) {
      await mkdir(outputDir, { recursive: true });
      const file = path.join(outputDir, `output-${Date.now()}.log`);
      await writeFile(file, this.spill.join(''));
      where = ` The full output is in ${file}.`;
    }
    this.spill = [];
    const omitted = this.total - this.head.length - this.tail.length;
    return `${this.head}\n[… ${omitted} characters omitted: the output had ${this.total} characters and only the first and last ${this.limit / 2} are shown.${where}]\n${this.tail}`;
  }
}
