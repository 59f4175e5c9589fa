// Hooks in the loop (Claude Code's format): which hooks an event has, running them as the runHooks
// activity on the workspace host, and what their decision means. The callers check `hooksDue`
// first and only await when hooks are due (an await that resolves at once moves this task's
// commands, which old histories must replay in their order).
import type { ActivityOptions } from '@temporalio/workflow';
import { hasUnsafeMatcher, matchingHooks, hooksActivityTimeoutSeconds, type CommandHook, type HookEventName } from '../config.js';
import { isPatched } from '../../conversation/workflow/legacy/patches.js';
import type { HookDecision } from '../decision.js';
import type { HookEvent, HookEventCommon, HookEventOf } from '../event.js';
import { failureMessage } from '../../conversation/workflow/reply.js';
import { onHostQueue, type ConversationActivities } from '../../conversation/workflow/runner/activity-proxies.js';
import type { ConversationRun } from '../../conversation/workflow/runner/conversation-run.js';
import { PHASE_COMMANDS, type Applies } from '../../conversation/workflow/runner/phase-commands.js';
import { onHost, type HostCallRun } from '../../conversation/workflow/runner/host-call.js';

const { record } = PHASE_COMMANDS.hooks;

/** What hooks read and write of the run (a pooled conversation's hooks may claim a host: HostCallRun). */
export type HooksRun = Pick<ConversationRun, 'setup'> & HostCallRun & Applies<'hooks'>;

/** A generous bound for a worker's TypeScript hooks (each times out on its own, 60 s by default). */
const WORKER_HOOK_SECONDS = 120;

/** The command hooks for an event (and tool), and whether the host's worker has hooks of its own for it. */
export interface DueHooks {
  event: HookEventName;
  commands: CommandHook[];
  worker: boolean;
}

/** The hooks due for this event, or undefined when there are none (then nothing is scheduled). */
export function hooksDue(run: HooksRun, event: HookEventName, toolName?: string): DueHooks | undefined {
  // A matcher that could backtrack for ever is not run (it would stall this task); histories from
  // before that rule ran it, and replay as they were. Asked only when there is such a matcher.
  const skipUnsafe = hasUnsafeMatcher(run.options.hooks, event) && isPatched('skip-unsafe-hook-matchers');
  const commands = matchingHooks(run.options.hooks, event, toolName, { skipUnsafe });
  const worker = run.setup?.hookEvents?.includes(event) === true;
  return commands.length > 0 || worker ? { event, commands, worker } : undefined;
}

/** The fields every hook event has. */
export function eventBase(run: HooksRun): { session_id: string; conversation_id: string; cwd: string } {
  return { session_id: run.id, conversation_id: run.id, cwd: run.options.workspace };
}

/**
 * Runs the due hooks for `event` on the workspace host. A hook that failed is an error event (the
 * conversation goes on); when the activity itself fails, the hooks fail open unless one of them
 * says `"onFailure": "block"`.
 */
export async function runHooks(run: HooksRun, acts: ConversationActivities, due: DueHooks, event: HookEvent): Promise<HookDecision> {
  const seconds = hooksActivityTimeoutSeconds(due.commands, due.worker ? WORKER_HOOK_SECONDS : 0);
  let decision: HookDecision;
  // Read at the call: a pooled conversation's host (queue, folder) may be claimed just before it.
  const schedule = (extra: ActivityOptions) =>
    acts.tool.runHooks.executeWithOptions(
      {
        startToCloseTimeout: `${seconds} seconds`,
        heartbeatTimeout: '10 seconds',
        // A retry runs the hooks again: once more at most, after a worker died.
        retry: { initialInterval: '500 milliseconds', maximumAttempts: 2 },
        ...onHostQueue(run.options),
        ...extra,
        summary: `${due.event} hooks${'tool_name' in event ? ` (${event.tool_name})` : ''}`,
      },
      [{ conversationId: run.id, workspace: run.options.workspace, event: { ...event, cwd: run.options.workspace }, hooks: due.commands }],
    );
  try {
    // A pooled conversation's hooks run on the host that holds it, which a hibernated one must claim
    // first (before, they went to the queue of the host it had left). Asked only by pooled ones.
    const pooled = run.options.pool !== undefined && isPatched('pooled-workspaces') && isPatched('pooled-hooks-on-host');
    const result = pooled ? await onHost(run, (extra) => schedule(extra)) : await schedule({});
    decision = result.decision;
  } catch (err) {
    const message = `${due.event} hooks could not run: ${failureMessage(err)}`;
    const block = due.commands.some((h) => h.onFailure === 'block');
    decision = block ? { kind: 'block', reason: message, errors: [message] } : { kind: 'allow', errors: [message] };
  }
  for (const message of decision.errors) run.apply(record, { kind: 'error', source: 'environment', message: `hook: ${message}` });
  return decision;
}

/** A hook's context for the model, as a message of its own (it reads as a user turn). */
export function addHookContext(run: HooksRun, event: HookEventName, text: string | undefined): void {
  if (text && text.trim()) run.apply(record, { kind: 'message', source: 'environment', text: `[${event} hook]\n${text.trim()}` });
}

/**
 * A hook point of the loop: runs the hooks due for `event` (and tool) with the event's own fields,
 * or answers undefined at once when none are due. Not async, so that a point with nothing due adds
 * no await (old histories replay the same commands in the same order).
 */
export function hookPoint<E extends HookEventName>(
  run: HooksRun,
  acts: ConversationActivities,
  event: E,
  fields: Omit<HookEventOf<E>, keyof HookEventCommon>,
  toolName?: string,
): Promise<HookDecision> | undefined {
  const due = hooksDue(run, event, toolName);
  if (!due) return undefined;
  return runHooks(run, acts, due, { ...eventBase(run), hook_event_name: event, ...fields } as unknown as HookEvent);
}
