// One model call as an activity: the events since the last call travel with it (when small), a
// pause cancels it, and a failure is said in what it returns.
import { FAILURE, failureTypeOf } from '../../../core/failure-types.js';
import type { ModelCallResult } from '../../../core/types.js';
import { MODEL_CALL } from '../activity-options.js';
import { failureMessage } from '../reply.js';
import type { ConversationActivities } from './activity-proxies.js';
import type { ConversationRun } from './conversation-run.js';
import { PHASE_COMMANDS, type Applies } from './phase-commands.js';
import { modelLabel } from '../details.js';
import { chainOf, chainText } from '../../../models/workflow/model-chain.js';

const { eventsSent, modelSaw } = PHASE_COMMANDS.modelCall;

/** What a model call reads and writes of the run. */
export type ModelCallRun = Pick<
  ConversationRun,
  'id' | 'inFlight' | 'halted' | 'metrics' | 'model' | 'offeredTools' | 'options' | 'setup' | 'steps' | 'systemPrompt' | 'recentEvents'
> &
  Applies<'modelCall'>;

/** What came of a model call. */
export type ModelCallOutcome =
  | { kind: 'reply'; reply: ModelCallResult }
  /** Paused or closing: the call is made again on resume. */
  | { kind: 'cancelled' }
  /** `contextExceeded`: the prompt no longer fits the model's context window (any provider). */
  | { kind: 'failed'; message: string; contextExceeded: boolean };

/** Calls the model once (the callModel activity, cancelled by a pause or close); what came of it. */
export async function callModel(run: ModelCallRun, acts: ConversationActivities): Promise<ModelCallOutcome> {
  // The conversation's step this reply will be (not the run's iteration: that restarts every run).
  const step = run.steps + 1;
  const { seen, recent } = run.recentEvents();
  run.apply(eventsSent, seen);
  const setup = run.setup;
  // The Web UI's summary of the call (user metadata: replay does not compare it): the model, or the
  // fallback chain and which model answered the last call when that one fell back.
  const last = run.metrics.calls?.at(-1);
  const chain = chainOf(run.options.agent.llm, setup?.workerModel);
  const model = chain.length > 1 ? chainText(chain) : modelLabel(run.model, setup?.workerModel, last?.model);
  const answered = chain.length > 1 && last?.fallbacks?.length && last.model ? ` · last answered by ${last.model}` : '';
  const called = await run.inFlight.modelCall(
    () =>
      acts.model.callModel.executeWithOptions({ ...MODEL_CALL, summary: `LLM ${model} · step ${step}${answered}` }, [
        {
          conversationId: run.id,
          step,
          llm: run.options.agent.llm,
          systemPrompt: run.systemPrompt,
          eventCount: seen,
          tools: run.offeredTools(),
          ...(setup ? { setupVersion: setup.version } : {}),
          ...(recent ? { recent } : {}),
        },
      ]),
    () => run.halted,
  );
  switch (called.kind) {
    case 'done':
      run.apply(modelSaw, seen);
      return { kind: 'reply', reply: called.value };
    case 'cancelled':
      return { kind: 'cancelled' };
    case 'failed':
      return {
        kind: 'failed',
        message: `model call failed: ${failureMessage(called.error)}`,
        contextExceeded: failureTypeOf(called.error) === FAILURE.ContextWindowExceeded,
      };
  }
}
