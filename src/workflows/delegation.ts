// Sub-agents: the pure rules (ids, which tools a child gets, limits, what the parent reads). The
// workflow starts and awaits the children; these decide what they are.
import type { ConversationState } from '../types.js';

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
export function childObservation(childId: string, state: Pick<ConversationState, 'status' | 'finalMessage' | 'lastError'>): { content: string; isError: boolean } {
  if (state.status === 'finished') return { content: state.finalMessage ?? '(the sub-agent finished without a final message)', isError: false };
  const why = state.lastError ? `: ${state.lastError}` : '';
  if (state.status === 'error') return { content: `The sub-agent ${childId} stopped with an error${why}`, isError: true };
  if (state.status === 'stuck') return { content: `The sub-agent ${childId} got stuck${why}`, isError: true };
  return { content: `The sub-agent ${childId} ended while ${state.status}${why}`, isError: true };
}

/** A child's status counts as ended (it completes its workflow) in these. */
export function childHasEnded(status: string): boolean {
  return status === 'finished' || status === 'error' || status === 'stuck';
}
