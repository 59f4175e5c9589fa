// Host calls of a pooled conversation (options.pool): the conversation is pinned to one live host of
// its pool at a time. The first host call claims a host (claimPoolHost on the pool's queue: any
// host of the pool takes it and restores the workspace from the object store); later calls go to
// that host's own queue. The lost-host rule:
// - a call no worker there picks up within hostWaitMs provably never started: the conversation
//   moves to another host (restored from the last shipped checkpoint) and the call runs there;
// - a call whose host stopped heartbeating may have run: the conversation moves, and the call
//   comes back as OutcomeUnknown (an observation saying so), never run again, never a success.
// Every move bumps the fence epoch, so the lost host can never ship again or be believed; once it
// polls again, it stops what the conversation left running there and releases the folder.
// Hibernation gives the host folder back: between steps (paused, idle past a bound: the accepted
// steps are in the store) and in the middle of one, in a long `wait` or approval (the workspace is
// shipped as it is first: this step's actions may already have changed files).
// Only pooled conversations reach this module: histories from before pools never do.
import {
  ActivityFailure,
  CancellationScope,
  TimeoutFailure,
  isCancellation,
  proxyActivities,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { Activities } from '../../conversation/activities.js';
import { childHasEnded } from '../../sub-agents/workflow/delegation.js';
import { movedCwd, poolQueueName } from './pool-rules.js';
import { failureMessage } from '../../conversation/workflow/reply.js';
import { DEFAULTS } from '../../core/types.js';
import { isPatched } from '../../conversation/workflow/legacy/patches.js';
import { hostWait } from '../../conversation/workflow/runner/activity-proxies.js';
import type { ConversationRun } from '../../conversation/workflow/runner/conversation-run.js';
import { PHASE_COMMANDS, type Applies } from '../../conversation/workflow/runner/phase-commands.js';
import { NotStarted, OutcomeUnknown } from '../../conversation/workflow/runner/host-errors.js';
import type { WaitHibernation } from '../../conversation/workflow/runner/wait-hibernating.js';

const { setToolState } = PHASE_COMMANDS.poolHost;
const { recordAndShow, showDetails } = PHASE_COMMANDS.midStepHibernate;

/** What a pooled host call reads and writes of the run. */
export type PoolHostRun = Pick<ConversationRun, 'checkpoints' | 'halted' | 'id' | 'inFlight' | 'options' | 'toolStateOf'> &
  Applies<'poolHost'>;

function timeoutOf(err: unknown): TimeoutType | undefined {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure ? (err.cause.timeoutType ?? undefined) : undefined;
}

/** The last checkpoint the workflow accepted (shipped before it was answered): its step and commit. */
function lastAccepted(run: PoolHostRun): { step: number; commit: string } | undefined {
  const entries = run.checkpoints.all();
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (!e.rewound && e.commit) return { step: e.step, commit: e.commit };
  }
  return undefined;
}

/** Claims a host of the pool (the first, or another after a loss) and points the run's host calls at it. */
async function claimHost(run: PoolHostRun, reason: string | undefined): Promise<number | undefined> {
  const { options } = run;
  const pool = options.pool!;
  const claims = proxyActivities<Activities>({
    taskQueue: poolQueueName(workflowInfo().taskQueue, pool),
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '1 second' }, // until a host of the pool takes it
    summary: reason
      ? `host_changed: leave host ${options.poolHost?.host} (${reason}) for another of pool ${pool}`
      : `claim a host of pool ${pool}`,
  });
  // Hibernated in the middle of a step: the workspace shipped then is the one to restore, until a
  // host has checkpointed that step.
  const midStep = options.poolReleasedMidStep;
  const last = lastAccepted(run);
  const accepted = last?.step;
  const lastStep = midStep && (accepted === undefined || midStep.step >= accepted) ? midStep.step : accepted;
  // Current while no host has accepted a checkpoint of that step (or a later one) but the shipment itself.
  const midStepCurrent =
    midStep !== undefined &&
    (last === undefined || last.step < midStep.step || (last.step === midStep.step && last.commit === midStep.commit));
  const released = options.poolReleasedBy;
  const from = options.poolHost?.host ?? released ?? null;
  // Left as lost: that host may only have lost touch, with what the conversation started there running on.
  const lost = reason !== undefined && options.poolHost ? { ...options.poolHost, taskQueue: options.toolTaskQueue } : undefined;
  const claimed = await claims.claimPoolHost({ conversationId: run.id, pool, ...(lastStep !== undefined ? { lastStep } : {}) });
  const terminal = run.toolStateOf('terminal') as { cwd?: unknown; env?: unknown } | undefined;
  if (terminal && typeof terminal.cwd === 'string')
    run.apply(setToolState, 'terminal', { ...terminal, cwd: movedCwd(terminal.cwd, options.workspace, claimed.workspace) });
  options.toolTaskQueue = claimed.toolTaskQueue;
  options.workspace = claimed.workspace;
  options.poolHost = { host: claimed.host, epoch: claimed.epoch };
  delete options.poolReleasedBy;
  // Kept while current: this host may be lost before it checkpoints the step, and the next claim
  // must restore the workspace shipped in the middle of it again.
  if (!midStepCurrent || !isPatched('pool-mid-step-kept')) delete options.poolReleasedMidStep;
  const woke =
    released !== undefined &&
    `woke from hibernation (released by ${released}${midStep && midStepCurrent ? ` in the middle of step ${midStep.step}` : ''})`;
  run.apply(recordAndShow, {
    kind: 'host_changed',
    source: 'environment',
    from,
    to: claimed.host,
    restoredFromStep: claimed.restoredFromStep ?? null,
    reason: reason ?? (woke || `first host of pool ${pool}`),
  });
  if (lost && isPatched('release-lost-host')) releaseLostHost(run, lost);
  return claimed.restoredFromStep;
}

/** How long a host left as lost has to poll again and stop what the conversation left running there. */
const LOST_HOST_WAIT = '1 hour';

/**
 * A host the conversation left as lost stops what it started there (a command left running, MCP
 * servers, the kept network) and gives the folder back once it polls again: releasePoolHost with the
 * lost epoch, which a later claim there ignores. Not waited for: a host that is gone never answers,
 * and the conversation goes on elsewhere meanwhile; nothing (a pause --now) cancels it.
 */
function releaseLostHost(run: Pick<ConversationRun, 'id'>, lost: { host: string; epoch: number; taskQueue: string }): void {
  const host = proxyActivities<Activities>({
    taskQueue: lost.taskQueue,
    scheduleToStartTimeout: LOST_HOST_WAIT,
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 2 },
    summary: `lost host ${lost.host}: stop what the conversation runs there, release its folder (once it polls again)`,
  });
  const release = CancellationScope.nonCancellable(() => host.releasePoolHost({ conversationId: run.id, epoch: lost.epoch }));
  void release.catch(() => undefined);
}

/**
 * A host call of a pooled conversation. `mayHaveEffects`: a tool call, which is never run again
 * once it may have started (it becomes OutcomeUnknown); other host calls (setup, checkpoints) are
 * idempotent and run again on the new host.
 */
export async function onPoolHost<T>(
  run: PoolHostRun,
  call: (extra: ActivityOptions, rescheduled: boolean) => Promise<T>,
  mayHaveEffects: boolean,
): Promise<T> {
  if (!run.options.poolHost) await claimHost(run, undefined);
  for (let moves = 0; ; moves++) {
    const host = run.options.poolHost!.host;
    try {
      // One attempt of a tool call: a retry after a lost heartbeat would run it again on a host that may have run it.
      return await call(
        { scheduleToStartTimeout: hostWait(run.options), ...(mayHaveEffects ? { retry: { maximumAttempts: 1 } } : {}) },
        false,
      );
    } catch (err) {
      if (isCancellation(err) || run.halted) throw isCancellation(err) ? err : new NotStarted();
      const timeout = timeoutOf(err);
      if (timeout === TimeoutType.SCHEDULE_TO_START) {
        // Never started: safe to run on the next host.
        await claimHost(run, `host ${host} picked up no call for ${hostWait(run.options)} ms`);
        continue;
      }
      if (timeout === TimeoutType.HEARTBEAT) {
        const restored = await claimHost(run, `host ${host} stopped heartbeating mid-call`);
        if (!mayHaveEffects && moves < 3) continue;
        throw new OutcomeUnknown(
          `outcome unknown: the host ${host} was lost while this call was running, so it may or may not have taken effect there. ` +
            `The conversation moved to host ${run.options.poolHost!.host}, and the workspace is as of step ${restored ?? 0} ` +
            '(changes after that step are gone). The call was not run again: check the workspace and redo it if needed.',
        );
      }
      throw err;
    }
  }
}

/** What hibernation reads and writes of the run. */
export type HibernateRun = Pick<ConversationRun, 'id' | 'options' | 'status'> & Applies<'hibernate'>;

/**
 * How long a stopped pooled conversation keeps its host folder before it hibernates: 0 when
 * paused, the bound when idle; undefined when it has no host to release (not pooled, or a sub-agent).
 */
export function hibernationBound(run: HibernateRun): number | undefined {
  const { options } = run;
  if (options.pool === undefined || !options.poolHost || !isPatched('pooled-workspaces')) return undefined;
  // A sub-agent works in its parent's folder: only the parent gives it back.
  if (options.parent !== undefined && isPatched('pool-sub-agent-keeps-host')) return undefined;
  return run.status === 'paused' ? 0 : (options.poolIdleReleaseMs ?? DEFAULTS.poolIdleReleaseMs);
}

/**
 * Hibernation: the host gives the workspace folder back (every accepted step is in the store), and
 * the next host call claims a host of the pool again (any, restoring the last step). A host that
 * is gone has nothing to give back.
 */
export async function hibernate(run: HibernateRun): Promise<void> {
  const { options } = run;
  const held = options.poolHost!;
  const host = proxyActivities<Activities>({
    taskQueue: options.toolTaskQueue,
    scheduleToStartTimeout: hostWait(options),
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 3 },
    summary: `hibernate: release the workspace folder on host ${held.host}`,
  });
  await host.releasePoolHost({ conversationId: run.id, epoch: held.epoch }).catch(() => false);
  delete options.poolHost;
  options.poolReleasedBy = held.host;
  // Released between steps: every step is checkpointed, and a shipment from the middle of one is old.
  if (options.poolReleasedMidStep && isPatched('pool-mid-step-kept')) delete options.poolReleasedMidStep;
  run.apply(showDetails);
}

/** What hibernating in the middle of a step reads and writes of the run. */
export type MidStepHibernateRun = Pick<ConversationRun, 'childList' | 'id' | 'options' | 'stepCheckpoints' | 'steps' | 'toolStateOf'> &
  Applies<'midStepHibernate'>;

/** What came of hibernating in the middle of a step. */
export type MidStepHibernation =
  /** The folder is released; `shipped`: the workspace as it was went to the store first (else the host held no claim of it). */
  | { kind: 'hibernated'; step: number; shipped: boolean }
  /** The host keeps the folder (the conversation waits on there): why. */
  | { kind: 'kept'; reason: string };

/**
 * How a wait that begins now in the middle of the step (a `wait` call, an approval) hibernates:
 * after the idle bound (the same as between steps: an approval usually comes within seconds, and
 * each hibernation costs a restore). Undefined when there is no folder of its own to release: not
 * pooled, no host held, or a sub-agent (it works in its parent's folder).
 */
export function waitHibernation(run: MidStepHibernateRun): WaitHibernation | undefined {
  const { options } = run;
  if (options.pool === undefined || !options.poolHost || options.parent !== undefined) return undefined;
  if (!isPatched('pooled-workspaces') || !isPatched('hibernate-mid-step')) return undefined;
  return { afterMs: options.poolIdleReleaseMs ?? DEFAULTS.poolIdleReleaseMs, hibernate: () => hibernateMidStep(run) };
}

/**
 * Hibernation in the middle of a step: this step's actions may have changed files that no accepted
 * checkpoint holds, so the host ships the workspace as it is now (a mid-step checkpoint) and only
 * then releases the folder, in one activity. The next host call claims a host, which restores that
 * (and the step, if nothing ran on a host after, records it as its checkpoint). When the shipment
 * fails, or a sub-agent of the step still works in the folder, the host keeps it.
 */
export async function hibernateMidStep(run: MidStepHibernateRun): Promise<MidStepHibernation> {
  const { options } = run;
  const held = options.poolHost;
  if (!held) return { kind: 'kept', reason: 'no host holds the folder' };
  if (run.childList.some((c) => !childHasEnded(c.status))) return { kind: 'kept', reason: 'a sub-agent works in the folder' };
  // A command left running (past its soft timeout) works in the folder: releasing it would pull it from under it.
  const terminal = run.toolStateOf('terminal') as { running?: unknown } | undefined;
  if (terminal?.running) return { kind: 'kept', reason: 'a command still runs in the folder' };
  if (run.stepCheckpoints.pending) await run.stepCheckpoints.settled();
  const step = run.steps;
  const host = proxyActivities<Activities>({
    taskQueue: options.toolTaskQueue,
    scheduleToStartTimeout: hostWait(options),
    // Nothing cancels it, and a pause or an answer waits behind it: a hung store may hold them 10 minutes at most.
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '500 milliseconds', maximumAttempts: 2 },
    summary: `hibernate in step ${step}: ship the workspace as it is, release the folder on host ${held.host}`,
  });
  let released: Awaited<ReturnType<Activities['releasePoolHostMidStep']>>;
  try {
    released = await host.releasePoolHostMidStep({ conversationId: run.id, epoch: held.epoch, step });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const reason = `the workspace could not be shipped: ${failureMessage(err)}`;
    // Shown: the store failed, and the folder stays on its host for as long as the wait lasts.
    if (isPatched('pool-kept-folder-shown')) {
      const message = `hibernation in step ${step}: host ${held.host} keeps the workspace folder (${reason})`;
      run.apply(recordAndShow, { kind: 'error', source: 'environment', message });
    }
    return { kind: 'kept', reason };
  }
  delete options.poolHost;
  options.poolReleasedBy = held.host;
  if (released.released) {
    const { commit, added, changed, deleted } = released.checkpoint;
    options.poolReleasedMidStep = { step, commit, added, changed, deleted };
  } else if (options.poolReleasedMidStep && isPatched('pool-mid-step-kept')) {
    delete options.poolReleasedMidStep; // not shipped now: an older shipment is not this step's workspace
  }
  run.apply(showDetails);
  return { kind: 'hibernated', step, shipped: released.released };
}

/** Whether a pooled conversation needs a host claimed before a call that does not go through onHost (a rewind's restore). */
export function poolHostDue(run: Pick<ConversationRun, 'options'>): boolean {
  return run.options.pool !== undefined && !run.options.poolHost && isPatched('pooled-workspaces');
}

/** Claims a host of the pool now (asked after poolHostDue). */
export async function takePoolHost(run: PoolHostRun): Promise<void> {
  await claimHost(run, undefined);
}
