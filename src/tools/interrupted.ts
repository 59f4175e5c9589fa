// One shape for "the tool call was interrupted, here is its output so far", end to end:
//   a tool throws ToolInterruptedError (or any error with a string `partialOutput`),
//   the runTool activity sends the output as the only detail of a CancelledFailure,
//   the workflow turns that failure into the observation `interruptedResult(partial)`.
// Pure, no Node imports: the workflow imports it too.
import { ActivityFailure, CancelledFailure } from '@temporalio/common';
import type { ToolResult } from '../core/types.js';

/** The message of the CancelledFailure an interrupted call ends in. */
export const INTERRUPTED_MESSAGE = 'interrupted by a pause';

/** The output so far that an error carries (ToolInterruptedError, ctx.exec's rejection, a tool's own), or undefined. */
export function partialOutputOf(err: unknown): string | undefined {
  const partial = (err as { partialOutput?: unknown } | null | undefined)?.partialOutput;
  return typeof partial === 'string' ? partial : undefined;
}

/** What the activity throws for an interrupted call: the output so far (already masked and clipped) as its details. */
export function interruptedFailure(partial: string): CancelledFailure {
  return new CancelledFailure(INTERRUPTED_MESSAGE, [partial]);
}

/** The output so far that an interrupted activity sent with its cancellation ('' when none). */
export function interruptedPartial(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof CancelledFailure && typeof e.details?.[0] === 'string') return e.details[0];
  return '';
}

/** What the model reads for a call interrupted by a pause: the output so far, exit code -1. */
export function interruptedResult(partial: string): ToolResult {
  return {
    content: `The command was interrupted by a pause before it finished.${partial ? `\nOutput so far:\n${partial}` : ''}`,
    isError: true,
    exitCode: -1,
  };
}
