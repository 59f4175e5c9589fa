// From what a hook did (exit code, output, timeout, crash) to what happens next, per Claude Code's
// contract, and from several hooks' decisions to one. Pure (zod only, no Node imports): plain data
// in, plain data out, so the workflow may use it too.
import { z } from 'zod';
import { DEFAULT_HOOK_TIMEOUT_S, type HookEventName } from './config.js';

/** What running one hook came to; the input of {@link decideHook}. */
export interface HookOutcome {
  /** Its exit code; null when it did not exit by itself (timed out, killed by a signal, never started). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** It ran past its timeout and was stopped. */
  timedOut?: boolean;
  /** It could not be started, or crashed (a signal, a thrown error for a function hook): what happened. */
  error?: string;
}

/**
 * What the hooks of one event decided; the workflow switches on `kind`.
 * - `allow`: go on as usual (no hook objected). `allowed` says a PreToolUse hook explicitly allowed the
 *   call (`permissionDecision: "allow"` or the older `decision: "approve"`), which in Claude Code skips
 *   the permission prompt.
 * - `ask` (PreToolUse only): the call waits for a person's approval, `reason` saying why.
 * - `block`: PreToolUse: the tool does not run and the model reads `reason`; PostToolUse: the model
 *   reads `reason` (the tool already ran); UserPromptSubmit: the message is refused with `reason`;
 *   Stop: the agent is told `reason` and goes on; SessionStart: Claude Code cannot block a session's
 *   start (it shows the reason to the user), and the workflow may do the same.
 */
export interface HookDecision {
  kind: 'allow' | 'ask' | 'block';
  /** Why (for `block` and `ask`; for `allow`, the reasons an explicit allow gave, if any). */
  reason?: string;
  /** A PreToolUse hook explicitly allowed the call. */
  allowed?: boolean;
  /** PreToolUse: the arguments the tool runs with instead of the model's (the last hook's that gave some). */
  updatedInput?: Record<string, unknown>;
  /**
   * Text for the model: a UserPromptSubmit or SessionStart hook's plain stdout on exit 0, or any
   * hook's `hookSpecificOutput.additionalContext` (PostToolUse: about the tool's result).
   */
  context?: string;
  /** A hook answered `"continue": false`: the run should stop after this event; the text is its `stopReason`. */
  stop?: string;
  /** Hooks that failed (crashed, timed out, non-zero exit other than 2, unreadable output): one readable line each. */
  errors: string[];
}

/** What a TypeScript hook on a worker (`createWorker({ hooks })`) returns; nothing means "no objection". */
export type HookAnswer =
  | void
  | undefined
  | {
      /** `block` / `deny` (the same): refuse with `reason`; `ask` (PreToolUse): ask a person; `allow`: explicitly allow. */
      decision?: 'allow' | 'ask' | 'block' | 'deny';
      reason?: string;
      /** PreToolUse: run the tool with these arguments instead. */
      updatedInput?: Record<string, unknown>;
      /** Text added for the model (see {@link HookDecision.context}). */
      context?: string;
    };

/** Which hook a decision came from, for the messages. */
export interface HookIdentity {
  /** The command line, or a function hook's label (`worker hook PreToolUse[0]`). */
  command: string;
  /** Seconds it was given (for the timeout message); default 60. */
  timeout?: number;
  onFailure?: 'block' | 'allow';
}

/** Reasons and context reach the model and workflow history: at most this many characters each. */
export const MAX_HOOK_TEXT_CHARS = 10_000;

/** A text cut to `max` characters, keeping its head and tail. */
export function clipText(text: string, max = MAX_HOOK_TEXT_CHARS): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters cut …]\n${text.slice(-half)}`;
}

/** How a hook is named in messages: its command line, shortened to one line. */
export function hookLabel(command: string): string {
  const line = command.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

const HookJsonOutput = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  decision: z.enum(['block', 'approve']).optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
});

const WorkerAnswer = z
  .strictObject({
    decision: z.enum(['allow', 'ask', 'block', 'deny']).optional(),
    reason: z.string().optional(),
    updatedInput: z.record(z.string(), z.unknown()).optional(),
    context: z.string().optional(),
  })
  .optional()
  .nullable();

const CONTEXT_EVENTS: readonly HookEventName[] = ['UserPromptSubmit', 'SessionStart'];

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'the output'}: ${i.message}`).join('; ');
}

/** A failure: reported in `errors`; blocks only when the hook says `onFailure: "block"`. */
function failure(hook: HookIdentity, message: string): HookDecision {
  const text = clipText(`The hook \`${hookLabel(hook.command)}\` ${message}`);
  if (hook.onFailure === 'block') {
    return { kind: 'block', reason: `${text} (it is set to block when it fails)`, errors: [text] };
  }
  return { kind: 'allow', errors: [text] };
}

const firstLines = (text: string) => clipText(text.trim(), 2000);

/**
 * One hook's decision from its outcome, per Claude Code's contract:
 * - exit code 2 blocks, stderr being the reason;
 * - exit code 0 with a JSON object on stdout: `{"decision": "block", "reason"}` blocks;
 *   PreToolUse's `{"hookSpecificOutput": {"permissionDecision": "allow" | "deny" | "ask",
 *   "permissionDecisionReason", "updatedInput"}}` allows, blocks or asks (and changes the arguments);
 *   `hookSpecificOutput.additionalContext` adds context; `"continue": false` sets `stop`;
 * - exit code 0 with other text on stdout: context for UserPromptSubmit and SessionStart, ignored otherwise;
 * - any other exit code, a timeout, a crash, or stdout that starts like JSON but is not a valid answer:
 *   a failure, which lets the action through (with an error) unless the hook has `onFailure: "block"`.
 */
export function decideHook(event: HookEventName, hook: HookIdentity, outcome: HookOutcome): HookDecision {
  if (outcome.timedOut)
    return failure(hook, `did not finish within its timeout of ${hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S} s and was stopped`);
  if (outcome.error !== undefined) return failure(hook, `failed: ${outcome.error}`);
  if (outcome.exitCode === null) return failure(hook, 'ended without an exit code');
  if (outcome.exitCode === 2) {
    const reason =
      outcome.stderr.trim() || `The hook \`${hookLabel(hook.command)}\` blocked this (exit code 2) without giving a reason on stderr.`;
    return { kind: 'block', reason: clipText(reason), errors: [] };
  }
  if (outcome.exitCode !== 0) {
    const said = firstLines(outcome.stderr) || firstLines(outcome.stdout);
    return failure(hook, `failed with exit code ${outcome.exitCode}${said ? `: ${said}` : ''}`);
  }
  const out = outcome.stdout.trim();
  if (out === '') return { kind: 'allow', errors: [] };
  if (!out.startsWith('{')) {
    return CONTEXT_EVENTS.includes(event) ? { kind: 'allow', context: clipText(out), errors: [] } : { kind: 'allow', errors: [] };
  }
  let json: unknown;
  try {
    json = JSON.parse(out);
  } catch (err) {
    return failure(
      hook,
      `printed output that starts like JSON but is not valid JSON (${(err as Error).message}): ${firstLines(out).slice(0, 200)}`,
    );
  }
  const parsed = HookJsonOutput.safeParse(json);
  if (!parsed.success) return failure(hook, `printed JSON that is not a valid hook answer: ${issues(parsed.error)}`);
  return fromJson(event, hook, parsed.data);
}

function fromJson(event: HookEventName, hook: HookIdentity, o: z.infer<typeof HookJsonOutput>): HookDecision {
  const specific = o.hookSpecificOutput;
  if (specific?.hookEventName !== undefined && specific.hookEventName !== event) {
    return failure(hook, `answered for the event ${specific.hookEventName} during ${event}`);
  }
  if (event !== 'PreToolUse' && (specific?.permissionDecision !== undefined || specific?.updatedInput !== undefined)) {
    return failure(hook, `answered with permissionDecision or updatedInput, which only PreToolUse hooks can give (this is ${event})`);
  }
  const base: HookDecision = { kind: 'allow', errors: [] };
  if (specific?.additionalContext) base.context = clipText(specific.additionalContext);
  if (o.continue === false) base.stop = clipText(o.stopReason || `The hook \`${hookLabel(hook.command)}\` stopped the run.`);
  if (specific?.updatedInput) base.updatedInput = specific.updatedInput;
  const fallback = `Blocked by the hook \`${hookLabel(hook.command)}\`.`;
  const permission = specific?.permissionDecision;
  const why = specific?.permissionDecisionReason ?? o.reason;
  if (permission === 'deny' || (permission === undefined && o.decision === 'block')) {
    return { ...base, kind: 'block', reason: clipText(why || fallback) };
  }
  if (permission === 'ask')
    return { ...base, kind: 'ask', reason: clipText(why || `The hook \`${hookLabel(hook.command)}\` asks for approval.`) };
  if (permission === 'allow' || (event === 'PreToolUse' && permission === undefined && o.decision === 'approve')) {
    return { ...base, allowed: true, ...(why ? { reason: clipText(why) } : {}) };
  }
  return base;
}

/**
 * A TypeScript hook's decision from what it returned (or threw: pass `thrown`). Its answer is
 * checked like a command's JSON: anything but the {@link HookAnswer} shape is a failure.
 */
export function decideAnswer(event: HookEventName, hook: HookIdentity, answer: unknown, thrown?: string): HookDecision {
  if (thrown !== undefined) return failure(hook, `threw: ${thrown}`);
  const parsed = WorkerAnswer.safeParse(answer);
  if (!parsed.success) return failure(hook, `returned something that is not a hook answer: ${issues(parsed.error)}`);
  const a = parsed.data;
  if (!a) return { kind: 'allow', errors: [] };
  if (event !== 'PreToolUse' && (a.decision === 'ask' || a.updatedInput !== undefined)) {
    return failure(hook, `answered with "ask" or updatedInput, which only PreToolUse hooks can give (this is ${event})`);
  }
  const base: HookDecision = { kind: 'allow', errors: [] };
  if (a.context) base.context = clipText(a.context);
  if (a.updatedInput) base.updatedInput = a.updatedInput;
  if (a.decision === 'block' || a.decision === 'deny')
    return { ...base, kind: 'block', reason: clipText(a.reason || `Blocked by ${hook.command}.`) };
  if (a.decision === 'ask') return { ...base, kind: 'ask', reason: clipText(a.reason || `${hook.command} asks for approval.`) };
  if (a.decision === 'allow')
    return { ...base, ...(event === 'PreToolUse' ? { allowed: true } : {}), ...(a.reason ? { reason: clipText(a.reason) } : {}) };
  return base;
}

/**
 * Several hooks' decisions (in the order the hooks are configured) as one: any block blocks, else
 * any ask asks, else allow (deny beats ask beats allow); the reasons of the deciding kind joined
 * line by line; contexts joined; `updatedInput` from the last hook that gave one; every error kept.
 * No decisions: allow.
 */
export function combineDecisions(decisions: readonly HookDecision[]): HookDecision {
  const kind: HookDecision['kind'] = decisions.some((d) => d.kind === 'block')
    ? 'block'
    : decisions.some((d) => d.kind === 'ask')
      ? 'ask'
      : 'allow';
  const out: HookDecision = { kind, errors: decisions.flatMap((d) => d.errors) };
  const reasons = decisions.filter((d) => d.kind === kind && d.reason).map((d) => d.reason as string);
  if (reasons.length) out.reason = clipText(reasons.join('\n'));
  if (kind === 'allow' && decisions.some((d) => d.allowed)) out.allowed = true;
  const contexts = decisions.filter((d) => d.context).map((d) => d.context as string);
  if (contexts.length) out.context = clipText(contexts.join('\n\n'));
  const updated = decisions.filter((d) => d.updatedInput).at(-1)?.updatedInput;
  if (updated) out.updatedInput = updated;
  const stop = decisions.find((d) => d.stop)?.stop;
  if (stop) out.stop = stop;
  return out;
}
