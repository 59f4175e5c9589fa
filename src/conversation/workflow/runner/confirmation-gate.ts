// Actions that wait for the user's approval: what the session says of them (./run-state.ts holds
// which ones and the answer once given; the commands askConfirmation, decide and clearConfirmation
// change them), whether the policy asks, and the wait itself, a condition reading the snapshot.
import type { ActionEvent, ConfirmationPolicy, ToolCallPlan } from '../../../core/types.js';
import { WORKFLOW_TOOLS } from '../../../tools/in-workflow.js';
import { needsConfirmation } from '../confirmation.js';
import { formatDuration } from '../details.js';
import { waitingActions, type Confirmation, type Decision } from './run-state.js';
import { conditionHibernating, type WaitHibernation } from './wait-hibernating.js';

export type { Confirmation, Decision } from './run-state.js';
/** The actions waiting (empty when none), and one line for the status event: what needs approval. */
export { waitingActions as pendingActions, confirmationText as describe } from './run-state.js';

/** The waiting actions as the `state` query shows them. */
export function pendingView(confirmation: Confirmation | undefined): { toolCallId: string; tool: string; arguments: unknown }[] {
  return waitingActions(confirmation).map((a) => ({ toolCallId: a.toolCallId, tool: a.tool, arguments: a.arguments }));
}

/** Why approve / reject cannot be answered now, or undefined when it can. */
export function refusal(confirmation: Confirmation | undefined): string | undefined {
  return waitingActions(confirmation).length === 0 || confirmation?.decision ? 'nothing is waiting for confirmation' : undefined;
}

/** Whether the policy asks the user about any of these actions. */
export function asks(
  policy: ConfirmationPolicy,
  actions: readonly ActionEvent[],
  plans: ReadonlyMap<ActionEvent, ToolCallPlan | undefined>,
  offered: readonly string[],
  withSetup: boolean,
): boolean {
  return actions.some((a) =>
    needsConfirmation(policy, {
      tool: a.tool,
      arguments: a.arguments,
      plan: plans.get(a),
      inWorkflow: WORKFLOW_TOOLS.has(a.tool),
      // Only with a setup: older histories asked for unknown tools too, and must replay the same.
      unknown: withSetup && !offered.includes(a.tool),
    }),
  );
}

/** What the wait reads of the run and how it ends it: the answer given (if any), and the command that clears it. */
export interface ConfirmationPort {
  readonly decision: () => Decision | undefined;
  /** Applies clearConfirmation: nothing waits any more. */
  readonly clear: () => void;
}

/**
 * Waits for approve / reject of the actions opened (or `closing`, or the timeout, which reject);
 * the answer, and whether the user gave it (`answered`). Nothing waits once it returns. With
 * `hibernation`, a pooled conversation gives its host folder back while the answer is long in coming.
 */
export async function waitForAnswer(
  port: ConfirmationPort,
  timeoutMs: number | undefined,
  closing: () => boolean,
  hibernation?: WaitHibernation,
): Promise<Decision & { answered: boolean }> {
  const answered = await conditionHibernating(
    () => port.decision() !== undefined || closing(),
    timeoutMs,
    `waiting for confirmation (rejected after ${formatDuration(timeoutMs ?? 0)})`,
    hibernation,
  );
  const given = port.decision();
  const answer = given ?? {
    approved: false,
    reason: answered ? 'the conversation was closed' : `no answer within ${formatDuration(timeoutMs ?? 0)}`,
  };
  port.clear();
  return { ...answer, answered: given !== undefined };
}
