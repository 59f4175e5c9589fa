// When an action waits for the user's approval. Pure: the workflow asks, the unit tests check.
import { riskyUnlessRatedLow } from '../../tools/risk.js';
import type { ConfirmationPolicy, ToolCallPlan } from '../../core/types.js';

export interface ActionToConfirm {
  tool: string;
  arguments: unknown;
  /** What the tool's definition said about this call (from the model-call worker); absent in older histories. */
  plan?: ToolCallPlan | undefined;
  /** Runs inside the workflow (think, finish, task_tracker): nothing to approve. */
  inWorkflow: boolean;
  /** The model called a tool the conversation does not have: it will not run. */
  unknown?: boolean;
}

export function needsConfirmation(policy: ConfirmationPolicy, action: ActionToConfirm): boolean {
  if (policy === 'never' || action.inWorkflow || action.unknown) return false;
  if (policy === 'always') return true;
  // risky: the tool's own rule when there is one (needsApproval, MCP annotations)…
  if (action.plan?.needsApproval !== undefined) return action.plan.needsApproval;
  // …otherwise the model's rating: HIGH, and anything unrated, asks.
  return riskyUnlessRatedLow(action.arguments);
}
