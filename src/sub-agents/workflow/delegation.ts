// Sub-agents: the pure rules (ids, which tools a child gets, limits, what the parent reads). The
// workflow starts and awaits the children; these decide what they are.
import type { ConversationInput, ConversationState } from '../../core/types.js';

export const DEFAULT_MAX_DEPTH = 2;

/** Deterministic, so a replayed or retried delegate call never starts a second child. */
export function childId(parentId: string, n: number): string {
  return `${parentId}.sub-${n}`;
}

/**
 * The child's tools: the requested subset of the parent's (all of them by default), without
 * `delegate` once the child would be at the depth limit. A name the parent lacks is an error.
 */
export function childTools(
  parentTools: readonly string[],
  requested: readonly string[] | undefined,
  childDepth: number,
  maxDepth: number,
): { tools: string[] } | { error: string } {
  const unknown = (requested ?? []).filter((t) => !parentTools.includes(t));
  if (unknown.length > 0) {
    return { error: `The sub-agent can only get tools you have; not: ${unknown.join(', ')}. Yours: ${parentTools.join(', ')}.` };
  }
  const base = requested ? [...new Set([...requested, 'think', 'finish'])] : [...parentTools];
  return { tools: childDepth >= maxDepth ? base.filter((t) => t !== 'delegate') : base };
}

/**
 * The child's iteration limit: what it was asked for, within its share of what the parent has left
 * in this run (split among the children of one reply, one call kept for the parent to read them).
 */
export function childMaxIterations(requested: number | undefined, parentMax: number, parentUsed: number, siblings = 1): number {
  const share = Math.max(1, Math.floor((parentMax - parentUsed - 1) / Math.max(1, siblings)));
  return Math.min(requested ?? share, share);
}

/** What the parent's model reads when a child has ended. */
export function childObservation(
  childId: string,
  state: Pick<ConversationState, 'status' | 'finalMessage' | 'lastError'>,
): { content: string; isError: boolean } {
  if (state.status === 'finished')
    return { content: state.finalMessage ?? '(the sub-agent finished without a final message)', isError: false };
  const why = state.lastError ? `: ${state.lastError}` : '';
  if (state.status === 'error') return { content: `The sub-agent ${childId} stopped with an error${why}`, isError: true };
  if (state.status === 'stuck') return { content: `The sub-agent ${childId} got stuck${why}`, isError: true };
  return { content: `The sub-agent ${childId} ended while ${state.status}${why}`, isError: true };
}

/** A child's status counts as ended (it completes its workflow) in these. */
export function childHasEnded(status: string): boolean {
  return status === 'finished' || status === 'error' || status === 'stuck';
}

export interface ChildRequest {
  parentId: string;
  /** The parent's depth (0 for a top-level conversation). */
  depth: number;
  task: string;
  /** The tools granted (see childTools); `requested` says whether the model chose them. */
  tools: string[];
  requested: boolean;
  maxIterations: number;
  /** What the parent's run may still spend, if it has a budget. */
  budgetLeft: number | undefined;
}

/**
 * The child conversation's input: the parent's options with the granted tools, its share of the
 * iterations and budget, and the task as its first message. MCP servers go along only if the child
 * may use some of their tools (all of them by default).
 */
export function childInput(parent: ConversationInput['options'], r: ChildRequest): ConversationInput {
  const inherited: ConversationInput['options'] = { ...parent };
  delete inherited.mcpServers;
  // The workspace the parent shipped when it hibernated mid-step is the parent's to restore.
  delete inherited.poolReleasedMidStep;
  // The webhook is the parent's: its receiver hears of the parent's stops, not of each sub-agent's.
  delete inherited.webhook;
  // The output schema is the parent's final answer's: a sub-agent reports in prose.
  delete inherited.outputSchema;
  const withMcp = parent.mcpServers && (!r.requested || r.tools.some((t) => t.startsWith('mcp__')));
  return {
    options: {
      ...inherited,
      ...(withMcp ? { mcpServers: parent.mcpServers } : {}),
      agent: { ...parent.agent, tools: r.tools, hostTools: false },
      maxIterations: r.maxIterations,
      parent: { id: r.parentId, depth: r.depth + 1 },
      ...(r.budgetLeft === undefined ? {} : { maxBudgetPerRunUsd: r.budgetLeft }),
    },
    firstMessage: r.task,
    run: true,
  };
}
