// Hooks configuration in Claude Code's `hooks` JSON format: which shell commands run at which point of
// a conversation, for which tools. Pure (zod only, no Node imports): the workflow imports it to pick
// the hooks of an event, and the config itself is kept with the conversation in workflow history.
import { z } from 'zod';
import { FaheemError } from '../core/errors.js';
import { unsafeMatcherReason } from './matcher-safety.js';

/** The hook events faheemcode runs, with Claude Code's names. */
export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SessionStart'] as const;

/** One of {@link HOOK_EVENTS}. */
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** The events whose hooks are chosen by tool name (the `matcher`); the others ignore it. */
export const TOOL_HOOK_EVENTS: readonly HookEventName[] = ['PreToolUse', 'PostToolUse'];

/** A command hook runs at most this long unless it says otherwise (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_S = 60;

/** The longest `timeout` a hook may ask for. */
export const MAX_HOOK_TIMEOUT_S = 3600;

/**
 * One command hook. `command` runs with `bash -c` in the workspace on the workspace's host (under the
 * worker's sandbox when it has one), with the event as JSON on stdin. It sees the worker's
 * environment without its secrets (no LLM_*, TEMPORAL_*, *_API_KEY, *_TOKEN, …), plus
 * `FAHEEM_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` set to the workspace. The config is stored in
 * workflow history with the conversation: put no secrets in it (nothing here is rejected for that).
 */
export interface CommandHook {
  type: 'command';
  /** A bash command line. */
  command: string;
  /** Seconds before the hook is killed (with everything it started) and counted as failed; default 60. */
  timeout?: number;
  /**
   * What a failure of this hook (crash, non-zero exit other than 2, timeout, unreadable JSON) does:
   * `allow` (default, as in Claude Code) reports it as an error and goes on; `block` blocks the
   * action with the failure as the reason, so that a broken policy hook does not fail open.
   */
  onFailure?: 'block' | 'allow';
}

/** The hooks of one event that apply to the tools `matcher` names. */
export interface HookMatcherGroup {
  /**
   * Tool-name pattern, as in Claude Code: absent, empty or `*` matches every tool; names of letters,
   * digits, `_` and `-` separated by `|` (`terminal|file_editor`) match exactly those tools; anything
   * else is a JavaScript regular expression tested against the tool name, unanchored
   * (`mcp__github__.*`), that cannot backtrack catastrophically (no repeated group holding a
   * quantifier or `|`, no backreference, at most 3 of `*`, `+`, `{n,}`, at most 256 characters).
   * Only PreToolUse and PostToolUse look at it.
   */
  matcher?: string;
  hooks: CommandHook[];
}

/** A parsed hooks file: `{"hooks": {"PreToolUse": [{"matcher": "terminal", "hooks": [...]}], …}}`. */
export interface HooksConfig {
  hooks: Partial<Record<HookEventName, HookMatcherGroup[]>>;
}

/** A hooks file or value that is not valid; the message says where and why. */
export class HooksConfigError extends FaheemError {
  constructor(message: string) {
    super('hooks_config', message);
  }
}

const PLAIN_NAMES = /^[A-Za-z0-9_-]+(\|[A-Za-z0-9_-]+)*$/;

/** Whether a matcher string is valid; undefined when it is, else why not. */
function matcherProblem(matcher: string): string | undefined {
  const m = matcher.trim();
  if (m === '' || m === '*' || PLAIN_NAMES.test(m)) return undefined;
  try {
    new RegExp(m);
  } catch (err) {
    return `is not a valid regular expression (${(err as Error).message})`;
  }
  // Matchers run inside workflow code: one that can backtrack for ever would fail its tasks.
  const unsafe = unsafeMatcherReason(m);
  return unsafe
    ? `${unsafe}: use tool names separated by | (terminal|file_editor), or a simple pattern such as mcp__github__.*`
    : undefined;
}

// Built on first use: the workflow bundle evaluates this module for every workflow, and most
// conversations have no hooks to parse there.
const FileSchema = z.lazy(() => {
  const CommandHookSchema = z.object({
    type: z.string().refine((t) => t === 'command', {
      message: 'only hooks of type "command" are supported (Claude Code\'s "prompt" hooks are not)',
    }),
    command: z.string().trim().min(1, 'must be a non-empty command line'),
    timeout: z
      .number()
      .positive('must be a positive number of seconds')
      .max(MAX_HOOK_TIMEOUT_S, `must be at most ${MAX_HOOK_TIMEOUT_S} seconds`)
      .optional(),
    onFailure: z.enum(['block', 'allow']).optional(),
  });

  const GroupSchema = z.object({
    matcher: z
      .string()
      .optional()
      .superRefine((m, ctx) => {
        const problem = m === undefined ? undefined : matcherProblem(m);
        if (problem) ctx.addIssue({ code: 'custom', message: `the matcher ${JSON.stringify(m)} ${problem}` });
      }),
    hooks: z.array(CommandHookSchema),
  });

  const EventsSchema = z.record(z.string(), z.array(GroupSchema)).superRefine((events, ctx) => {
    for (const name of Object.keys(events)) {
      if (!(HOOK_EVENTS as readonly string[]).includes(name)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `"${name}" is not a hook event faheemcode runs; the known events are ${HOOK_EVENTS.join(', ')}`,
        });
      }
    }
  });

  // Other top-level keys (a Claude Code settings.json has many) are ignored; `hooks` must be there.
  return z.object({ hooks: EventsSchema });
});

function describeIssues(error: z.ZodError, value: unknown): string {
  const at = (p: readonly PropertyKey[]) =>
    p.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), value);
  return error.issues
    .map((i) => {
      const where = i.path.length
        ? i.path
            .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
            .join('')
            .replace(/^\./, '')
        : 'the file';
      let message = i.message;
      if (i.code === 'invalid_type') {
        const want =
          { record: 'an object', object: 'an object', array: 'a list', string: 'a string', number: 'a number' }[i.expected as string] ??
          i.expected;
        message =
          i.path.length === 0
            ? 'must be an object like {"hooks": {"PreToolUse": [...]}}'
            : at(i.path) === undefined
              ? `is missing (must be ${want})`
              : `must be ${want}`;
      }
      return `${where}: ${message}`;
    })
    .join('; ');
}

/** Parses a hooks value, or says what is wrong with it. Never throws. */
export function safeParseHooks(value: unknown): { ok: true; config: HooksConfig } | { ok: false; error: string } {
  const parsed = FileSchema.safeParse(value);
  if (!parsed.success) return { ok: false, error: `invalid hooks configuration: ${describeIssues(parsed.error, value)}` };
  const hooks: HooksConfig['hooks'] = {};
  for (const [name, groups] of Object.entries(parsed.data.hooks)) {
    hooks[name as HookEventName] = groups.map((g) => ({
      ...(g.matcher !== undefined ? { matcher: g.matcher } : {}),
      hooks: g.hooks.map((h) => ({
        type: 'command' as const,
        command: h.command,
        ...(h.timeout !== undefined ? { timeout: h.timeout } : {}),
        ...(h.onFailure !== undefined ? { onFailure: h.onFailure } : {}),
      })),
    }));
  }
  return { ok: true, config: { hooks } };
}

/**
 * Parses a hooks value (`{"hooks": {…}}`, as `Conversation.create({ hooks })` gets it) into plain
 * data. Throws a {@link HooksConfigError} naming each problem: an unknown event (the message lists
 * the known ones), a hook that is not `"type": "command"`, an empty command, a bad timeout, an
 * invalid matcher regex or one that could backtrack catastrophically (`(a+)+`). Keys other than
 * `hooks` at the top level are ignored.
 */
export function parseHooks(value: unknown): HooksConfig {
  const r = safeParseHooks(value);
  if (!r.ok) throw new HooksConfigError(r.error);
  return r.config;
}

/** Parses the text of a hooks file (JSON); see {@link parseHooks}. Throws a {@link HooksConfigError}. */
export function parseHooksFile(text: string): HooksConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HooksConfigError(`the hooks file is not valid JSON: ${(err as Error).message}`);
  }
  return parseHooks(value);
}

const compiled = new Map<string, RegExp>();

/** How {@link matchingHooks} treats matchers that parseHooks would refuse as unsafe. */
export interface MatchOptions {
  /**
   * A matcher that could backtrack catastrophically (see unsafeMatcherReason) is not run and
   * selects no tool. parseHooks refuses such matchers; they reach the workflow only from histories
   * of before that check or from configs built by hand.
   */
  skipUnsafe?: boolean;
}

/** Whether a matcher (see {@link HookMatcherGroup.matcher}) selects this tool. */
export function matcherMatches(matcher: string | undefined, toolName: string, options: MatchOptions = {}): boolean {
  const m = (matcher ?? '').trim();
  if (m === '' || m === '*') return true;
  if (PLAIN_NAMES.test(m)) return m.split('|').includes(toolName);
  if (options.skipUnsafe && unsafeMatcherReason(m)) return false;
  let re = compiled.get(m);
  if (!re) {
    try {
      re = new RegExp(m);
    } catch {
      return false; // parseHooks refuses these; a config built by hand just matches nothing
    }
    compiled.set(m, re);
  }
  return re.test(toolName);
}

/**
 * The command hooks to run for an event, in file order, identical ones once (as Claude Code). For
 * PreToolUse and PostToolUse only the groups whose matcher selects `toolName` count (no tool name:
 * only the match-all groups); the other events take every group. Deterministic: safe in workflow code.
 */
export function matchingHooks(
  config: HooksConfig | undefined,
  event: HookEventName,
  toolName?: string,
  options: MatchOptions = {},
): CommandHook[] {
  const groups = config?.hooks[event] ?? [];
  const byTool = TOOL_HOOK_EVENTS.includes(event);
  const out: CommandHook[] = [];
  const seen = new Set<string>();
  for (const g of groups) {
    if (byTool && !matcherMatches(g.matcher, toolName ?? '', options)) continue;
    for (const h of g.hooks) {
      const key = JSON.stringify([h.command, h.timeout ?? null, h.onFailure ?? null]);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(h);
    }
  }
  return out;
}

/** Whether this event's groups have a matcher that parseHooks would now refuse as unsafe (see MatchOptions). */
export function hasUnsafeMatcher(config: HooksConfig | undefined, event: HookEventName): boolean {
  if (!TOOL_HOOK_EVENTS.includes(event)) return false;
  return (config?.hooks[event] ?? []).some((g) => {
    const m = (g.matcher ?? '').trim();
    return m !== '' && m !== '*' && !PLAIN_NAMES.test(m) && unsafeMatcherReason(m) !== undefined;
  });
}

/** Whether the config has any hook for this event (whatever the tool). */
export function hasHooks(config: HooksConfig | undefined, event: HookEventName): boolean {
  return (config?.hooks[event] ?? []).some((g) => g.hooks.length > 0);
}

/**
 * A start-to-close timeout, in seconds, for one `runHooks` activity running these command hooks (in
 * parallel) and then the worker's own hooks: the longest hook timeout, plus `workerHookSeconds` when
 * the worker has function hooks for the event, plus a margin for process start and kill. The
 * workflow does not know the worker's hook timeouts (prepareTools reports only `hookEvents`): pass a
 * generous bound then (each worker hook times out on its own, 60 s by default).
 */
export function hooksActivityTimeoutSeconds(hooks: readonly CommandHook[], workerHookSeconds = 0): number {
  const longest = hooks.reduce((m, h) => Math.max(m, h.timeout ?? DEFAULT_HOOK_TIMEOUT_S), 0);
  return Math.ceil(longest + workerHookSeconds + 15);
}
