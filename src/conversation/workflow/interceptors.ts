// The workflow interceptors of every bundle (scripts/bundle-workflows.mjs, src/worker/workflow-source.ts):
// an update's acceptance goes after the other commands of the activation it arrived in.
//
// Why (issue 23): a legacy query answered while a workflow task waits (its sticky worker died) runs
// the workflow past the last completed task: a timer's firing, say, schedules the next model call
// then, before the task that delivers an update. That task's commands are the call, then the
// acceptance. On replay Temporal's core hands the timer and the update to one activation, and the
// SDK accepts an update as soon as its job runs: acceptance first, a nondeterminism error
// ("Update machine does not handle this event"). Accepting last in every activation gives one
// order both ways.
//
// And who acts: a start, signal or update that carries the `faheem-by` header (src/client/acting.ts, the
// team API's calls) makes its actor current while the handler's synchronous part runs, where
// ConversationRun.apply stamps it on the events recorded (./actor.ts). Reading a header is no
// command: histories replay as they were.
import { workflowInfo, type WorkflowInboundCallsInterceptor, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { coresdk } from '@temporalio/proto';
import { actorFromHeaders } from '../../client/actor-header.js';
import { actingIn, setStartActor } from './actor.js';
import { isPatched } from './legacy/patches.js';

type Command = coresdk.workflow_commands.IWorkflowCommand;

/** Commands that end the run: they stay last. */
function endsRun(c: Command): boolean {
  return Boolean(c.completeWorkflowExecution || c.failWorkflowExecution || c.continueAsNewWorkflowExecution || c.cancelWorkflowExecution);
}

/**
 * One activation's commands with each update accepted in it moved after the others: the other
 * commands, the acceptances, then what those updates answered in the same activation, then a
 * command that ends the run. Each group keeps its order.
 */
export function acceptUpdatesLast(commands: Command[]): Command[] {
  const accepted = new Set(commands.flatMap((c) => (c.updateResponse?.accepted ? [c.updateResponse.protocolInstanceId] : [])));
  if (accepted.size === 0) return commands;
  const rest: Command[] = [];
  const accepts: Command[] = [];
  const answers: Command[] = [];
  const ends: Command[] = [];
  for (const c of commands) {
    if (c.updateResponse?.accepted) accepts.push(c);
    else if (c.updateResponse && accepted.has(c.updateResponse.protocolInstanceId)) answers.push(c);
    else if (endsRun(c)) ends.push(c);
    else rest.push(c);
  }
  return [...rest, ...accepts, ...answers, ...ends];
}

/**
 * Makes the actor a call's header names (or none) current while its handler runs; the start's is
 * kept for the workflow function. Validators run as no one: they record nothing.
 */
export const actorInbound: WorkflowInboundCallsInterceptor = {
  execute(input, next) {
    setStartActor(actorFromHeaders(input.headers));
    return next(input);
  },
  handleSignal(input, next) {
    return actingIn(actorFromHeaders(input.headers), () => next(input));
  },
  handleUpdate(input, next) {
    return actingIn(actorFromHeaders(input.headers), () => next(input));
  },
};

/**
 * The interceptors of one workflow run. For a conversation started by this code (patch
 * `accept-updates-last`, asked in its first activation, so old histories keep their order) the
 * commands of each activation go through {@link acceptUpdatesLast}. Calls carry their actor
 * ({@link actorInbound}).
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  let reorder = false;
  let asked = false;
  return {
    inbound: [actorInbound],
    internals: [
      {
        activate(input, next) {
          if (!asked) {
            asked = true;
            // First activation: the marker, if any, is this run's first command.
            reorder = workflowInfo().workflowType === 'conversation' && isPatched('accept-updates-last');
          }
          next(input);
        },
        concludeActivation(input, next) {
          const output = next(input);
          return reorder ? { ...output, commands: acceptUpdatesLast(output.commands) } : output;
        },
      },
    ],
  };
};
