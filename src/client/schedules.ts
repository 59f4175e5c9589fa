// Conversations on a schedule, on Temporal Schedules: each run starts a conversation with the
// schedule's message and options. Temporal keeps the schedule (it survives server restarts), starts
// the runs, skips overlapping ones by default and tags each run's workflow with the schedule's id
// (the TemporalScheduledById search attribute), so `faheem list --schedule NAME` is one query.
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleSummary } from '@temporalio/client';
import { conversationStart, type CreateOptions } from './client.js';
import { FaheemError } from '../core/errors.js';

/** What overlapping runs do: skip (the default), keep one to run after, or run side by side. */
export type ScheduleOverlap = 'skip' | 'buffer_one' | 'allow_all';

const OVERLAP: Record<ScheduleOverlap, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/** A schedule: when it runs and the conversation each run starts. */
export interface ScheduleCreateOptions extends Omit<CreateOptions, 'id' | 'firstMessage' | 'run' | 'images'> {
  /** Cron expressions (`"0 3 * * *"`: every day at 03:00 UTC). */
  cron: string | string[];
  /** The first message of every run's conversation. */
  message: string;
  /** IANA time zone for the cron expressions (default UTC). */
  timeZone?: string;
  overlap?: ScheduleOverlap;
  /** Create it paused. */
  paused?: boolean;
}

/** A schedule as `faheem schedule list` shows it. */
export interface ScheduleInfo {
  name: string;
  cron: string[];
  message: string;
  workspace: string;
  paused: boolean;
  note?: string;
  /** The next times it will run (ISO). */
  nextRuns: string[];
  /** The conversations of its latest runs, oldest first. */
  recentRuns: { conversationId: string; at: string }[];
}

/** A schedule name that Temporal would refuse, or that is not one of ours. */
export class ScheduleError extends FaheemError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

/** Names are schedule ids and prefixes of their conversations' ids: keep them to safe characters. */
function checkName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    throw new ScheduleError(
      `the schedule name "${name}" is not valid: use letters, digits, ".", "_" and "-" (at most 100, starting with a letter or digit)`,
    );
  }
  return name;
}

/**
 * Creates a schedule whose every run starts a conversation (id `<name>-<time of the run>`) with
 * `message`, running at once.
 */
export async function createSchedule(client: Client, name: string, options: ScheduleCreateOptions): Promise<void> {
  checkName(name);
  const cron = Array.isArray(options.cron) ? options.cron : [options.cron];
  if (cron.length === 0 || cron.some((c) => c.trim() === '')) throw new ScheduleError('give a cron expression, e.g. --cron "0 3 * * *"');
  const { message, timeZone, overlap, paused } = options;
  const create: Partial<ScheduleCreateOptions> = { ...options };
  for (const key of ['cron', 'message', 'timeZone', 'overlap', 'paused'] as const) delete create[key];
  const start = conversationStart({ ...(create as CreateOptions), firstMessage: message, run: true });
  await client.schedule.create({
    scheduleId: name,
    spec: { cronExpressions: cron, ...(timeZone ? { timezone: timeZone } : {}) },
    action: { type: 'startWorkflow', workflowType: 'conversation', workflowId: name, ...start.workflow },
    policies: { overlap: OVERLAP[overlap ?? 'skip'] },
    state: { paused: paused === true, ...(paused ? { note: 'created paused' } : {}) },
    memo: { faheem: { message, workspace: start.workflow.args[0].options.workspace, cron } },
  });
}

/** The schedules that start conversations, by name. */
export async function listSchedules(client: Client): Promise<ScheduleInfo[]> {
  const out: ScheduleInfo[] = [];
  for await (const s of client.schedule.list()) {
    const info = scheduleInfo(s);
    if (info) out.push(info);
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

function scheduleInfo(s: ScheduleSummary): ScheduleInfo | undefined {
  if (s.action?.type !== 'startWorkflow' || s.action.workflowType !== 'conversation') return undefined;
  const memo = (s.memo?.faheem ?? {}) as { message?: string; workspace?: string; cron?: string[] };
  return {
    name: s.scheduleId,
    cron: memo.cron ?? [],
    message: memo.message ?? '',
    workspace: memo.workspace ?? '',
    paused: s.state.paused,
    ...(s.state.note ? { note: s.state.note } : {}),
    nextRuns: s.info.nextActionTimes.map((d) => d.toISOString()),
    recentRuns: s.info.recentActions.flatMap((a) =>
      a.action.type === 'startWorkflow' ? [{ conversationId: a.action.workflow.workflowId, at: a.takenAt.toISOString() }] : [],
    ),
  };
}

/** What may be done to an existing schedule. */
export type ScheduleVerb = 'trigger' | 'pause' | 'unpause' | 'delete';

/** Runs it now (`trigger`, overlap as the schedule says), pauses, unpauses or deletes it. */
export async function changeSchedule(client: Client, name: string, verb: ScheduleVerb, note?: string): Promise<void> {
  const handle = client.schedule.getHandle(checkName(name));
  try {
    const described = await handle.describe();
    if (described.action.type !== 'startWorkflow' || described.action.workflowType !== 'conversation') {
      throw new ScheduleError(`the schedule "${name}" does not start conversations; faheem leaves it alone`);
    }
    if (verb === 'trigger') await handle.trigger(described.policies.overlap);
    else if (verb === 'pause') await handle.pause(note ?? 'paused with faheem');
    else if (verb === 'unpause') await handle.unpause(note ?? 'unpaused with faheem');
    else await handle.delete();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new ScheduleError(`no schedule named "${name}" (see \`faheem schedule list\`)`);
    throw err;
  }
}

/** The visibility query for the conversations a schedule started. */
export function scheduleRunsQuery(name: string): string {
  return `TemporalScheduledById = '${checkName(name)}'`;
}
