// Runs hooks on the workspace's host: each command hook with `bash -c` in the workspace (under the
// worker's sandbox when it has one, through the same path as a tool's ctx.exec), the event as JSON
// on stdin, the worker's environment without its secrets, a timeout that stops the hook and all it
// started; then the worker's own TypeScript hooks. Turns what they did into one decision.
import { redact } from '../security/redact.js';
import { execInWorkspace, hiddenDirs, type Sandbox } from '../sandbox/sandbox.js';
import { leaseNetwork } from '../sandbox/kept-network.js';
import { commandBaseEnv } from '../tools/terminal.js';
import { DEFAULT_HOOK_TIMEOUT_S, HOOK_EVENTS, type CommandHook, type HookEventName } from './config.js';
import {
  clipText,
  combineDecisions,
  decideAnswer,
  decideHook,
  hookLabel,
  type HookAnswer,
  type HookDecision,
  type HookOutcome,
} from './decision.js';
import type { HookEvent, HookEventOf, HookRunRecord, RunHooksInput, RunHooksResult } from './event.js';
import type { ChildEnv } from '../environment.js';

/** Each hook's stdout and stderr in a {@link HookRunRecord}: at most this many characters. */
export const MAX_RECORD_OUTPUT_CHARS = 2000;

/** What a worker's TypeScript hook gets besides the event. */
export interface WorkerHookContext {
  conversationId: string;
  /** The workspace, an absolute path on this host. */
  workspace: string;
  /** Aborted when the hook runs past its timeout or the activity is cancelled. */
  signal: AbortSignal;
}

/**
 * A TypeScript hook: gets the event (the same JSON a command hook reads) and answers. Returning
 * nothing means no objection; a thrown error, or an answer past its timeout, is a failure (which lets
 * the action through unless `onFailure: 'block'`). It runs in the worker process, unsandboxed.
 */
export type WorkerHookFn<E extends HookEventName = HookEventName> = (
  event: HookEventOf<E>,
  ctx: WorkerHookContext,
) => HookAnswer | Promise<HookAnswer>;

/** A TypeScript hook with options. */
export interface WorkerHookSpec<E extends HookEventName = HookEventName> {
  run: WorkerHookFn<E>;
  /** Seconds before it counts as failed; default 60. */
  timeout?: number;
  /** `block`: its failure blocks; default `allow` (reported as an error, the action goes on). */
  onFailure?: 'block' | 'allow';
}

/**
 * The TypeScript hooks of a worker (`createWorker({ hooks })`), by event: a function, a
 * {@link WorkerHookSpec}, or a list of them. They run, in order, after the conversation's command
 * hooks for the same event, in every conversation whose tools run on this worker. They have no
 * matcher: look at `event.tool_name` yourself.
 *
 * ```ts
 * createWorker({ hooks: { PreToolUse: (e) => (e.tool_name === 'terminal' && /rm -rf/.test(String(e.tool_input.command))
 *   ? { decision: 'deny', reason: 'no rm -rf here' } : undefined) } });
 * ```
 */
export type WorkerHooks = {
  [E in HookEventName]?: WorkerHookFn<E> | WorkerHookSpec<E> | ReadonlyArray<WorkerHookFn<E> | WorkerHookSpec<E>>;
};

/** The events a worker has TypeScript hooks for (what prepareTools reports as `hookEvents`). */
export function workerHookEvents(hooks: WorkerHooks | undefined): HookEventName[] {
  return HOOK_EVENTS.filter((e) => workerHookList(hooks, e).length > 0);
}

/** Checks a worker's hooks when the worker is made; throws on an unknown event or a non-function. */
export function checkWorkerHooks(hooks: unknown): WorkerHooks | undefined {
  if (hooks === undefined) return undefined;
  if (typeof hooks !== 'object' || hooks === null) throw new TypeError('createWorker: hooks must be an object of hook functions by event');
  for (const [name, value] of Object.entries(hooks)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(name)) {
      throw new TypeError(`createWorker: "${name}" is not a hook event; the known events are ${HOOK_EVENTS.join(', ')}`);
    }
    for (const h of Array.isArray(value) ? value : [value]) {
      const fn = typeof h === 'function' ? h : (h as { run?: unknown } | null)?.run;
      if (typeof fn !== 'function') throw new TypeError(`createWorker: hooks.${name} must be a function, { run }, or a list of them`);
    }
  }
  return hooks as WorkerHooks;
}

function workerHookList(hooks: WorkerHooks | undefined, event: HookEventName): WorkerHookSpec[] {
  const value = hooks?.[event] as WorkerHookFn | WorkerHookSpec | readonly (WorkerHookFn | WorkerHookSpec)[] | undefined;
  if (!value) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((h) => (typeof h === 'function' ? { run: h } : h) as WorkerHookSpec);
}

/** What running hooks needs from the worker. */
export interface HookRunnerDeps {
  /** The worker's environment; hooks start from its allow-listed part, without secrets. */
  env: ChildEnv;
  /** Run command hooks under this sandbox (default: unsandboxed). */
  sandbox?: Sandbox;
  /** Values masked in records, reasons, context and errors. */
  secretValues?: readonly string[];
  /** The worker's TypeScript hooks. */
  workerHooks?: WorkerHooks;
}

/** One command hook's outcome and how long it took. */
export interface CommandHookRun {
  outcome: HookOutcome;
  durationMs: number;
}

/**
 * Runs one command hook: `bash --norc --noprofile -c <command>` in the workspace with the event as
 * JSON on stdin, stopped with everything it started after its timeout (default 60 s) or when
 * `signal` aborts (then this rejects). `baseEnv` is what it starts from (commandBaseEnv: no secrets).
 */
export async function runCommandHook(
  hook: CommandHook,
  event: HookEvent,
  options: {
    workspace: string;
    baseEnv: Record<string, string>;
    sandbox?: Sandbox;
    hide?: readonly string[];
    signal?: AbortSignal;
    /** The conversation: its hooks run in its kept network, as its commands do (kept-network.ts). */
    conversationId?: string;
  },
): Promise<CommandHookRun> {
  const started = Date.now();
  const lease = await leaseNetwork(options.sandbox, options.conversationId);
  // --norc: a bash whose stdin is a socket would read ~/.bashrc first (see terminal.ts).
  const r = await execInWorkspace('bash', ['--norc', '--noprofile', '-c', hook.command], {
    workspace: options.workspace,
    sandbox: options.sandbox,
    baseEnv: options.baseEnv,
    env: { FAHEEM_PROJECT_DIR: options.workspace, CLAUDE_PROJECT_DIR: options.workspace },
    hide: options.hide ?? [],
    input: `${JSON.stringify(event)}\n`,
    timeoutMs: (hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(lease ? { keptNetwork: lease.network } : {}),
  }).finally(() => lease?.release());
  const outcome: HookOutcome = { exitCode: r.timedOut ? null : r.exitCode, stdout: r.stdout, stderr: r.stderr };
  if (r.timedOut) outcome.timedOut = true;
  return { outcome, durationMs: Date.now() - started };
}

/** Runs one TypeScript hook with its timeout; what it answered or threw. */
async function runWorkerHook(
  spec: WorkerHookSpec,
  event: HookEvent,
  input: RunHooksInput,
  signal: AbortSignal | undefined,
): Promise<{ answer?: unknown; thrown?: string; timedOut: boolean; durationMs: number }> {
  const started = Date.now();
  const timeoutMs = (spec.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000;
  const own = new AbortController();
  const onAbort = () => own.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    // structuredClone: a hook that changes the event changes nothing of the conversation's.
    const call = Promise.resolve().then(() =>
      spec.run(structuredClone(event) as never, { conversationId: input.conversationId, workspace: input.workspace, signal: own.signal }),
    );
    const result = await Promise.race([call.then((answer) => ({ answer })), timedOut]);
    if (result === 'timeout') {
      own.abort(new Error('hook timed out'));
      call.catch(() => undefined);
      return { timedOut: true, durationMs: Date.now() - started };
    }
    return { answer: result.answer, timedOut: false, durationMs: Date.now() - started };
  } catch (err) {
    return { thrown: (err as Error)?.message ?? String(err), timedOut: false, durationMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Runs the command hooks of `input` (in parallel, as Claude Code does) and then the worker's
 * TypeScript hooks for the event (in order), and combines their decisions (config order first).
 * Rejects only when `signal` aborts (the activity was cancelled); every hook failure is a decision.
 */
export async function executeHooks(input: RunHooksInput, deps: HookRunnerDeps, signal?: AbortSignal): Promise<RunHooksResult> {
  const env = deps.env;
  const secrets = deps.secretValues ?? [];
  const mask = (text: string) => redact(text, secrets);
  const event = input.event;
  const name = event.hook_event_name;
  const baseEnv = commandBaseEnv(env);
  const hide = deps.sandbox ? hiddenDirs(env) : [];

  const runs = await Promise.all(
    input.hooks.map((hook) =>
      runCommandHook(hook, event, {
        workspace: input.workspace,
        baseEnv,
        hide,
        conversationId: input.conversationId,
        ...(deps.sandbox ? { sandbox: deps.sandbox } : {}),
        ...(signal ? { signal } : {}),
      }),
    ),
  );
  const decisions: HookDecision[] = [];
  const outcomes: HookRunRecord[] = [];
  input.hooks.forEach((hook, i) => {
    const { outcome, durationMs } = runs[i]!;
    const d = decideHook(name, hook, outcome);
    decisions.push(d);
    outcomes.push({
      type: 'command',
      hook: mask(hookLabel(hook.command)),
      exitCode: outcome.exitCode,
      durationMs,
      timedOut: outcome.timedOut === true,
      stdout: mask(clipText(outcome.stdout, MAX_RECORD_OUTPUT_CHARS)),
      stderr: mask(clipText(outcome.stderr, MAX_RECORD_OUTPUT_CHARS)),
      decision: d.kind,
      ...(d.errors.length ? { error: mask(d.errors.join('\n')) } : {}),
    });
  });

  const specs = workerHookList(deps.workerHooks, name);
  for (const [i, spec] of specs.entries()) {
    if (signal?.aborted) break;
    const label = `worker hook ${name}[${i}]`;
    const identity = {
      command: label,
      ...(spec.timeout !== undefined ? { timeout: spec.timeout } : {}),
      ...(spec.onFailure ? { onFailure: spec.onFailure } : {}),
    };
    const r = await runWorkerHook(spec, event, input, signal);
    const d = r.timedOut
      ? decideHook(name, identity, { exitCode: null, stdout: '', stderr: '', timedOut: true })
      : decideAnswer(name, identity, r.answer, r.thrown);
    decisions.push(d);
    outcomes.push({
      type: 'function',
      hook: label,
      exitCode: null,
      durationMs: r.durationMs,
      timedOut: r.timedOut,
      stdout: r.answer === undefined ? '' : mask(clipText(safeJson(r.answer), MAX_RECORD_OUTPUT_CHARS)),
      stderr: '',
      decision: d.kind,
      ...(d.errors.length ? { error: mask(d.errors.join('\n')) } : {}),
    });
  }
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('the hooks were interrupted');

  const decision = combineDecisions(decisions);
  return { decision: maskDecision(decision, mask), outcomes };
}

function maskDecision(d: HookDecision, mask: (t: string) => string): HookDecision {
  return {
    ...d,
    ...(d.reason !== undefined ? { reason: mask(d.reason) } : {}),
    ...(d.context !== undefined ? { context: mask(d.context) } : {}),
    ...(d.stop !== undefined ? { stop: mask(d.stop) } : {}),
    errors: d.errors.map(mask),
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
