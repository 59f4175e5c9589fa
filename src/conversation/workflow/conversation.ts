// The conversation workflow: one per conversation, workflow id = conversation id. Glue only: the
// state and what may be done to it are in runner/conversation-run.ts, the handlers in
// runner/handlers.ts, one turn (model call and tools) in runner/turn.ts.
import { allHandlersFinished, condition, continueAsNew, makeContinueAsNewFunc, metricMeter, workflowInfo } from '@temporalio/workflow';
import { DEFAULTS, type ConversationInput, type ConversationState } from '../../core/types.js';
import { formatDuration } from './details.js';
import { conversationActivities } from './runner/activity-proxies.js';
import { ConversationRun } from './runner/conversation-run.js';
import { carryStep, drain, start } from './runner/commands.js';
import { checkMessageText } from './messages.js';
import { registerHandlers } from './runner/handlers.js';
import { releaseToolsAtEnd, stopProcessesAfterPause } from './runner/setup.js';
import { forkWorkspaceDue, makeForkWorkspace, performRewind } from '../../time-travel/workflow/workspace-checkpoints.js';
import { applyOutcome, finishMovedStep, takeTurn } from './runner/turn.js';
import { moveToNewVersionDue, targetVersionChanged } from './runner/versioning.js';
import { temporalEffects } from './runner/effects.js';
import { isPatched } from './legacy/patches.js';
import { actingIn, currentActor, startActor } from './actor.js';
import { hibernate, hibernationBound, poolHostDue, takePoolHost } from '../../pool/workflow/pool-host.js';
import { nextMove, type LoopView, type Move, type MoveFrom } from './runner/next-move.js';

/**
 * The conversation workflow: wait until running → one turn → repeat, until closed, idle or continued
 * as new. What comes next is decided by `nextMove` (runner/next-move.ts); this carries the moves out.
 */
export async function conversation(input: ConversationInput): Promise<ConversationState> {
  const { workflowId, runId } = workflowInfo();
  const run = ConversationRun.fromInput(input, {
    workflowId,
    runId,
    effects: temporalEffects,
    patched: isPatched,
    targetVersionChanged,
    actor: currentActor,
  });
  registerHandlers(run);
  // Started through the team API: the first message (and what the start records) names who.
  actingIn(startActor(), () => run.apply(start, input, checkMessageText));
  // Deliveries the previous run left unfinished when it continued as new go again (the receiver
  // drops a repeat by its X-Faheem-Delivery id).
  for (const request of input.webhookBacklog ?? []) run.deliver(request);
  const acts = conversationActivities(run.options);
  const { options } = run;
  // A fork works in a copy of its source's workspace as of the step it was forked at.
  if (forkWorkspaceDue(run)) await makeForkWorkspace(run, acts);
  // Moved to this version mid-step (in a `wait`, or awaiting approval): finish that step first.
  const moved = run.movingStep;
  if (moved) {
    run.apply(carryStep, undefined); // taken up: this run finishes it
    applyOutcome(run, await finishMovedStep(run, acts, moved));
  }

  // A long conversation continues as new so its history stays small; the state travels as input.
  const continueAsNewEvery = options.continueAsNewEverySteps ?? DEFAULTS.continueAsNewEverySteps;
  let turns = 0;
  // Step durations for `faheem_step_duration_seconds` (the metric meter records nothing on replay).
  const stepSeconds = metricMeter.createHistogram(
    'faheem_step_duration_seconds',
    'float',
    's',
    'Duration of one step (model call and its tools)',
  );
  const view: LoopView = {
    get processesStopDue() {
      return run.processesStopDue;
    },
    get rewindPending() {
      return Boolean(run.pendingRewind);
    },
    get status() {
      return run.status;
    },
    get closeRequested() {
      return run.closeRequested;
    },
    isSubAgent: Boolean(options.parent),
    runLimitReached: () => turns >= continueAsNewEvery || workflowInfo().continueAsNewSuggested,
    versionMoveDue: moveToNewVersionDue,
    hibernationBound: () => hibernationBound(run),
  };
  // The moves are carried out inline, each with exactly the awaits the loop always had: one more
  // (an async helper's) would move a turn's first command a microtask later, which can reorder it
  // against an update's answer in a recorded history.
  let from: MoveFrom = 'top';
  let ended: Extract<Move, { kind: 'end' }>;
  for (;;) {
    const move = nextMove(view, from);
    if (move.kind === 'end') {
      ended = move;
      break;
    }
    switch (move.kind) {
      case 'stop-processes':
        // A pause --now (a rewind's too) stops what the conversation left running on its host, once
        // the call in flight has come back: a command past its soft timeout, MCP servers, the kept network.
        await stopProcessesAfterPause(run, acts);
        from = 'stopped-processes';
        break;
      case 'rewind':
        // Carried out once nothing runs (its request paused the conversation).
        if (run.stepCheckpoints.pending) await run.stepCheckpoints.settled();
        // A hibernating pooled conversation takes a host first: the restore runs where its workspace is.
        if (poolHostDue(run)) await takePoolHost(run);
        await performRewind(run, acts);
        from = 'top';
        break;
      case 'hibernate': {
        // A pooled conversation gives its host folder back when paused, or idle past a bound.
        const seen = run.wakeups;
        const woke =
          move.bound > 0 &&
          (await condition(() => run.closeRequested || run.status === 'running' || run.wakeups !== seen, move.bound, {
            summary: `hibernate after ${formatDuration(move.bound)} idle: release the host folder`,
          }));
        if (!woke) {
          if (run.stepCheckpoints.pending) await run.stepCheckpoints.settled();
          await hibernate(run);
        }
        from = 'top';
        break;
      }
      case 'wait-idle': {
        // Idle (or paused, finished, …): wait for something to happen, at most the idle timeout.
        const seen = run.wakeups;
        const woke = await condition(() => run.closeRequested || run.status === 'running' || run.wakeups !== seen, options.idleTimeoutMs, {
          summary: `idle timeout: the conversation completes if nothing happens for ${formatDuration(options.idleTimeoutMs)}`,
        });
        from = woke ? 'woke' : 'idle-timed-out';
        break;
      }
      case 'take-turn': {
        const started = Date.now();
        applyOutcome(run, await takeTurn(run, acts));
        stepSeconds.record((Date.now() - started) / 1000);
        turns++;
        from = 'turn';
        break;
      }
      case 'again':
        from = 'top';
        break;
    }
  }
  // `moving`: onto the deployment's new current version.
  const { end, moving } = ended;

  // The last step's checkpoint is recorded before the run ends (and carried when it continues).
  if (run.stepCheckpoints.pending) await run.stepCheckpoints.settled();
  // A closed pooled conversation gives its host folder back (its steps are in the store).
  if (end === 'closed' && hibernationBound(run) !== undefined) await hibernate(run);
  // The conversation ends: nothing it started on the workspace host outlives it. A pooled conversation
  // that holds no host (hibernated, or just released above) had everything stopped by the release.
  const continuing = end === 'continue-as-new';
  if ((!continuing || run.closeRequested) && run.setup) await releaseToolsAtEnd(run, acts);
  // A conversation that ends has its stops delivered first (bounded: a delivery gives up after 10 minutes).
  if (!continuing && run.webhooks.pending) await run.webhooks.settled();
  // Never continue (or complete) with an update half-handled; signals that arrive meanwhile are
  // handled first (the server rejects a completion that races a new signal, and the task re-runs).
  // Waiting clients are answered now (they ask the next run).
  run.apply(drain);
  await condition(allHandlersFinished);
  if (continuing && !run.closeRequested) {
    // Deliveries still under way go with the next run, which sends them again: a receiver that is
    // down holds up nothing.
    const { webhookBacklog: _sent, ...rest } = input;
    const backlog = run.webhooks.unfinished;
    const next: ConversationInput = { ...rest, carried: run.toCarried(), ...(backlog.length > 0 ? { webhookBacklog: [...backlog] } : {}) };
    // Onto the new version: the next run's first task goes to the deployment's current version.
    if (moving) await makeContinueAsNewFunc<typeof conversation>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(next);
    await continueAsNew<typeof conversation>(next);
  }
  // A stop a handler made while the run drained (or with a close that came then) is delivered too.
  if (run.webhooks.pending) await run.webhooks.settled();
  return run.snapshot();
}
