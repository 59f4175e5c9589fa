// A conversation with an output schema: what its workflow decides about a final answer that the
// worker checked (src/models/structured-output.ts validates; this module only counts and words). Pure
// and workflow-safe: no validator is loaded into the workflow's bundle.
import type { ConversationEvent } from '../../core/types.js';

/** The name the schema goes by on the wire (OpenAI's `json_schema.name`, Anthropic's forced tool). */
export const OUTPUT_TOOL = 'final_answer';

/** How many answers that do not match are sent back before the conversation ends in `error`. */
export const MAX_OUTPUT_TRIES = 3;

/**
 * How many times in a row the model has been told its answer did not match: the output checks with
 * errors since the last message of the user (a new message starts the count again). `finishes`:
 * the checks without errors (finish was called, the answer was asked for).
 */
export function outputTries(events: readonly ConversationEvent[]): number {
  return outputChecksSinceUser(events).filter((c) => c.errors.length > 0).length;
}

/** How many times since the last user message finish was called instead of an answer (each asked for it). */
export function finishAsks(events: readonly ConversationEvent[]): number {
  return outputChecksSinceUser(events).filter((c) => c.errors.length === 0).length;
}

function outputChecksSinceUser(events: readonly ConversationEvent[]): { errors: string[] }[] {
  const checks: { errors: string[] }[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind !== 'message') continue;
    if (e.source === 'user') break;
    if (e.outputCheck) checks.push(e.outputCheck);
  }
  return checks;
}

/** Whether the model's next call must give the final answer (the last thing it was told is an output check). */
export function answerDue(events: readonly ConversationEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind === 'message') return e.source === 'environment' && e.outputCheck !== undefined;
    if (e.kind === 'action' || e.kind === 'observation') return false;
  }
  return false;
}

/** What the model is told when its answer did not match the schema (try `n`), or, with no errors, that the answer is due. */
export function outputCheckText(errors: readonly string[], tryNumber: number): string {
  if (errors.length === 0)
    return `[output schema] Give the final answer now: only a JSON value matching the output schema (with the ${OUTPUT_TOOL} tool, call it).`;
  return [
    `[output schema] Your final answer does not match the output schema (try ${tryNumber} of ${MAX_OUTPUT_TRIES}):`,
    ...errors.map((e) => `- ${e}`),
    `Give the final answer again: only a JSON value matching the schema (with the ${OUTPUT_TOOL} tool, call it).`,
  ].join('\n');
}
