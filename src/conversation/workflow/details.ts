// The text the Web UI shows as the conversation's current details, and the small formatting it
// needs. Pure: the workflow passes a view of its state.
import { actorText } from '../../client/actors.js';
import { oneLine, reasoningText } from '../../core/text.js';
import type { Actor } from '../../client/tenants.js';
import type { ActionEvent, ReasoningBlock, ChildSummary, ConversationStatus, Metrics } from '../../core/types.js';

/** The last change someone made through the team API: who, and the event that says what. */
export interface LastChange {
  by: Actor;
  kind: string;
  index: number;
}

export interface DetailsView {
  status: ConversationStatus;
  lastError: string | null;
  iterations: number;
  maxIterations: number;
  runNumber: number;
  lastAction: ActionEvent | undefined;
  /** The workspace host's queue while no worker there picks up our call. */
  waitingForHost: string | null;
  /** The agent's `wait` in progress. */
  waitingUntil?: { until: string; reason: string } | undefined;
  pendingMessages: number;
  children: readonly ChildSummary[];
  parentId: string | undefined;
  metrics: Metrics;
  /** Who changed the conversation last through the team API (absent when no one has). */
  lastChange?: LastChange | undefined;
  /** With an output schema: the answer's checked JSON value. */
  output?: unknown;
}

export function detailsText(v: DetailsView): string {
  return [
    `**Status:** ${v.status}${v.lastError && (v.status === 'error' || v.status === 'stuck') ? ` — ${v.lastError}` : ''}`,
    `**Step:** ${v.iterations} of ${v.maxIterations} (run ${v.runNumber})`,
    v.lastAction ? `**Last action:** \`${v.lastAction.tool}\` ${summarizeArgs(v.lastAction.arguments)}` : '',
    v.lastAction?.reasoning ? thinkingLine(v.lastAction.reasoning) : '',
    v.waitingUntil ? `**Waiting until** ${v.waitingUntil.until} (${v.waitingUntil.reason})` : '',
    v.waitingForHost ? `**Waiting for workspace host** \`${v.waitingForHost}\`: no worker there has picked up the next call` : '',
    `**Pending messages:** ${v.pendingMessages}`,
    v.children.length > 0 ? `**Sub-agents:** ${v.children.map((c) => `\`${c.id}\` ${c.status}`).join(', ')}` : '',
    v.parentId ? `**Parent:** \`${v.parentId}\`` : '',
    v.lastChange ? lastChangeLine(v.lastChange) : '',
    v.output !== undefined ? `**Output:** \`${oneLine(JSON.stringify(v.output), 300).replace(/`/g, "'")}\`` : '',
    `**Tokens:** ${v.metrics.promptTokens} in (${v.metrics.cacheReadTokens} from the cache) / ${v.metrics.completionTokens} out · **Cost:** $${v.metrics.accumulatedCost.toFixed(4)}`,
    lastCall(v.metrics),
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** Who made the last change through the team API (a tenant and a key's id or name: printable, no backquotes). */
function lastChangeLine(c: LastChange): string {
  return `**Last change:** ${c.kind} (event #${c.index}) by \`${actorText(c.by)}\``;
}

/** The reasoning (summaries, thinking) behind the last action, shortened. */
function thinkingLine(reasoning: readonly ReasoningBlock[]): string {
  const text = reasoningText(reasoning);
  return text ? `**Thinking:** ${oneLine(text, 300)}` : '';
}

/** The newest model call: model, tokens, cost. */
function lastCall(m: Metrics): string {
  const c = m.calls?.[m.calls.length - 1];
  if (!c) return '';
  const fellBack = c.fallbacks?.length ? ` · fallback after ${c.fallbacks.join(', ')}` : '';
  return `**Last call:** ${c.model ?? 'model'}${fellBack} · ${c.promptTokens} in / ${c.completionTokens} out · $${c.cost.toFixed(4)} · ${c.latencyMs} ms${c.truncated ? ' · cut by the output cap' : ''}`;
}

/** A tool call's main argument (command, path, message), shortened for one line. */
export function summarizeArgs(args: unknown): string {
  if (args && typeof args === 'object') {
    const a = args as Record<string, unknown>;
    const main = a.command ?? a.path ?? a.message ?? a.thought;
    if (main !== undefined) return oneLine(String(main), 80);
  }
  return '';
}

export function formatDuration(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 48 ? `${Math.round(h / 24)} days` : h >= 1 ? `${Math.round(h)} hours` : `${Math.round(ms / 60_000)} minutes`;
}

/**
 * The model a model call's summary names: the conversation's own, else the one its host's worker
 * reported at setup (its LLM_MODEL, as configured), else (a setup of an older worker) the one that
 * answered the last call as the provider names it; "the worker's model" only when none is known.
 */
export function modelLabel(conversationModel: string, workerModel: string | undefined, lastCallModel: string | undefined): string {
  return conversationModel || workerModel || lastCallModel || "the worker's model";
}
