// What an editor sees of a conversation: our events and live lines as Agent Client Protocol session
// updates. Pure (no I/O): the session manager feeds it what `follow({ live: true })` yields, in
// order, and sends what it answers. The reply streams from the live lines; the durable event that
// records it adds only what the lines did not show (all of it on a replay), so nothing shows twice.
import path from 'node:path';
import type { SessionUpdate, ToolCallContent, ToolCallLocation, ToolKind, PlanEntry } from '@agentclientprotocol/sdk';
import type { ActionEvent, CallSummary, ConversationEvent, ObservationEvent } from '../core/types.js';
import type { LiveDelta } from '../live/types.js';
import { reasoningText } from '../core/text.js';

/** A command's output shown live is cut to its last this many characters (the observation has the rest). */
export const LIVE_OUTPUT_CHARS = 30_000;

/** What the mapper needs to know of the conversation. */
export interface UpdateMapperOptions {
  /** The conversation's workspace: relative paths in tool arguments are read against it. */
  workspace: string;
  /** The model's context window in tokens, for `usage_update.size` (default 128k when unknown). */
  contextWindow?: (model: string) => number | undefined;
  /** The cost (USD) of the calls before the first event fed (a follow that starts mid-conversation). */
  baseCost?: number;
}

/** How an ACP tool call looks for one of our actions: title, kind, input and the files it touches. */
export interface ToolCallView {
  title: string;
  kind: ToolKind;
  rawInput: unknown;
  locations: ToolCallLocation[];
  content: ToolCallContent[];
}

const text = (t: string): ToolCallContent => ({ type: 'content', content: { type: 'text', text: t } });

function oneLine(s: string, max = 100): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function argsOf(args: unknown): Record<string, unknown> {
  return args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/** The ACP view of a tool call: `execute` for commands, `edit` for file writes, `read` for views, `think`, `other`. */
export function toolCallView(tool: string, args: unknown, workspace: string): ToolCallView {
  const a = argsOf(args);
  const rawInput = args;
  const abs = (p: string) => (path.isAbsolute(p) ? path.normalize(p) : path.resolve(workspace, p));
  const rel = (p: string) => {
    const r = path.relative(workspace, abs(p));
    return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : abs(p);
  };
  switch (tool) {
    case 'terminal': {
      const command = str(a.command) ?? '';
      if (a.reset === true) return { title: 'Reset the terminal', kind: 'execute', rawInput, locations: [], content: [] };
      if (a.is_input === true)
        return { title: `Send input: ${oneLine(command, 80)}`, kind: 'execute', rawInput, locations: [], content: [] };
      return { title: command ? `Run: ${oneLine(command)}` : 'Run a command', kind: 'execute', rawInput, locations: [], content: [] };
    }
    case 'file_editor': {
      const file = str(a.path);
      const command = str(a.command);
      if (!file)
        return {
          title: `file_editor ${command ?? ''}`.trim(),
          kind: command === 'view' ? 'read' : 'edit',
          rawInput,
          locations: [],
          content: [],
        };
      const range = Array.isArray(a.view_range) ? a.view_range : undefined;
      const line = command === 'view' ? int(range?.[0]) : command === 'insert' ? int(a.insert_line) : undefined;
      const locations: ToolCallLocation[] = [{ path: abs(file), ...(line ? { line } : {}) }];
      const name = rel(file);
      switch (command) {
        case 'view': {
          const lines = range && int(range[0]) ? ` (lines ${String(range[0])}–${String(range[1] ?? 'end')})` : '';
          return { title: `Read ${name}${lines}`, kind: 'read', rawInput, locations, content: [] };
        }
        case 'create':
          return { title: `Create ${name}`, kind: 'edit', rawInput, locations, content: [] };
        case 'str_replace':
          return { title: `Edit ${name}`, kind: 'edit', rawInput, locations, content: [] };
        case 'insert':
          return { title: `Insert into ${name}${line ? ` after line ${line}` : ''}`, kind: 'edit', rawInput, locations, content: [] };
        case 'undo_edit':
          return { title: `Undo the last edit of ${name}`, kind: 'edit', rawInput, locations, content: [] };
        default:
          return { title: `file_editor ${command ?? ''} ${name}`.replace(/\s+/g, ' '), kind: 'other', rawInput, locations, content: [] };
      }
    }
    case 'think': {
      const thought = str(a.thought) ?? '';
      return { title: 'Think', kind: 'think', rawInput, locations: [], content: thought ? [text(thought)] : [] };
    }
    case 'task_tracker':
      return { title: a.command === 'plan' ? 'Update the plan' : 'View the plan', kind: 'other', rawInput, locations: [], content: [] };
    case 'finish':
      return { title: 'Finish', kind: 'other', rawInput, locations: [], content: [] };
    case 'wait': {
      const reason = str(a.reason);
      return { title: reason ? `Wait: ${oneLine(reason, 80)}` : 'Wait', kind: 'other', rawInput, locations: [], content: [] };
    }
    case 'delegate': {
      const task = str(a.task);
      return { title: task ? `Delegate: ${oneLine(task, 80)}` : 'Delegate', kind: 'other', rawInput, locations: [], content: [] };
    }
    default: {
      const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
      return { title: mcp ? `${mcp[2]} (MCP ${mcp[1]})` : tool, kind: 'other', rawInput, locations: [], content: [] };
    }
  }
}

/** The diff an edit made, as far as its arguments tell: a new file's text, or the text replaced and its replacement. */
export function editDiff(args: unknown, workspace: string): ToolCallContent | undefined {
  const a = argsOf(args);
  const file = str(a.path);
  if (!file) return undefined;
  const p = path.isAbsolute(file) ? path.normalize(file) : path.resolve(workspace, file);
  switch (a.command) {
    case 'create':
      return { type: 'diff', path: p, oldText: null, newText: str(a.file_text) ?? '' };
    case 'str_replace':
      return { type: 'diff', path: p, oldText: str(a.old_str) ?? '', newText: str(a.new_str) ?? '' };
    case 'insert':
      return { type: 'diff', path: p, oldText: '', newText: str(a.new_str) ?? '' };
    default:
      return undefined;
  }
}

/** The task tracker's list as an ACP plan. */
export function planEntries(args: unknown): PlanEntry[] | undefined {
  const list = argsOf(args).task_list;
  if (!Array.isArray(list)) return undefined;
  const status = (s: unknown): PlanEntry['status'] => (s === 'done' ? 'completed' : s === 'in_progress' ? 'in_progress' : 'pending');
  return list
    .map((t) => argsOf(t))
    .filter((t) => typeof t.title === 'string')
    .map((t) => ({ content: String(t.title), priority: 'medium' as const, status: status(t.status) }));
}

/** Text streamed for one reply (or its thinking): what the client was sent, and what this attempt has streamed. */
class Streamed {
  sent = '';
  attempt = '';
  /** More of this attempt's text; answers what the client has not seen yet. */
  add(piece: string): string {
    this.attempt += piece;
    if (this.attempt.startsWith(this.sent)) {
      const fresh = this.attempt.slice(this.sent.length);
      this.sent = this.attempt;
      return fresh;
    }
    if (this.sent.startsWith(this.attempt)) return ''; // a new attempt, still repeating what was shown
    this.sent += piece; // it went another way: show what comes
    return piece;
  }
  /** The whole text, recorded: answers what the client has not seen, and starts again. */
  finish(whole: string): string {
    const fresh = this.sent === '' ? whole : whole.startsWith(this.sent) ? whole.slice(this.sent.length) : '';
    this.sent = '';
    this.attempt = '';
    return fresh;
  }
}

/** The streamed text of the model call that began at `eventCount`. */
function streamedOf(map: Map<number, Streamed>, eventCount: number | undefined): Streamed {
  const key = eventCount ?? -1;
  let found = map.get(key);
  if (!found) map.set(key, (found = new Streamed()));
  return found;
}

/**
 * The reply recorded at event `index`, whole: what its call's stream did not show. Its call is the
 * latest that began at or before `index`; that one and any earlier are done with.
 */
function finishStreamed(map: Map<number, Streamed>, index: number, whole: string): string {
  const keys = [...map.keys()].filter((k) => k <= index);
  const key = keys.length ? Math.max(...keys) : undefined;
  const fresh = key === undefined ? whole : map.get(key)!.finish(whole);
  for (const k of keys) map.delete(k);
  return fresh;
}

/**
 * Turns what a follow yields into session updates; see the module comment. One per session: it
 * remembers the reply under way, the tool calls it has shown and the cost so far.
 */
export class UpdateMapper {
  /**
   * The text streamed per model call (keyed by the call's eventCount, -1 when a line has none): a
   * follower under load may get a later call's lines before the events of an earlier one.
   */
  private readonly replies = new Map<number, Streamed>();
  private readonly thoughts = new Map<number, Streamed>();
  private readonly calls = new Map<string, { tool: string; args: unknown; output: string; done: boolean }>();
  private lastReplyIndex = -1;
  /** How many events this follow has mapped (the next index it expects). */
  private seen = 0;
  /**
   * Lines of a model call that began after events this follow has not shown yet (its live stream ran
   * ahead of its events, as under load): shown once those events are, so the text keeps its order.
   */
  private held: LiveDelta[] = [];
  private cost: number;
  private readonly skip = new Set<number>();
  /** The last reply recorded was cut by the output-token cap. */
  lastReplyTruncated = false;
  /** User messages a UserPromptSubmit hook refused: their event index and the reason. */
  readonly refused = new Map<number, string>();

  constructor(private readonly options: UpdateMapperOptions) {
    this.cost = options.baseCost ?? 0;
  }

  /** The tool calls shown that have no final status yet. */
  openToolCalls(): string[] {
    return [...this.calls].filter(([, c]) => !c.done).map(([id]) => id);
  }

  /** The user message at `index` is not shown (the client sent it itself, in this prompt turn). */
  skipUserMessage(index: number): void {
    this.skip.add(index);
  }

  /** The updates for one item of the follow, in order (often none). */
  map(item: ConversationEvent | LiveDelta): SessionUpdate[] {
    if ('live' in item) {
      if (this.held.length || (item.eventCount !== undefined && item.eventCount > this.seen)) {
        this.held.push(item);
        return this.release();
      }
      return this.live(item);
    }
    // Lines of a call that began at or before this event come first: the call's earlier events are shown.
    const before = this.release(item.index);
    const updates = this.event(item);
    this.seen = Math.max(this.seen, item.index + 1);
    return [...before, ...updates, ...this.release()];
  }

  /** The held lines whose call began at or before `upTo` (default: the events shown), in order. */
  private release(upTo = this.seen): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    while (this.held.length) {
      const line = this.held[0]!;
      if (line.eventCount !== undefined && line.eventCount > upTo) break;
      this.held.shift();
      updates.push(...this.live(line));
    }
    return updates;
  }

  private live(line: LiveDelta): SessionUpdate[] {
    // Lines of a model call whose reply is recorded already (a follow that came late): the event said it.
    const stale = line.eventCount !== undefined && line.eventCount <= this.lastReplyIndex;
    switch (line.kind) {
      case 'model_delta': {
        if (stale || line.toolCallId !== undefined) return []; // a tool call's arguments: shown once whole
        const fresh = streamedOf(this.replies, line.eventCount).add(line.text);
        return fresh ? [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: fresh } }] : [];
      }
      case 'thinking_delta': {
        if (stale) return [];
        const fresh = streamedOf(this.thoughts, line.eventCount).add(line.text);
        return fresh ? [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: fresh } }] : [];
      }
      case 'retry': {
        if (line.toolCallId !== undefined && line.step === undefined) {
          const call = this.calls.get(line.toolCallId);
          if (call && !call.done) call.output = '';
          return [];
        }
        streamedOf(this.replies, line.eventCount).attempt = '';
        streamedOf(this.thoughts, line.eventCount).attempt = '';
        return [];
      }
      case 'output_delta': {
        const id = line.toolCallId;
        if (!id) return [];
        let call = this.calls.get(id);
        if (call?.done) return [];
        const updates: SessionUpdate[] = [];
        if (!call) {
          call = { tool: line.toolName ?? 'terminal', args: {}, output: '', done: false };
          this.calls.set(id, call);
          const view = toolCallView(call.tool, {}, this.options.workspace);
          updates.push({ sessionUpdate: 'tool_call', toolCallId: id, title: view.title, kind: view.kind, status: 'in_progress' });
        }
        call.output = (call.output + line.text).slice(-LIVE_OUTPUT_CHARS);
        updates.push({ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'in_progress', content: [text(call.output)] });
        return updates;
      }
    }
  }

  private event(e: ConversationEvent): SessionUpdate[] {
    switch (e.kind) {
      case 'message': {
        if (e.source === 'user') {
          if (this.skip.has(e.index)) return [];
          return [{ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: e.text } }];
        }
        this.lastReplyIndex = e.index;
        this.lastReplyTruncated = e.truncated === true;
        const freshThought = finishStreamed(this.thoughts, e.index, e.thinking ?? '');
        const fresh = finishStreamed(this.replies, e.index, e.text);
        return [
          ...(freshThought ? [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: freshThought } } as const] : []),
          ...(fresh ? [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: fresh } } as const] : []),
          ...this.usage(e.call),
        ];
      }
      case 'action':
        return this.action(e);
      case 'observation':
        return this.observation(e);
      case 'error':
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n\n**Error:** ${e.message}\n` } }];
      case 'refused':
        this.refused.set(e.messageIndex, e.reason);
        return [
          {
            sessionUpdate: 'agent_message_chunk',
            content: { type: 'text', text: `A UserPromptSubmit hook refused this message: ${e.reason}` },
          },
        ];
      case 'host_changed':
        return e.from === null
          ? []
          : [
              {
                sessionUpdate: 'agent_thought_chunk',
                content: {
                  type: 'text',
                  text: `The workspace moved from host ${e.from} to ${e.to} (${e.reason}); restored as of step ${e.restoredFromStep ?? 'none'}.\n`,
                },
              },
            ];
      case 'host':
        return e.available
          ? []
          : [
              {
                sessionUpdate: 'agent_thought_chunk',
                content: {
                  type: 'text',
                  text: `No worker is polling the workspace host's queue ${e.queue}; the conversation waits for one.\n`,
                },
              },
            ];
      default:
        return [];
    }
  }

  private action(e: ActionEvent): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    if (e.index > this.lastReplyIndex && (e.thought !== undefined || e.reasoning !== undefined || e.call !== undefined)) {
      // The first action of a reply carries the reply's text, thinking and call.
      this.lastReplyIndex = e.index;
      this.lastReplyTruncated = e.truncated === true;
      // Anthropic's thinking and the Responses API's reasoning summaries (what the live lines streamed).
      const thinking = reasoningText(e.reasoning);
      const freshThought = finishStreamed(this.thoughts, e.index, thinking);
      if (freshThought) updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: freshThought } });
      const freshText = finishStreamed(this.replies, e.index, e.thought ?? '');
      if (freshText) updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: freshText } });
      updates.push(...this.usage(e.call));
    }
    const known = this.calls.get(e.toolCallId);
    const view = toolCallView(e.tool, e.arguments, this.options.workspace);
    this.calls.set(e.toolCallId, { tool: e.tool, args: e.arguments, output: known?.output ?? '', done: false });
    const common = { toolCallId: e.toolCallId, title: view.title, kind: view.kind, rawInput: view.rawInput, locations: view.locations };
    updates.push(
      known
        ? { sessionUpdate: 'tool_call_update', ...common, ...(view.content.length ? { content: view.content } : {}) }
        : { sessionUpdate: 'tool_call', ...common, status: 'pending', ...(view.content.length ? { content: view.content } : {}) },
    );
    return updates;
  }

  private observation(e: ObservationEvent): SessionUpdate[] {
    const call = this.calls.get(e.toolCallId);
    const tool = call?.tool ?? e.tool;
    const args = call?.args ?? {};
    const updates: SessionUpdate[] = [];
    if (!call) {
      // An observation whose action this follow did not see (it started after it): show the call first.
      const view = toolCallView(tool, args, this.options.workspace);
      updates.push({ sessionUpdate: 'tool_call', toolCallId: e.toolCallId, title: view.title, kind: view.kind, status: 'pending' });
    }
    this.calls.set(e.toolCallId, { tool, args, output: '', done: true });
    const content: ToolCallContent[] = [];
    const diff = tool === 'file_editor' && !e.isError ? editDiff(args, this.options.workspace) : undefined;
    if (diff) content.push(diff);
    if (e.content && !(diff && !e.isError && tool === 'file_editor')) content.push(text(e.content));
    updates.push({
      sessionUpdate: 'tool_call_update',
      toolCallId: e.toolCallId,
      status: e.isError ? 'failed' : 'completed',
      content,
      rawOutput: { content: e.content, isError: e.isError, ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}) },
    });
    if (tool === 'task_tracker' && !e.isError) {
      const entries = planEntries(args);
      if (entries) updates.push({ sessionUpdate: 'plan', entries });
    }
    return updates;
  }

  private usage(call: CallSummary | undefined): SessionUpdate[] {
    if (!call) return [];
    this.cost += call.cost;
    const used = call.promptTokens + call.completionTokens;
    const size = Math.max(this.options.contextWindow?.(call.model) ?? 128_000, used);
    return [{ sessionUpdate: 'usage_update', used, size, cost: { amount: Number(this.cost.toFixed(6)), currency: 'USD' } }];
  }
}
