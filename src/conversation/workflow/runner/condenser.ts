// Condensation: when the prompt has grown past its limits, older events are summarised by an
// activity and replaced, in the model's prompt, by the summary.
import type { ActivityProxies } from './activity-proxies.js';
import { DEFAULTS, type CondenserOptions, type ConversationOptions } from '../../../core/types.js';
import { MODEL_CALL } from '../activity-options.js';
import { condensationRange } from '../prompt.js';
import { failureMessage } from '../reply.js';
import type { ConversationRun } from './conversation-run.js';
import { PHASE_COMMANDS, type Applies } from './phase-commands.js';

const { condensationFailed, recordCondensation } = PHASE_COMMANDS.condenser;

/** What condensation reads and writes of the run. */
export type CondenserRun = Pick<
  ConversationRun,
  'condenseRetryAt' | 'halted' | 'id' | 'inFlight' | 'lastPromptTokens' | 'log' | 'options'
> &
  Applies<'condenser'>;

/** The conversation's condenser options; undefined when condensation is off. */
export function condenserSettings(options: ConversationOptions): CondenserOptions | undefined {
  return options.condenser === false ? undefined : (options.condenser ?? DEFAULTS.condenser);
}

/**
 * The condenser's options when the prompt has grown past its limits (kept counts: no walk of the
 * log; checked without a promise, since the workflow sandbox records a stack for every promise).
 */
export function condensationDue(run: CondenserRun): CondenserOptions | undefined {
  const c = condenserSettings(run.options);
  if (!c) return undefined;
  const visible = run.log.promptEvents;
  if (visible <= c.maxEvents && run.lastPromptTokens <= c.maxPromptTokens) return undefined;
  if (visible < run.condenseRetryAt) return undefined; // it failed recently: try again once the prompt has grown
  return c;
}

/** What came of a condensation: done, nothing to condense, cancelled (a pause or close), or failed (an error event says so). */
export type CondenseOutcome = { kind: 'condensed' } | { kind: 'nothing' } | { kind: 'cancelled' } | { kind: 'failed' };

/** Summarises older events (an activity): the range from the kept head to about half the prompt. */
export async function condense(run: CondenserRun, c: CondenserOptions, modelActs: ActivityProxies): Promise<CondenseOutcome> {
  const visible = run.log.promptEvents;
  const range = condensationRange(run.log.held(), c.keepFirst);
  if (!range) return { kind: 'nothing' };
  const folded = range.folds;
  const called = await run.inFlight.modelCall(
    () =>
      modelActs.condense.executeWithOptions({ ...MODEL_CALL, summary: `condense events ${range.from}–${range.to - 1}` }, [
        {
          conversationId: run.id,
          llm: run.options.agent.llm,
          from: folded ? folded.forgottenTo : range.from,
          to: range.to,
          ...(folded ? { previousSummary: folded.summary } : {}),
        },
      ]),
    () => run.halted,
  );
  switch (called.kind) {
    case 'done':
      run.apply(recordCondensation, called.value, range);
      return { kind: 'condensed' };
    case 'cancelled':
      return { kind: 'cancelled' };
    case 'failed':
      run.apply(condensationFailed, visible + Math.max(10, Math.floor(c.maxEvents / 4)), failureMessage(called.error));
      return { kind: 'failed' };
  }
}
