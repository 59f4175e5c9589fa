// Actions that wait for the user's approval: which ones, the answer once given, and the wait itself.
import type { Actor } from '../../../client/tenants.js';
import type { ActionEvent, ConfirmationPolicy, ToolCallPlan } from '../../../core/types.js';
import { WORKFLOW_TOOLS } from '../../../tools/in-workflow.js';
import { needsConfirmation } from '../confirmation.js';
import { formatDuration, summarizeArgs } from '../details.js';
import { conditionHibernating, type WaitHibernation } from './wait-hibernating.js';

/** The user's answer to actions waiting for confirmation. */
export interface Decision {
  approved: boolean;
  reason?: string;
  /** Who answered, when it came through the team API: the events the answer leads to name them. */
  by?: Actor;
}

/** The actions of the current reply waiting for approve / reject, and the answer once given. */
export class ConfirmationGate {
  private actions: ActionEvent[] = [];
  private decision: Decision | undefined;

  /** The actions waiting (empty when none). */
  get pending(): readonly ActionEvent[] {
    return this.actions;
  }

  /** The waiting actions as the `state` query shows them. */
  pendingView(): { toolCallId: string; tool: string; arguments: unknown }[] {
    return this.actions.map((a) => ({ toolCallId: a.toolCallId, tool: a.tool, arguments: a.arguments }));
  }

  /** One line for the status event: what needs approval. */
  describe(): string {
    return `${this.actions.length} action(s) need approval: ${this.actions.map((a) => `${a.tool} ${summarizeArgs(a.arguments)}`).join('; ')}`;
  }

  /** Why approve / reject cannot be answered now, or undefined when it can. */
  refusal(): string | undefined {
    return this.actions.length === 0 || this.decision ? 'nothing is waiting for confirmation' : undefined;
  }

  /** Records the answer; how many actions it covers. */
  answer(decision: Decision): number {
    this.decision = decision;
    return this.actions.length;
  }

  /** Whether the policy asks the user about any of these actions. */
  asks(
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

  /** These actions now wait for approve / reject (the caller then sets the status and waits). */
  open(actions: ActionEvent[]): void {
    this.actions = actions;
    this.decision = undefined;
  }

  /**
   * Waits for approve / reject of the actions opened (or `closing`, or the timeout, which reject);
   * the answer, and whether the user gave it (`answered`). With `hibernation`, a pooled
   * conversation gives its host folder back while the answer is long in coming.
   */
  async wait(
    timeoutMs: number | undefined,
    closing: () => boolean,
    hibernation?: WaitHibernation,
  ): Promise<Decision & { answered: boolean }> {
    const answered = await conditionHibernating(
      () => this.decision !== undefined || closing(),
      timeoutMs,
      `waiting for confirmation (rejected after ${formatDuration(timeoutMs ?? 0)})`,
      hibernation,
    );
    const given = this.decision;
    const answer = given ?? {
      approved: false,
      reason: answered ? 'the conversation was closed' : `no answer within ${formatDuration(timeoutMs ?? 0)}`,
    };
    this.actions = [];
    this.decision = undefined;
    return { ...answer, answered: given !== undefined };
  }
}
