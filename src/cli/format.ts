// Human-readable, coloured rendering of events and state for the CLI.
import pc from 'picocolors';
import { actorText } from '../client/actors.js';
import { reasoningText } from '../core/text.js';
import type { CallSummary, ConversationEvent, ConversationState } from '../core/types.js';

const STATUS_COLOR: Record<string, (s: string) => string> = {
  running: pc.green,
  paused: pc.yellow,
  waiting_for_confirmation: pc.yellow,
  finished: pc.cyan,
  error: pc.red,
  stuck: pc.red,
  idle: pc.dim,
};

export function colorStatus(status: string): string {
  return (STATUS_COLOR[status] ?? ((s: string) => s))(status);
}

function clip(text: string, max = 600): string {
  return text.length > max ? `${text.slice(0, max)}${pc.dim(` … (${text.length - max} more characters)`)}` : text;
}

/** One event as the CLI prints it (`faheem events`, `--follow`): its text, then who made it, if someone did through the team API. */
export function formatEvent(e: ConversationEvent): string {
  return e.by ? `${eventText(e)}${pc.dim(` · by ${actorText(e.by)}`)}` : eventText(e);
}

function eventText(e: ConversationEvent): string {
  const time = pc.dim(e.timestamp.slice(11, 19));
  const n = pc.dim(`#${e.index}`.padStart(5));
  switch (e.kind) {
    case 'message':
      return `${e.thinking ? `${n} ${time} ${pc.dim(`thinking: ${clip(e.thinking, 300)}`)}\n` : ''}${n} ${time} ${e.source === 'user' ? pc.bold(pc.blue('user')) : e.source === 'agent' ? pc.bold(pc.magenta('agent')) : pc.bold(pc.cyan('hook'))}: ${clip(e.text)}${callText(e.call)}`;
    case 'skills':
      return `${n} ${time} ${pc.cyan(`🧰 skills offered: ${e.skills.map((s) => s.name).join(', ') || 'none'}`)}${e.warnings.map((w) => `\n${indent(pc.yellow(`skipped: ${w}`))}`).join('')}`;
    case 'refused':
      return `${n} ${time} ${pc.red(`✗ message #${e.messageIndex} refused by a UserPromptSubmit hook: ${clip(e.reason, 300)}`)}`;
    case 'action': {
      const args = e.arguments as Record<string, unknown> | string;
      const main = typeof args === 'object' && args ? (args.command ?? args.thought ?? args.message ?? JSON.stringify(args)) : String(args);
      const extra = typeof args === 'object' && args && e.tool === 'file_editor' ? ` ${String(args.path)}` : '';
      const thinking = reasoningText(e.reasoning);
      return `${thinking ? `${n} ${time} ${pc.dim(`thinking: ${clip(thinking, 300)}`)}\n` : ''}${e.thought ? `${n} ${time} ${pc.magenta('thought')}: ${clip(e.thought)}\n` : ''}${n} ${time} ${pc.bold(pc.yellow(e.tool))} ${pc.yellow(clip(String(main), 300))}${extra}${callText(e.call)}`;
    }
    case 'observation': {
      const head = e.isError ? pc.red('✗') : pc.green('✓');
      const code = e.exitCode !== undefined ? pc.dim(` (exit ${e.exitCode})`) : '';
      return `${n} ${time} ${head} ${pc.dim(e.tool)}${code}\n${indent(clip(e.content))}`;
    }
    case 'error':
      return `${n} ${time} ${pc.red(`error: ${e.message}`)}`;
    case 'pause':
      return `${n} ${time} ${pc.yellow(`⏸ paused${e.now ? ' (now: interrupting the command)' : ''}${e.reason ? ` — ${e.reason}` : ''}`)}`;
    case 'resume':
      return `${n} ${time} ${pc.green('▶ resumed')}`;
    case 'close':
      return `${n} ${time} ${pc.dim('■ closed')}`;
    case 'status':
      return `${n} ${time} ${pc.dim('status →')} ${colorStatus(e.status)}${e.reason ? pc.dim(` (${e.reason})`) : ''}`;
    case 'host':
      return e.available
        ? `${n} ${time} ${pc.green(`workspace host ${e.queue} is back`)}`
        : `${n} ${time} ${pc.yellow(`waiting for workspace host ${e.queue}: no worker there has picked up the next call (start \`faheem worker\` on that host)`)}`;
    case 'host_changed':
      return `${n} ${time} ${pc.yellow(
        e.from === null
          ? `workspace on host ${e.to}${e.restoredFromStep === null ? '' : `, as of step ${e.restoredFromStep}`}`
          : `workspace moved from host ${e.from} to ${e.to} (${e.reason}); restored as of step ${e.restoredFromStep ?? 'none (empty)'}`,
      )}`;
    case 'child':
      return e.status === 'started'
        ? `${n} ${time} ${pc.cyan(`↳ sub-agent ${e.childId} started: ${clip(e.task, 200)}`)}`
        : `${n} ${time} ${pc.cyan(`↳ sub-agent ${e.childId}`)} ${colorStatus(e.status)}`;
    case 'instructions':
      return `${n} ${time} ${pc.cyan(`📄 the agent follows ${e.path}${e.truncated ? ' (cut short)' : ''}`)}\n${indent(clip(e.text))}`;
    case 'condensation':
      return `${n} ${time} ${pc.cyan(`⇣ condensed events ${e.forgottenFrom}–${e.forgottenTo - 1} into a summary`)}\n${indent(clip(e.summary))}`;
    case 'checkpoint':
      return `${n} ${time} ${pc.dim(`◆ checkpoint of step ${e.step}${e.commit ? ` ${e.commit.slice(0, 10)} (+${e.added} ~${e.changed} -${e.deleted})` : ' (not taken)'}`)}`;
    case 'webhook':
      return `${n} ${time} ${
        e.delivered
          ? pc.dim(
              `↗ webhook: stop #${e.eventIndex} (${e.status}) delivered${e.statusCode ? ` (${e.statusCode})` : ''}${e.attempts > 1 ? ` after ${e.attempts} attempts` : ''}`,
            )
          : pc.yellow(
              `↗ webhook: stop #${e.eventIndex} (${e.status}) not delivered after ${e.attempts} attempt${e.attempts === 1 ? '' : 's'}: ${e.reason ?? 'failed'}`,
            )
      }`;
    case 'fallback':
      return `${n} ${time} ${pc.yellow(`⤳ ${e.call === 'condense' ? 'condensation' : 'reply'} by fallback ${e.model}`)}${e.skipped.map((s) => `\n${indent(pc.yellow(`${s.model}: ${clip(s.reason, 300)}`))}`).join('')}`;
    case 'rewind':
      return `${n} ${time} ${pc.cyan(`↶ rewound to step ${e.toStep}: events ${e.dropFrom}–${e.dropTo - 1} leave the prompt; the workspace is as after step ${e.toStep} (undo: checkpoint ${e.before.slice(0, 10)})`)}\n${indent(e.notUndone)}`;
  }
}

/** A model call's model, tokens and cost, dimmed after the reply it made. */
function callText(call: CallSummary | undefined): string {
  if (!call) return '';
  const cache =
    call.cacheReadTokens || call.cacheWriteTokens ? `, cache ${call.cacheReadTokens} read / ${call.cacheWriteTokens ?? 0} written` : '';
  return pc.dim(
    `  [${call.model} · ${call.promptTokens} in${cache} / ${call.completionTokens} out · $${call.cost.toFixed(4)} · ${call.latencyMs} ms]`,
  );
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `        ${pc.dim('│')} ${l}`)
    .join('\n');
}

export function formatState(s: ConversationState): string {
  const m = s.metrics;
  return [
    `${pc.bold(s.id)}  ${colorStatus(s.status)}${s.closed ? pc.dim(' (closed)') : ''}`,
    `  workspace   ${s.workspace}`,
    `  model       ${s.model || '(worker default)'}`,
    ...(s.tenant !== undefined ? [`  tenant      ${s.tenant}`] : []),
    `  iterations  ${s.iterations} (run ${s.runNumber})${s.steps !== undefined ? `, ${s.steps} steps in all` : ''}`,
    ...(s.forkedFrom ? [`  forked from ${s.forkedFrom.id} at step ${s.forkedFrom.step}`] : []),
    ...(s.waitingUntil ? [`  waiting     until ${s.waitingUntil.until} (${s.waitingUntil.reason})`] : []),
    `  events      ${s.events}, pending messages ${s.pendingMessages}`,
    `  tokens      ${m.promptTokens} prompt, ${m.completionTokens} completion, ${m.llmCalls} model calls`,
    `  cost        $${m.accumulatedCost.toFixed(4)}${m.calls?.length ? `, model latency p50 ${median(m.calls.map((c) => c.latencyMs))} ms` : ''}`,
    ...(s.lastError ? [`  last error  ${pc.red(s.lastError)}`] : []),
    ...(s.parentId ? [`  parent      ${s.parentId}`] : []),
    ...(s.waitingForHost
      ? [`  ${pc.yellow(`waiting for workspace host ${s.waitingForHost}`)} (no worker there; start \`faheem worker\` on that host)`]
      : []),
    ...(s.children ?? []).map(
      (c) => `  sub-agent   ${c.id}  ${colorStatus(c.status)}  $${c.cost.toFixed(4)}  ${pc.dim(c.task.slice(0, 80))}`,
    ),
    ...s.pendingActions.map(
      (a) =>
        `  ${pc.yellow('needs approval')}  ${a.tool} ${JSON.stringify(a.arguments).slice(0, 200)}  (faheem approve ${s.id} / faheem reject ${s.id})`,
    ),
  ].join('\n');
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/** The documented JSON shape of `faheem status --json`. */
export function stateJson(s: ConversationState): Record<string, unknown> {
  return {
    id: s.id,
    status: s.status,
    iterations: s.iterations,
    runNumber: s.runNumber,
    events: s.events,
    pendingMessages: s.pendingMessages,
    metrics: {
      accumulatedCost: s.metrics.accumulatedCost,
      promptTokens: s.metrics.promptTokens,
      completionTokens: s.metrics.completionTokens,
      cacheReadTokens: s.metrics.cacheReadTokens,
      cacheWriteTokens: s.metrics.cacheWriteTokens ?? 0,
      llmCalls: s.metrics.llmCalls,
      calls: s.metrics.calls ?? [],
    },
    lastError: s.lastError,
    workspace: s.workspace,
    ...(s.pool !== undefined ? { pool: s.pool, host: s.host ?? null } : {}),
    model: s.model,
    closed: s.closed,
    pendingActions: s.pendingActions,
    runCost: s.runCost,
    finalMessage: s.finalMessage ?? null,
    ...(s.output !== undefined ? { output: s.output } : {}),
    waitingForHost: s.waitingForHost ?? null,
    waitingUntil: s.waitingUntil ?? null,
    steps: s.steps ?? 0,
    forkedFrom: s.forkedFrom ?? null,
    children: (s.children ?? []).map((c) => ({ id: c.id, status: c.status, cost: c.cost, task: c.task })),
    ...(s.parentId ? { parentId: s.parentId } : {}),
    ...(s.tenant !== undefined ? { tenant: s.tenant } : {}),
  };
}
