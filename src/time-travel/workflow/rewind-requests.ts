// Rewinds asked for through the rewind update: at most one at a time, and each answer kept until the
// update that asked reads it (the loop carries the rewind out, workspace-checkpoints.ts). The data
// is the run's session (conversation/workflow/runner/run-state.ts: `Rewinds`), changed only by
// commands (rewind, answerRewind, takeRewind, and close and drain, which fail the pending one);
// these are the pure reads of it.
import { FAILURE, failure } from '../../core/failure-types.js';
import type { RewindResult, Rewinds } from '../../conversation/workflow/runner/run-state.js';
import type { RewindAnswer } from './rewind-rules.js';

/** Whether rewind `id` has its answer (done, or why not). */
export function rewindAnswered(rewinds: Rewinds, id: number): boolean {
  return Object.hasOwn(rewinds.answers, id);
}

/** The answer the asker reads (takeRewind's value): a failed rewind fails the update with its reason. */
export function rewindOutcome(result: RewindResult | undefined): RewindAnswer {
  if (!result?.answer) throw failure(FAILURE.RewindFailed, result?.error ?? 'the rewind did not happen');
  return result.answer;
}
