// The console's transcript, as data: what the follow stream has said (events and live lines) folded
// into a state, and that state turned into blocks the page renders. Pure (no DOM), unit-tested.
import type { ConversationEvent, ImageRef } from '../src/core/types/public.js';
import type { LiveDelta } from '../src/live/types.js';
import { reasoningText } from '../src/core/text.js';
import { actorText } from '../src/client/actors.js';
import { fileEditDiff, type DiffLine } from './diff.js';

/** One line of the follow stream: an event, a live line, or the stream's own end marker. */
export type StreamItem = ConversationEvent | LiveDelta | { end: true; closed?: boolean; error?: string };

/** The reply being streamed (not yet landed as an event). */
export interface Streaming {
  /** Its model call (callOf: the events the call saw). */
  step: number | undefined;
  text: string;
  thinking: string;
  /** Tool-call arguments as the model writes them, by call id. */
  toolArgs: Record<string, { name: string; text: string }>;
}

/** What the page knows of one conversation's transcript. */
export interface TranscriptState {
  events: ConversationEvent[];
  /** The next event index wanted (resume the stream here). */
  nextIndex: number;
  /** The last live offset seen (resume with liveFrom: offset + 1). */
  liveOffset: number | undefined;
  streaming: Streaming | null;
  /** A running command's output so far, by tool call id (dropped when its observation lands). */
  outputs: Record<string, string>;
  /** Live lines (without eventCount) of model calls up to this step are late: their reply has landed. */
  landedStep: number;
  /**
   * The index of the last event that ended a model call (its reply, a pause, an error, the run's
   * stop): a live line of a call that began at or before it (eventCount) is late, and shows nothing.
   */
  endedAt: number;
}

/** An empty transcript. */
export function emptyTranscript(): TranscriptState {
  return { events: [], nextIndex: 0, liveOffset: undefined, streaming: null, outputs: {}, landedStep: 0, endedAt: -1 };
}

/**
 * Which model call a live line belongs to: the events the call saw (growing over the whole
 * conversation); `step` for lines without it (it starts again each run).
 */
function callOf(item: LiveDelta): number | undefined {
  return item.eventCount ?? item.step;
}

function isLive(item: StreamItem): item is LiveDelta {
  return 'live' in item && item.live === true;
}

function isEvent(item: StreamItem): item is ConversationEvent {
  return 'index' in item && typeof item.index === 'number' && 'kind' in item;
}

/** Whether an event is the landing of a model reply (an agent message, or an action it asked for). */
function isReply(e: ConversationEvent): boolean {
  return (e.kind === 'message' && e.source === 'agent') || e.kind === 'action';
}

/** Whether an event ends the model call under way: its reply, a pause or an error cut it, or the run stopped. */
function endsCall(e: ConversationEvent): boolean {
  return isReply(e) || e.kind === 'pause' || e.kind === 'error' || (e.kind === 'status' && e.status !== 'running');
}

/**
 * Whether a live line belongs to a call that has ended. Live lines and events come by different
 * channels, so a call's last lines may come after its reply (or, opening a finished conversation,
 * every line after every event): they must not bring a streaming box back.
 */
function isLate(state: TranscriptState, item: LiveDelta): boolean {
  if (item.eventCount !== undefined) return item.eventCount <= state.endedAt;
  return item.step !== undefined && item.step <= state.landedStep;
}

/** The state after one more stream item. Events already seen (a reconnect) are ignored. */
export function applyItem(state: TranscriptState, item: StreamItem): TranscriptState {
  if (isEvent(item)) {
    if (item.index < state.nextIndex) return state;
    const next: TranscriptState = { ...state, events: [...state.events, item], nextIndex: item.index + 1 };
    if (isReply(item)) {
      // The reply has landed: its event replaces the streamed text.
      next.landedStep = Math.max(state.landedStep, state.streaming?.step ?? 0);
    }
    if (endsCall(item)) {
      // Landed, cut off (paused, failed) or the run stopped: the streamed text goes.
      next.endedAt = item.index;
      next.streaming = null;
    } else if (item.kind === 'message' && item.source === 'user') {
      // A new turn begins: the partial text goes.
      next.streaming = null;
    }
    if (item.kind === 'observation' && item.toolCallId in state.outputs) {
      const outputs = { ...state.outputs };
      delete outputs[item.toolCallId];
      next.outputs = outputs;
    }
    return next;
  }
  if (!isLive(item)) return state;
  const next: TranscriptState = { ...state, liveOffset: Math.max(state.liveOffset ?? -1, item.offset) };
  switch (item.kind) {
    case 'output_delta': {
      if (!item.toolCallId) return next;
      next.outputs = { ...state.outputs, [item.toolCallId]: (state.outputs[item.toolCallId] ?? '') + item.text };
      return next;
    }
    case 'retry': {
      if (item.toolCallId) {
        // The command started again: what the lost attempt printed goes.
        next.outputs = { ...state.outputs, [item.toolCallId]: '' };
        return next;
      }
      if (isLate(state, item)) return next;
      next.streaming = { step: callOf(item) ?? state.streaming?.step, text: '', thinking: '', toolArgs: {} };
      return next;
    }
    case 'model_delta':
    case 'thinking_delta': {
      const call = callOf(item);
      if (isLate(state, item)) return next;
      const current =
        state.streaming && (call === undefined || state.streaming.step === undefined || state.streaming.step === call)
          ? state.streaming
          : { step: call, text: '', thinking: '', toolArgs: {} };
      const s: Streaming = { ...current, step: current.step ?? call };
      if (item.kind === 'thinking_delta') s.thinking += item.text;
      else if (item.toolCallId) {
        const prev = s.toolArgs[item.toolCallId];
        s.toolArgs = {
          ...s.toolArgs,
          [item.toolCallId]: { name: item.toolName ?? prev?.name ?? 'tool', text: (prev?.text ?? '') + item.text },
        };
      } else s.text += item.text;
      next.streaming = s;
      return next;
    }
    default:
      return next;
  }
}

export { fileEditDiff, type DiffLine } from './diff.js';

/** One block of the rendered transcript. `by`: who made it through the team API (`tenant/key`), as text. */
export type Block =
  | {
      type: 'message';
      key: string;
      source: 'user' | 'agent' | 'hook';
      text: string;
      time: string;
      detail?: string;
      rewound?: boolean;
      by?: string;
      /** An answer that matched the conversation's output schema: its JSON value, indented. */
      output?: string;
      /** Images sent with it (references: the page fetches each from the console by hash). */
      images?: ImageRef[];
    }
  | { type: 'thinking'; key: string; text: string }
  | {
      type: 'tool';
      key: string;
      tool: string;
      toolCallId: string;
      /** The command, the file path, or the arguments as JSON. */
      title: string;
      diff?: DiffLine[];
      output?: string;
      running: boolean;
      isError?: boolean;
      exitCode?: number;
      time: string;
      detail?: string;
      by?: string;
      /** Images the tool showed the model (file_editor view of an image). */
      images?: ImageRef[];
    }
  | { type: 'error'; key: string; text: string; time: string; by?: string }
  | { type: 'note'; key: string; text: string; time: string; by?: string }
  | { type: 'streaming'; key: string; text: string; thinking: string; tools: { name: string; text: string }[] };

function callDetail(call: { model: string; promptTokens: number; completionTokens: number; cost: number; latencyMs: number } | undefined) {
  return call
    ? `${call.model} · ${call.promptTokens} in / ${call.completionTokens} out · $${call.cost.toFixed(4)} · ${call.latencyMs} ms`
    : undefined;
}

function toolTitle(tool: string, args: unknown): string {
  if (args && typeof args === 'object') {
    const a = args as Record<string, unknown>;
    if (tool === 'terminal' && typeof a.command === 'string') return `$ ${a.command}`;
    if (tool === 'file_editor' && typeof a.path === 'string') return `${typeof a.command === 'string' ? a.command : 'edit'} ${a.path}`;
    if (typeof a.message === 'string') return a.message;
    if (typeof a.thought === 'string') return a.thought;
    if (typeof a.task === 'string') return a.task;
    return JSON.stringify(a);
  }
  return String(args);
}

/** The blocks to render, in order: the events, then what streams now. */
export function buildBlocks(state: TranscriptState): Block[] {
  const blocks: Block[] = [];
  const toolAt = new Map<string, number>();
  const argsOf = new Map<string, unknown>();
  for (const e of state.events) {
    const key = `e${e.index}`;
    const time = e.timestamp.slice(11, 19);
    const from = blocks.length;
    switch (e.kind) {
      case 'message':
        if (e.thinking) blocks.push({ type: 'thinking', key: `${key}t`, text: e.thinking });
        blocks.push({
          type: 'message',
          key,
          source: e.source === 'user' ? 'user' : e.source === 'agent' ? 'agent' : 'hook',
          text: e.text,
          time,
          ...(callDetail(e.call) ? { detail: callDetail(e.call) } : {}),
          ...(e.rewound ? { rewound: true } : {}),
          ...(e.output !== undefined ? { output: JSON.stringify(e.output, null, 2) } : {}),
          ...(e.images?.length ? { images: e.images } : {}),
        });
        break;
      case 'action': {
        const thinking = reasoningText(e.reasoning);
        if (thinking) blocks.push({ type: 'thinking', key: `${key}t`, text: thinking });
        if (e.thought) blocks.push({ type: 'message', key: `${key}m`, source: 'agent', text: e.thought, time });
        const diff = e.tool === 'file_editor' ? fileEditDiff(e.arguments) : undefined;
        toolAt.set(e.toolCallId, blocks.length);
        argsOf.set(e.toolCallId, e.arguments);
        blocks.push({
          type: 'tool',
          key,
          tool: e.tool,
          toolCallId: e.toolCallId,
          title: toolTitle(e.tool, e.arguments),
          ...(diff ? { diff } : {}),
          running: true,
          time,
          ...(callDetail(e.call) ? { detail: callDetail(e.call) } : {}),
          ...(state.outputs[e.toolCallId] !== undefined ? { output: state.outputs[e.toolCallId] } : {}),
        });
        break;
      }
      case 'observation': {
        const at = toolAt.get(e.toolCallId);
        const block = at !== undefined ? blocks[at] : undefined;
        if (block?.type === 'tool') {
          // A landed edit's diff gets its line numbers; a failed one changed nothing.
          const diff = block.diff && !e.isError ? fileEditDiff(argsOf.get(e.toolCallId), e.content) : undefined;
          blocks[at!] = {
            ...block,
            diff,
            output: e.content,
            running: false,
            isError: e.isError,
            ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}),
            ...(e.images?.length ? { images: e.images } : {}),
          };
        } else {
          blocks.push({
            type: 'tool',
            key,
            tool: e.tool,
            toolCallId: e.toolCallId,
            title: e.tool,
            output: e.content,
            running: false,
            isError: e.isError,
            time,
            ...(e.images?.length ? { images: e.images } : {}),
          });
        }
        break;
      }
      case 'error':
        blocks.push({ type: 'error', key, text: e.message, time });
        break;
      case 'pause':
        blocks.push({ type: 'note', key, text: `paused${e.now ? ' (now)' : ''}${e.reason ? ` — ${e.reason}` : ''}`, time });
        break;
      case 'resume':
        blocks.push({ type: 'note', key, text: 'resumed', time });
        break;
      case 'close':
        blocks.push({ type: 'note', key, text: 'closed', time });
        break;
      case 'status':
        blocks.push({ type: 'note', key, text: `status → ${e.status}${e.reason ? ` (${e.reason})` : ''}`, time });
        break;
      case 'host_changed':
        blocks.push({
          type: 'note',
          key,
          text:
            e.from === null
              ? `workspace on host ${e.to}`
              : `workspace moved from host ${e.from} to ${e.to} (${e.reason}); restored as of step ${e.restoredFromStep ?? 'none'}`,
          time,
        });
        break;
      case 'host':
        blocks.push({
          type: 'note',
          key,
          text: e.available ? `workspace host ${e.queue} is back` : `waiting for workspace host ${e.queue}`,
          time,
        });
        break;
      case 'child':
        blocks.push({
          type: 'note',
          key,
          text: e.status === 'started' ? `sub-agent ${e.childId} started: ${e.task}` : `sub-agent ${e.childId} ${e.status}`,
          time,
        });
        break;
      case 'instructions':
        blocks.push({ type: 'note', key, text: `the agent follows ${e.path}${e.truncated ? ' (cut short)' : ''}`, time });
        break;
      case 'fallback':
        blocks.push({
          type: 'note',
          key,
          text: `answered by fallback ${e.model}; passed over: ${e.skipped.map((s) => `${s.model} (${s.reason})`).join(', ')}`,
          time,
        });
        break;
      case 'condensation':
        blocks.push({ type: 'note', key, text: `condensed events ${e.forgottenFrom}–${e.forgottenTo - 1} into a summary`, time });
        break;
      case 'checkpoint':
        blocks.push({
          type: 'note',
          key,
          text: `checkpoint of step ${e.step}${e.commit ? ` (+${e.added} ~${e.changed} -${e.deleted})` : ' (not taken)'}`,
          time,
        });
        break;
      case 'rewind':
        blocks.push({ type: 'note', key, text: `rewound to step ${e.toStep}`, time });
        break;
      case 'skills':
        blocks.push({ type: 'note', key, text: `skills offered: ${e.skills.map((s) => s.name).join(', ') || 'none'}`, time });
        break;
      case 'refused':
        blocks.push({ type: 'error', key, text: `message #${e.messageIndex} refused by a hook: ${e.reason}`, time });
        break;
      case 'webhook':
        blocks.push({
          type: 'note',
          key,
          text: e.delivered
            ? `webhook: ${e.status} delivered${e.attempts > 1 ? ` after ${e.attempts} attempts` : ''}`
            : `webhook: ${e.status} not delivered (${e.reason ?? 'failed'})`,
          time,
        });
        break;
      default:
        break;
    }
    if (e.by) {
      // Who made it: on the blocks this event added, or (an observation) the tool block it completed.
      const by = actorText(e.by);
      const at = e.kind === 'observation' && blocks.length === from ? toolAt.get(e.toolCallId) : undefined;
      for (let i = at ?? from; i < (at !== undefined ? at + 1 : blocks.length); i++) {
        const block = blocks[i]!;
        if (block.type !== 'thinking' && block.type !== 'streaming') blocks[i] = { ...block, by };
      }
    }
  }
  const s = state.streaming;
  if (s && (s.text || s.thinking || Object.keys(s.toolArgs).length > 0)) {
    blocks.push({ type: 'streaming', key: `live${s.step ?? ''}`, text: s.text, thinking: s.thinking, tools: Object.values(s.toolArgs) });
  }
  return blocks;
}
