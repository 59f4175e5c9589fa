// Condensation: when the prompt has grown past its limits, older events are summarised by an
// activity and replaced, in the model's prompt, by the summary.
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { ActivityProxies } from './activities.js';
import { DEFAULTS, type CondenserOptions, type ConversationOptions } from '../../types.js';
import { MODEL_CALL } from '../activity-options.js';
import type { ConversationLog } from '../conversation-log.js';
import { condensationRange } from '../prompt.js';
import { failureMessage } from '../reply.js';
import type { ConversationRun } from './conversation-run.js';

/** What the condenser remembers between steps. */
export class Condenser {
  constructor(
    /** The prompt tokens of the last model call (0 right after a condensation). */
    public lastPromptTokens: number,
    /** After a failed condensation: do not try again before the prompt holds this many events. */
    public retryAt: number,
  ) {}

  /** The conversation's condenser options; undefined when condensation is off. */
  settings(options: ConversationOptions): CondenserOptions | undefined {
    return options.condenser === false ? undefined : (options.condenser ?? DEFAULTS.condenser);
  }

  /** The condenser's options when the prompt has grown past its limits (kept counts: no walk of the log). */
  due(options: ConversationOptions, log: ConversationLog): CondenserOptions | undefined {
    const c = this.settings(options);
    if (!c) return undefined;
    const visible = log.promptEvents;
    if (visible <= c.maxEvents && this.lastPromptTokens <= c.maxPromptTokens) return undefined;
    if (visible < this.retryAt) return undefined; // it failed recently: try again once the prompt has grown
    return c;
  }

  /** Summarises older events (an activity): the range from the kept head to about half the prompt. True when it did. */
  async condense(run: ConversationRun, c: CondenserOptions, modelActs: ActivityProxies): Promise<boolean> {
    const visible = run.log.promptEvents;
    const range = condensationRange(run.log.held(), c.keepFirst);
    if (!range) return false;
    const folded = range.folds;
    run.inFlight.model = new CancellationScope();
    try {
      const result = await run.inFlight.model.run(() =>
        modelActs.condense.executeWithOptions({ ...MODEL_CALL, summary: `condense events ${range.from}–${range.to - 1}` }, [
          {
            conversationId: run.id,
            llm: run.options.agent.llm,
            from: folded ? folded.forgottenTo : range.from,
            to: range.to,
            ...(folded ? { previousSummary: folded.summary } : {}),
          },
        ]),
      );
      run.recordCondensation(result);
      run.append({
        kind: 'condensation',
        source: 'environment',
        summary: result.summary,
        forgottenFrom: range.from,
        forgottenTo: range.to,
      });
      return true;
    } catch (err) {
      if (isCancellation(err) || modelCallCancelled(run)) return false;
      this.retryAt = visible + Math.max(10, Math.floor(c.maxEvents / 4));
      run.append({
        kind: 'error',
        source: 'environment',
        message: `condensation failed (${failureMessage(err)}); going on with the full context`,
      });
      return false;
    } finally {
      run.inFlight.model = undefined;
    }
  }
}

/** Whether the model call (or condensation, or setup) in flight was cancelled by a pause or close, whatever error it ended in. */
export function modelCallCancelled(run: ConversationRun): boolean {
  return run.inFlight.model?.consideredCancelled === true || run.halted;
}
