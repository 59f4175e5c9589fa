// The `wait` tool: the conversation sleeps on a durable timer (no activity held, nothing running,
// any process may die meanwhile) and goes on when the time comes, when a user message arrives, on
// resume, or when a pause or close ends it. A pooled conversation hibernates in a long wait (the
// caller passes how: wait-hibernating.ts).
import { WaitArgs, describeInvalid } from '../../../tools/schemas.js';
import { DEFAULTS, type ActionEvent, type ToolResult } from '../../../core/types.js';
import { formatDuration } from '../details.js';
import type { ConversationRun } from './conversation-run.js';
import { PHASE_COMMANDS, type Applies } from './phase-commands.js';
import type { WaitEnd } from './run-state.js';
import { moveToNewVersionDue } from './versioning.js';
import { conditionHibernating, type WaitHibernation } from './wait-hibernating.js';

const { beginWait, carryStep, endWait } = PHASE_COMMANDS.wait;

/** What a `wait` call reads and writes of the run. */
export type WaitRun = Pick<ConversationRun, 'moveWanted' | 'options' | 'waitEndedBy'> & Applies<'wait'>;

/** How long to wait for these arguments at workflow time `now` (ms), capped; or why not. */
export function waitPlan(
  args: { seconds?: number | undefined; until?: string | undefined },
  now: number,
  maxMs: number,
): { ms: number; capped: boolean } {
  const target = args.until !== undefined ? Date.parse(args.until) - now : (args.seconds ?? 0) * 1000;
  const ms = Math.max(0, Math.round(target));
  return ms > maxMs ? { ms: maxMs, capped: true } : { ms, capped: false };
}

const ENDED_BY: Record<WaitEnd, string> = {
  message: 'a message from the user arrived',
  resume: 'the user resumed the conversation',
  pause: 'the conversation was paused',
  close: 'the conversation was closed',
};

/** Runs a `wait` call (hibernating past the bound, when given); the observation says how it ended. */
export async function durableWait(run: WaitRun, action: ActionEvent, hibernation?: WaitHibernation): Promise<ToolResult> {
  const parsed = WaitArgs.safeParse(action.arguments);
  if (!parsed.success) return { content: describeInvalid('wait', parsed.error), isError: true };
  const started = Date.now();
  const { ms, capped } = waitPlan(parsed.data, started, run.options.maxWaitMs ?? DEFAULTS.maxWaitMs);
  const { reason } = parsed.data;
  if (ms === 0) return { content: 'That time has already come: nothing to wait for.', isError: false };
  return waitUntil(run, action, { until: new Date(started + ms).toISOString(), reason, capped, started }, hibernation);
}

/**
 * Waits until `until` (or a message, resume, pause or close); the observation says how it ended.
 * With `hibernation`, a pooled conversation gives its host folder back while it waits long.
 * A drain that moves the conversation to a new version ends it too: the wait is carried (same
 * deadline) and the result is not recorded here (`run.movingStep` says so; the next run finishes it).
 */
export async function waitUntil(
  run: WaitRun,
  action: ActionEvent,
  plan: { until: string; reason: string; capped: boolean; started: number },
  hibernation?: WaitHibernation,
): Promise<ToolResult> {
  const { until, reason, capped, started } = plan;
  const ms = Math.max(0, Date.parse(until) - Date.now());
  run.apply(beginWait, until, reason);
  try {
    const ended = await conditionHibernating(
      () => run.waitEndedBy !== undefined || run.moveWanted(),
      ms,
      `waiting until ${until} (${reason})`,
      hibernation,
    );
    const endedBy = run.waitEndedBy;
    if (ended && endedBy === undefined && moveToNewVersionDue()) {
      run.apply(carryStep, { kind: 'wait', toolCallId: action.toolCallId, until, reason, capped, rest: [] });
      return { content: 'The wait goes on on a new version of the worker.', isError: false };
    }
    const waited = waitedText(Date.now() - started);
    if (!ended) {
      return {
        content: `Waited until ${until}${capped ? ` (cut to the longest wait, ${formatDuration(Date.parse(until) - started)})` : ''}; the time has come.`,
        isError: false,
      };
    }
    return { content: `The wait ended early after ${waited}: ${ENDED_BY[endedBy as WaitEnd]}.`, isError: false };
  } finally {
    run.apply(endWait);
  }
}

function waitedText(ms: number): string {
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : formatDuration(ms);
}
