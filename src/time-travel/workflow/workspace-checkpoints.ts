// Time travel in the loop: a checkpoint of the workspace per step (an activity on its host), a
// rewind (the workspace put back, later steps out of the prompt), and a fork's workspace made from
// its source's checkpoint before anything runs.
import type { CheckpointInfo } from '../types.js';
import { CHECKPOINT } from '../../conversation/workflow/activity-options.js';
import { isPatched } from '../../conversation/workflow/legacy/patches.js';
import { failureMessage } from '../../conversation/workflow/reply.js';
import { NOT_UNDONE } from './rewind-rules.js';
import { onHostQueue, type ConversationActivities } from '../../conversation/workflow/runner/activity-proxies.js';
import type { ConversationRun } from '../../conversation/workflow/runner/conversation-run.js';
import { PHASE_COMMANDS, type Applies } from '../../conversation/workflow/runner/phase-commands.js';

const { answerRewind, fail, forkMade, record, recordCheckpoint, recordRewind } = PHASE_COMMANDS.checkpoint;

/** What checkpoints, rewinds and a fork's workspace read and write of the run. */
export type CheckpointRun = Pick<
  ConversationRun,
  'checkpoints' | 'forkMade' | 'id' | 'input' | 'options' | 'pendingRewind' | 'stepCheckpoints' | 'steps'
> &
  Applies<'checkpoint'>;

/** What came of a step's checkpoint. */
export type CheckpointOutcome =
  /** Recorded now (a snapshot, or the previous commit again when nothing ran on the host). */
  | { kind: 'recorded'; step: number }
  /** Not taken: an error event says why, and the step cannot be rewound to. */
  | { kind: 'failed'; step: number }
  /** Queued behind the checkpoint in flight: it runs while the next model call does. */
  | { kind: 'queued'; step: number };

/** What came of a rewind asked for. */
export type RewindOutcome = { kind: 'none' } | { kind: 'rewound'; toStep: number } | { kind: 'failed'; message: string };

/** What came of making a fork's workspace (a failure is the conversation's error). */
export type ForkWorkspaceOutcome = { kind: 'made' } | { kind: 'failed'; message: string };

/** Whether this conversation takes checkpoints (an option, and not in histories from before them). */
function checkpointsOn(run: CheckpointRun): boolean {
  return run.options.checkpoints !== false && isPatched('checkpoints');
}

// The callers ask the synchronous `…Due` first and only await when one is due: an await that
// resolves at once still moves this task's commands after an update's answer, which old
// histories (recorded without checkpoints) must replay in their order.

/** Whether the checkpoint before the first step (step 0) is still to take. */
export function firstCheckpointDue(run: CheckpointRun): boolean {
  return run.steps === 0 && run.checkpoints.all().length === 0 && checkpointsOn(run);
}

/**
 * Whether the setup (prepareTools on the host, the first turn's) takes the checkpoint before the
 * first step with it. Asked before the setup is scheduled; the new patch first, so that a history
 * from before it asks nothing else here (its `checkpoints` marker comes after the setup).
 */
export function firstCheckpointWithSetup(run: CheckpointRun): boolean {
  return (
    run.steps === 0 &&
    run.checkpoints.all().length === 0 &&
    run.options.checkpoints !== false &&
    isPatched('checkpoint-with-tool') &&
    firstCheckpointDue(run)
  );
}

/** The checkpoint before the first step (step 0). */
export async function checkpointBeforeFirstStep(run: CheckpointRun, acts: ConversationActivities): Promise<CheckpointOutcome> {
  return checkpoint(run, acts, 0, true);
}

/** Whether a step's checkpoint is taken at all. */
export function stepCheckpointDue(run: CheckpointRun): boolean {
  return checkpointsOn(run);
}

/**
 * The checkpoint of the step just taken: a snapshot when it ran something on the workspace host
 * (files may have changed, shell commands included), else the previous commit again. Queued, not
 * awaited: it runs while the next model call does (the turn awaits it before the reply's events).
 */
export function checkpointAfterStep(run: CheckpointRun, acts: ConversationActivities, touchedHost: boolean): CheckpointOutcome {
  const step = run.steps;
  run.stepCheckpoints.queue(() => checkpoint(run, acts, step, touchedHost));
  return { kind: 'queued', step };
}

/**
 * Whether `action` (the step's last host call) takes the step's checkpoint with it: no activity of
 * its own. Not when something may still change files after it: a PostToolUse hook, sub-agents.
 */
export function foldCheckpointInto(run: CheckpointRun, postHooks: boolean, subAgents: boolean): boolean {
  // The new patch first: a history from before it answers false here and asks nothing else.
  return !postHooks && !subAgents && run.options.checkpoints !== false && isPatched('checkpoint-with-tool') && stepCheckpointDue(run);
}

/**
 * The step's checkpoint when its last host call brought it back (else checkpointAfterStep): recorded
 * now, or behind a checkpoint still in flight (the previous step's), so their events stay in order.
 */
export function recordFoldedCheckpoint(run: CheckpointRun, info: CheckpointInfo): CheckpointOutcome {
  const step = run.steps;
  const recordIt = () =>
    run.apply(recordCheckpoint, step, { commit: info.commit, added: info.added, changed: info.changed, deleted: info.deleted });
  if (run.stepCheckpoints.pending) {
    run.stepCheckpoints.queue(() => Promise.resolve(recordIt()));
    return { kind: 'queued', step };
  }
  recordIt();
  return { kind: 'recorded', step };
}

async function checkpoint(run: CheckpointRun, acts: ConversationActivities, step: number, snapshot: boolean): Promise<CheckpointOutcome> {
  // Hibernated in the middle of this step, and nothing ran on a host since: the workspace shipped
  // then is as the step left it (no host holds a folder to take another from).
  const shipped = run.options.poolReleasedMidStep;
  if (shipped?.step === step && !run.options.poolHost) {
    const { commit, added, changed, deleted } = shipped;
    run.apply(recordCheckpoint, step, { commit, added, changed, deleted });
    return { kind: 'recorded', step };
  }
  const previous = run.checkpoints.latestCommit();
  if (!snapshot && previous) {
    run.apply(recordCheckpoint, step, { commit: previous, added: 0, changed: 0, deleted: 0 });
    return { kind: 'recorded', step };
  }
  let info: CheckpointInfo;
  try {
    // Not cancellable by a pause: a pause right after a step still gets that step's checkpoint.
    info = await acts.tool.checkpointWorkspace.executeWithOptions(
      {
        ...CHECKPOINT,
        ...onHostQueue(run.options),
        summary: `checkpoint of step ${step}`,
      },
      [{ conversationId: run.id, workspace: run.options.workspace, step }],
    );
  } catch (err) {
    run.apply(record, {
      kind: 'error',
      source: 'environment',
      message: `checkpoint of step ${step} not taken (this step cannot be rewound to): ${failureMessage(err)}`,
    });
    run.apply(recordCheckpoint, step, { added: 0, changed: 0, deleted: 0 });
    return { kind: 'failed', step };
  }
  run.apply(recordCheckpoint, step, { commit: info.commit, added: info.added, changed: info.changed, deleted: info.deleted });
  return { kind: 'recorded', step };
}

/**
 * Carries out the pending rewind (the loop calls this once the run has stopped): the workspace as
 * after the step, the later steps out of the prompt, the conversation paused. Answers the request.
 */
export async function performRewind(run: CheckpointRun, acts: ConversationActivities): Promise<RewindOutcome> {
  const request = run.pendingRewind;
  if (!request) return { kind: 'none' };
  const entry = run.checkpoints.active(request.to);
  if (!entry?.commit) {
    const message = `step ${request.to} has no checkpoint any more`;
    run.apply(answerRewind, request.id, { error: message });
    return { kind: 'failed', message };
  }
  try {
    const restored = await acts.tool.restoreWorkspace.executeWithOptions(
      {
        ...CHECKPOINT,
        ...onHostQueue(run.options),
        summary: `rewind the workspace to step ${request.to}`,
      },
      [{ conversationId: run.id, workspace: run.options.workspace, commit: entry.commit, rewindId: `rewind-${request.id}` }],
    );
    const answer = run.apply(recordRewind, entry, {
      before: restored.before.commit,
      notUndone: NOT_UNDONE,
      workspace: run.options.workspace,
    });
    run.apply(answerRewind, request.id, { answer });
    return { kind: 'rewound', toStep: answer.toStep };
  } catch (err) {
    const message = `rewind to step ${request.to} failed: ${failureMessage(err)}`;
    run.apply(record, { kind: 'error', source: 'environment', message });
    run.apply(answerRewind, request.id, { error: message });
    return { kind: 'failed', message };
  }
}

/** Whether this conversation is a fork whose workspace is still to make. */
export function forkWorkspaceDue(run: CheckpointRun): boolean {
  return run.input.fork !== undefined && !run.forkMade;
}

/** A fork's workspace: the source's checkpoint written into this conversation's own directory. */
export async function makeForkWorkspace(run: CheckpointRun, acts: ConversationActivities): Promise<ForkWorkspaceOutcome> {
  const fork = run.input.fork;
  if (!fork) return { kind: 'made' };
  try {
    await acts.tool.forkWorkspace.executeWithOptions(
      {
        ...CHECKPOINT,
        ...onHostQueue(run.options),
        summary: `workspace from ${fork.origin.id} at step ${fork.origin.step}`,
      },
      [
        {
          workspace: fork.sourceWorkspace,
          conversationId: fork.origin.id,
          commit: fork.origin.commit,
          newConversationId: run.id,
          target: run.options.workspace,
        },
      ],
    );
    run.apply(forkMade, run.options.workspace);
    return { kind: 'made' };
  } catch (err) {
    const message = `could not make the fork's workspace ${run.options.workspace}: ${failureMessage(err)}`;
    run.apply(fail, message, { event: true });
    return { kind: 'failed', message };
  }
}
