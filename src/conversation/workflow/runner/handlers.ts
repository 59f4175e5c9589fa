// The conversation's signals, queries and updates: each handler applies one command to the run
// (./commands.ts); validators and queries read it. The definitions (names, argument types) are in ../messages.ts.
import { condition, setHandler } from '@temporalio/workflow';
import { FAILURE, failure, failureTypeOf } from '../../../core/failure-types.js';
import { HandlerUnfinishedPolicy } from '@temporalio/common';
import type { ChildReport } from '../../../core/types.js';
import { eventsPage } from '../event-log.js';
import { checkImageRefs } from '../../../images/workflow/image-refs.js';
import {
  DESCRIPTIONS,
  addMessageUpdate,
  approveUpdate,
  childStatusSignal,
  closeSignal,
  moveSignal,
  eventRunsQuery,
  eventsQuery,
  messageSignal,
  pauseSignal,
  pauseUpdate,
  rejectUpdate,
  resumeSignal,
  setConfirmationPolicyUpdate,
  runUpdate,
  setupQuery,
  stateQuery,
  waitForChangeUpdate,
  rewindUpdate,
  checkpointsQuery,
  forkPointQuery,
  type WaitRequest,
} from '../messages.js';
import { refusal as confirmationRefusal } from './confirmation-gate.js';
import { rewindOutcome } from '../../../time-travel/workflow/rewind-requests.js';
import type { ConversationRun } from './conversation-run.js';
import {
  askMove,
  childReported,
  close,
  decide,
  message,
  pause,
  receiveMessage,
  requestRun,
  resume,
  rewind,
  setConfirmationPolicy,
  takeRewind,
} from './commands.js';

/** An update refused by its validator: the one InvalidRequest failure, its message the reason clients show. */
function refuse(reason: string): never {
  throw failure(FAILURE.InvalidRequest, reason);
}

/** Runs a check that throws with its reason (a message's text, say) as a validator: a refusal is InvalidRequest. */
function refuseIfThrows(check: () => unknown): void {
  try {
    check();
  } catch (err) {
    if (failureTypeOf(err) === FAILURE.InvalidRequest) throw err;
    refuse((err as Error).message);
  }
}

/** Registers every handler of the conversation workflow on `run`. */
export function registerHandlers(run: ConversationRun): void {
  setHandler(approveUpdate, () => ({ approved: run.apply(decide, { approved: true }) }), {
    description: DESCRIPTIONS.approve,
    validator: () => {
      const refusal = confirmationRefusal(run.confirmation);
      if (refusal) refuse(refusal);
      if (run.status !== 'waiting_for_confirmation') refuse(`the conversation is ${run.status}; resume it first, then approve`);
    },
  });
  setHandler(rejectUpdate, (reason: string) => ({ rejected: run.apply(decide, { approved: false, ...(reason ? { reason } : {}) }) }), {
    description: DESCRIPTIONS.reject,
    validator: (_reason: string) => {
      const refusal = confirmationRefusal(run.confirmation);
      if (refusal) refuse(refusal);
    },
  });
  setHandler(setConfirmationPolicyUpdate, (policy) => ({ confirmationPolicy: run.apply(setConfirmationPolicy, policy) }), {
    description: DESCRIPTIONS.setConfirmationPolicy,
    validator: (policy) => {
      if (policy !== 'never' && policy !== 'risky' && policy !== 'always') {
        refuse(`the confirmation policy must be never, risky or always, not ${JSON.stringify(policy)}`);
      }
      if (run.closeRequested) refuse('the conversation is closed');
    },
  });

  setHandler(messageSignal, (text, images?) => run.apply(receiveMessage, text, images), { description: DESCRIPTIONS.message });
  setHandler(pauseSignal, (request) => run.apply(pause, request ?? {}), { description: DESCRIPTIONS.pause });
  setHandler(
    pauseUpdate,
    (request) => {
      run.apply(pause, request ?? {});
      return { status: run.status };
    },
    { description: DESCRIPTIONS.pauseApplied },
  );
  setHandler(resumeSignal, () => run.apply(resume), { description: DESCRIPTIONS.resume });
  setHandler(closeSignal, () => run.apply(close), { description: DESCRIPTIONS.close });
  setHandler(moveSignal, () => run.apply(askMove), { description: DESCRIPTIONS.moveToCurrentVersion });
  setHandler(childStatusSignal, (report: ChildReport) => run.apply(childReported, report), { description: DESCRIPTIONS.childStatus });

  setHandler(stateQuery, () => run.snapshot(), { description: DESCRIPTIONS.state });
  // The output schema is the options' (the worker reads both through this one cached query).
  setHandler(
    setupQuery,
    () => (run.setup && run.options.outputSchema ? { ...run.setup, outputSchema: run.options.outputSchema } : (run.setup ?? null)),
    {
      description: DESCRIPTIONS.setup,
    },
  );
  setHandler(eventRunsQuery, () => [...run.runs], { description: DESCRIPTIONS.eventRuns });
  setHandler(eventsQuery, (fromIndex = 0, limit = 10_000) => eventsPage(run.log.from(Math.max(0, fromIndex)), limit), {
    description: DESCRIPTIONS.events,
  });

  setHandler(addMessageUpdate, (text, images?) => ({ index: run.apply(message, text, checkImageRefs(images)), status: run.status }), {
    description: DESCRIPTIONS.addMessage,
    validator: (text, images?) =>
      refuseIfThrows(() => {
        run.validateMessage(text);
        checkImageRefs(images);
      }),
  });
  // Clients wait here instead of polling: each wait is one update, answered when there is news.
  setHandler(
    waitForChangeUpdate,
    async (request: WaitRequest) => {
      await condition(() => waitIsOver(run, request));
      return { events: run.log.count, status: run.status, runNumber: run.runNumber };
    },
    {
      description: DESCRIPTIONS.waitForChange,
      // A client that went away leaves nothing to finish: the workflow may complete or continue without it.
      unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
      validator: (request: WaitRequest) => {
        const numbers = [request?.afterEvents, request?.afterRun].filter((n) => n !== undefined);
        if (numbers.some((n) => !Number.isFinite(Number(n)))) refuse('afterEvents and afterRun must be numbers');
        if (request?.afterEvents === undefined && request?.whenStopped !== true) refuse('give afterEvents or whenStopped');
      },
    },
  );
  setHandler(
    rewindUpdate,
    async (request: { to: number }) => {
      // What is running stops (as a pause --now), actions waiting are rejected, sub-agents close; the loop then rewinds.
      const id = run.apply(rewind, request.to);
      await condition(() => run.rewindAnswered(id) || run.draining);
      return rewindOutcome(run.apply(takeRewind, id));
    },
    {
      description: DESCRIPTIONS.rewind,
      validator: (request: { to: number }) => {
        const refusal = run.rewindRefusal(request?.to);
        if (refusal) refuse(refusal);
      },
    },
  );
  setHandler(checkpointsQuery, () => run.checkpoints.all().map(({ toolState: _state, ...entry }) => entry), {
    description: DESCRIPTIONS.checkpoints,
  });
  setHandler(
    forkPointQuery,
    (step: number) => {
      const checkpoint = run.checkpoints.active(step);
      return checkpoint?.commit ? { options: run.currentOptions(), checkpoint } : null;
    },
    { description: DESCRIPTIONS.forkPoint },
  );
  setHandler(
    runUpdate,
    () => {
      run.apply(requestRun);
      return { runNumber: run.runNumber, status: run.status };
    },
    {
      description: DESCRIPTIONS.run,
      validator: () => {
        if (run.closeRequested) refuse('the conversation is closed');
      },
    },
  );
}

/** Whether a `waitForChange` request has its news (or the run is ending, so it must answer now). */
function waitIsOver(run: ConversationRun, request: WaitRequest): boolean {
  const after = request?.afterEvents;
  const afterRun = request?.afterRun;
  return (
    run.draining ||
    run.closeRequested ||
    (after !== undefined && run.log.count > after) ||
    (request?.whenStopped === true && (run.status !== 'running' || (afterRun !== undefined && run.runNumber > afterRun)))
  );
}
