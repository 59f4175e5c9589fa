// ACP sessions as durable conversations. A session is a handle on one conversation (sessionId = its
// id); everything it shows comes from `follow({ live: true })` through the UpdateMapper, everything
// it does is an SDK call (send, run, pause now, approve, reject, set the policy). Nothing is kept
// here that the conversation does not hold: a new process's `session/load` sees all of it.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type {
  AgentContext,
  ListSessionsRequest,
  ListSessionsResponse,
  LoadSessionRequest,
  LoadSessionResponse,
  NewSessionRequest,
  NewSessionResponse,
  PromptRequest,
  PromptResponse,
  SessionInfo,
  SessionModeState,
  SessionUpdate,
  SetSessionModeRequest,
} from '@agentclientprotocol/sdk';
import { Agent, Conversation, LLM } from '../client/client.js';
import { ConversationClosedError, FaheemError, InvalidRequestError } from '../core/errors.js';
import { checkConversationId } from '../conversation/conversation-id.js';
import type { HooksConfig } from '../hooks/config.js';
import { modelFacts } from '../models/prices.js';
import type { ConfirmationPolicy, ConversationState } from '../core/types.js';
import { ConversationStatusKey } from '../conversation/workflow/messages.js';
import { SESSION_MODES, checkMode, mcpServersOf, promptText, stopReasonOf } from './prompt.js';
import { UpdateMapper, toolCallView } from './updates.js';

/** What the session manager is given. */
export interface AcpSessionsOptions {
  client: Client;
  /** The mode (confirmation policy) of new sessions. */
  defaultMode: ConfirmationPolicy;
  /** The model new conversations use (default: the worker's LLM_MODEL). */
  model?: string;
  /** Model calls per run before it stops (max_turn_requests). */
  maxIterations?: number;
  /** Hooks of new sessions (Claude Code's format). */
  hooks?: HooksConfig;
  /** What to write in an MCP config instead of a literal value (see mcpServersOf). */
  keepSecret: (value: string) => string;
  /** A line for stderr. */
  log: (line: string) => void;
}

interface Turn {
  cancelled: boolean;
}

interface Session {
  id: string;
  conversation: Conversation;
  workspace: string;
  mapper: UpdateMapper;
  /** The next event to show, and the next live line (undefined: come late, as a new follower does). */
  nextIndex: number;
  liveFrom: number | undefined;
  turn?: Turn;
  /** A follow that shows a run started elsewhere (after a load), until a prompt takes over. */
  background?: { abort: AbortController; done: Promise<void> };
}

/** Raised by a permission request the client could not answer: the turn ends, the approval stays pending. */
class PermissionUnanswered extends FaheemError {
  constructor(message: string) {
    super('timeout', message);
  }
}

const PAGE = 50;
/** How long a stopped turn waits for the results of its tool calls still in flight (an interrupted command's). */
const SETTLE_MS = 10_000;
const modeState = (current: ConfirmationPolicy): SessionModeState => ({
  currentModeId: current,
  availableModes: SESSION_MODES.map((m) => ({ id: m.id, name: m.name, description: m.description })),
});
const contextWindow = (model: string) => {
  const [provider, ...rest] = model.split('/');
  return rest.length ? modelFacts(rest.join('/'), provider).contextWindow : modelFacts(model).contextWindow;
};
const stoppedRunning = (s: ConversationState) => s.status !== 'running' && s.status !== 'waiting_for_confirmation';

/** The sessions of one `faheem acp` process (several at once), each a conversation. */
export class AcpSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: AcpSessionsOptions) {}

  /** `session/new`: a conversation with `cwd` as its workspace and the client's MCP servers. */
  async newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    const workspace = await checkWorkspace(params.cwd);
    const mcpServers = mcpServersOf(params.mcpServers ?? [], this.options.keepSecret);
    const agent = new Agent({
      llm: new LLM({ usageId: 'agent', ...(this.options.model ? { model: this.options.model } : {}) }),
      tools: ['terminal', 'file_editor', 'task_tracker', 'wait'],
      hostTools: true,
    });
    const conversation = await Conversation.create(this.options.client, {
      agent,
      workspace,
      confirmationPolicy: this.options.defaultMode,
      ...(this.options.maxIterations ? { maxIterations: this.options.maxIterations } : {}),
      ...(mcpServers ? { mcpServers } : {}),
      ...(this.options.hooks ? { hooks: this.options.hooks } : {}),
    });
    this.sessions.set(conversation.id, {
      id: conversation.id,
      conversation,
      workspace,
      mapper: new UpdateMapper({ workspace, contextWindow }),
      nextIndex: 0,
      liveFrom: 0,
    });
    this.options.log(`session ${conversation.id}: new conversation in ${workspace}`);
    return { sessionId: conversation.id, modes: modeState(this.options.defaultMode) };
  }

  /**
   * `session/load`: replays the whole conversation as updates, then (while it runs) follows it in
   * the background until it stops or a prompt takes over. A closed conversation is an error.
   */
  async loadSession(params: LoadSessionRequest, ctx: AgentContext): Promise<LoadSessionResponse> {
    checkConversationId(params.sessionId);
    const known = this.sessions.get(params.sessionId);
    if (known) await this.stopBackground(known);
    if (known?.turn) throw new InvalidRequestError(`session ${params.sessionId} has a prompt turn under way; cancel it first`);
    const conversation = await Conversation.attach(this.options.client, params.sessionId);
    if (await conversation.isClosed()) throw new ConversationClosedError(conversation.id, closedMessage(conversation.id));
    const state = await conversation.state();
    const session: Session = {
      id: conversation.id,
      conversation,
      workspace: state.workspace,
      mapper: new UpdateMapper({ workspace: state.workspace, contextWindow }),
      nextIndex: 0,
      liveFrom: undefined,
    };
    this.sessions.set(session.id, session);
    for (const event of await conversation.events(0)) {
      session.nextIndex = event.index + 1;
      await this.send(ctx, session, session.mapper.map(event));
    }
    this.options.log(`session ${session.id}: loaded (${session.nextIndex} events, ${state.status})`);
    if (!stoppedRunning(state)) this.startBackground(session, ctx);
    return { modes: modeState(state.confirmationPolicy ?? 'never') };
  }

  /** `session/list`: the open conversations (not sub-agents), newest first, filtered by `cwd` when given. */
  async listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse> {
    const offset = params.cursor ? Number(params.cursor) : 0;
    if (!Number.isInteger(offset) || offset < 0)
      throw new InvalidRequestError(`cursor ${JSON.stringify(params.cursor)} is not one this agent gave`);
    const cwd = params.cwd ? path.resolve(params.cwd) : undefined;
    const found: SessionInfo[] = [];
    const query = `WorkflowType = 'conversation' AND ExecutionStatus = 'Running'`;
    let seen = 0;
    for await (const wf of this.options.client.workflow.list({ query })) {
      if (wf.workflowId.includes('.sub-')) continue;
      let workspace = typeof wf.memo?.workspace === 'string' ? wf.memo.workspace : undefined;
      let title: string | undefined;
      if (!workspace || !cwd || workspace === cwd) {
        // Conversations started before the memo said it (and every title): from the description.
        const described = await this.options.client.workflow
          .getHandle(wf.workflowId)
          .describe()
          .catch(() => undefined);
        title = (await described?.staticSummary().catch(() => undefined)) ?? undefined;
        workspace ??= /\*\*Workspace:\*\* `([^`]+)`/.exec((await described?.staticDetails().catch(() => undefined)) ?? '')?.[1];
      }
      if (!workspace || (cwd && workspace !== cwd)) continue;
      if (seen++ < offset) continue;
      const status = String(wf.typedSearchAttributes.get(ConversationStatusKey) ?? '');
      found.push({
        sessionId: wf.workflowId,
        cwd: workspace,
        ...(title ? { title } : {}),
        updatedAt: wf.startTime.toISOString(),
        _meta: { status },
      });
      if (found.length > PAGE) break;
    }
    const more = found.length > PAGE;
    return { sessions: found.slice(0, PAGE), ...(more ? { nextCursor: String(offset + PAGE) } : {}) };
  }

  /**
   * `session/prompt`: the prompt becomes a user message, the conversation runs, and its updates
   * stream until the run stops; the stop reason says why it stopped.
   */
  async prompt(params: PromptRequest, ctx: AgentContext, signal: AbortSignal): Promise<PromptResponse> {
    const session = this.session(params.sessionId);
    if (session.turn) throw new InvalidRequestError(`session ${session.id} has a prompt turn under way; cancel it first`);
    const text = promptText(params.prompt, session.workspace);
    const turn: Turn = { cancelled: false };
    session.turn = turn;
    try {
      await this.stopBackground(session);
      if (await session.conversation.isClosed()) throw new ConversationClosedError(session.id, closedMessage(session.id));
      const before = await session.conversation.state();
      const index = await session.conversation.sendMessage(text);
      session.mapper.skipUserMessage(index);
      let runNumber = before.runNumber;
      try {
        // Actions waiting for approval: ask for them first (a run would approve them); the message is read after.
        if (before.status === 'waiting_for_confirmation') await this.askPermission(session, ctx, signal);
        else ({ runNumber } = await session.conversation.resume());
        await this.pump(session, ctx, (s) => s.runNumber >= runNumber && stoppedRunning(s), signal);
        // A pause stops the run before the interrupted command's result is recorded: show it too (for a while).
        const open = (s: ConversationState) => {
          const waiting = new Set(s.pendingActions.map((a) => a.toolCallId));
          return session.mapper.openToolCalls().filter((id) => !waiting.has(id));
        };
        if (open(await session.conversation.state()).length) {
          await this.pump(session, ctx, (s) => open(s).length === 0, AbortSignal.any([signal, AbortSignal.timeout(SETTLE_MS)]));
        }
      } catch (err) {
        if (!(err instanceof PermissionUnanswered)) throw err;
      }
      const after = await session.conversation.state();
      return {
        stopReason: stopReasonOf(after, {
          cancelled: turn.cancelled,
          refused: session.mapper.refused.has(index),
          truncated: session.mapper.lastReplyTruncated,
        }),
      };
    } finally {
      session.turn = undefined;
    }
  }

  /** `session/cancel`: pause now (the running command is interrupted, the model call aborted); the prompt answers `cancelled`. */
  cancel(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session?.turn) return;
    session.turn.cancelled = true;
    session.conversation.pause({ now: true, reason: 'cancelled in the editor' }).catch((err: unknown) => {
      this.options.log(`session ${sessionId}: cancel: ${(err as Error).message}`);
    });
  }

  /** `session/set_mode`: the conversation's confirmation policy. */
  async setMode(params: SetSessionModeRequest): Promise<void> {
    const session = this.session(params.sessionId);
    await session.conversation.setConfirmationPolicy(checkMode(params.modeId));
  }

  /** Stops every background follow (the process is ending; the conversations go on). */
  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => this.stopBackground(s)));
  }

  private session(id: string): Session {
    checkConversationId(id); // a malformed id is told the rule, not "unknown session"
    const session = this.sessions.get(id);
    if (!session) throw new SessionUnknownError(id);
    return session;
  }

  private async send(ctx: AgentContext, session: Session, updates: SessionUpdate[]): Promise<void> {
    for (const update of updates) await ctx.notify('session/update', { sessionId: session.id, update });
  }

  /** Shows what the conversation does until `until` holds (and every event is shown) or `signal` aborts. */
  private async pump(session: Session, ctx: AgentContext, until: (s: ConversationState) => boolean, signal: AbortSignal): Promise<void> {
    const follow = session.conversation.follow({
      live: true,
      fromIndex: session.nextIndex,
      ...(session.liveFrom !== undefined ? { liveFrom: session.liveFrom } : {}),
      until,
      signal,
    });
    for await (const item of follow) {
      if ('live' in item) session.liveFrom = item.offset + 1;
      else session.nextIndex = item.index + 1;
      await this.send(ctx, session, session.mapper.map(item));
      if (!('live' in item) && item.kind === 'status' && item.status === 'waiting_for_confirmation') {
        await this.askPermission(session, ctx, signal);
      }
    }
  }

  /**
   * A pending confirmation as `session/request_permission` (allow once / reject once), one request
   * per waiting action; every one allowed approves them, a rejection rejects them. Answered
   * elsewhere meanwhile (CLI, console), the request is withdrawn. A client that cannot answer
   * leaves the approval pending on the conversation (PermissionUnanswered ends the turn).
   */
  private async askPermission(session: Session, ctx: AgentContext, signal?: AbortSignal): Promise<void> {
    const state = await session.conversation.state();
    if (state.status !== 'waiting_for_confirmation' || state.pendingActions.length === 0) return;
    const withdraw = new AbortController();
    // The follow that asked is ending (a prompt takes over, the client went away): withdraw the request.
    signal?.addEventListener('abort', () => withdraw.abort(), { once: true });
    const answeredElsewhere = session.conversation
      .waitUntil((s) => s.status !== 'waiting_for_confirmation')
      .then(() => withdraw.abort())
      .catch(() => undefined);
    let allowed = true;
    try {
      for (const action of state.pendingActions) {
        const view = toolCallView(action.tool, action.arguments, session.workspace);
        let answer;
        try {
          answer = await ctx.request(
            'session/request_permission',
            {
              sessionId: session.id,
              toolCall: {
                toolCallId: action.toolCallId,
                title: view.title,
                kind: view.kind,
                status: 'pending',
                rawInput: action.arguments,
                locations: view.locations,
              },
              options: [
                { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
                { optionId: 'reject', name: 'Reject once', kind: 'reject_once' },
              ],
            },
            { cancellationSignal: withdraw.signal, stopWaitingOnCancel: true },
          );
        } catch (err) {
          if (withdraw.signal.aborted) return; // approved or rejected elsewhere
          this.options.log(`session ${session.id}: permission request unanswered (${(err as Error).message}); the approval stays pending`);
          throw new PermissionUnanswered((err as Error).message);
        }
        if (answer.outcome.outcome === 'cancelled') return; // the turn is being cancelled (paused now)
        if (answer.outcome.optionId !== 'allow') {
          allowed = false;
          break;
        }
      }
      if (withdraw.signal.aborted) return;
      if (allowed) await session.conversation.approve();
      else await session.conversation.reject('The user rejected this action in the editor.');
    } catch (err) {
      if (err instanceof PermissionUnanswered) throw err;
      // Answered elsewhere just now: the conversation goes on either way.
      this.options.log(`session ${session.id}: ${(err as Error).message}`);
    } finally {
      withdraw.abort();
      void answeredElsewhere;
    }
  }

  private startBackground(session: Session, ctx: AgentContext): void {
    const abort = new AbortController();
    const done = (async () => {
      try {
        const state = await session.conversation.state();
        if (state.status === 'waiting_for_confirmation') await this.askPermission(session, ctx, abort.signal);
        await this.pump(session, ctx, stoppedRunning, abort.signal);
      } catch (err) {
        if (!abort.signal.aborted) this.options.log(`session ${session.id}: follow ended: ${(err as Error).message}`);
      }
    })();
    session.background = { abort, done };
  }

  private async stopBackground(session: Session): Promise<void> {
    const background = session.background;
    if (!background) return;
    session.background = undefined;
    background.abort.abort();
    await background.done;
  }
}

/** A session this process does not know (never created or loaded here). */
export class SessionUnknownError extends InvalidRequestError {
  constructor(readonly sessionId: string) {
    super(`unknown session ${JSON.stringify(sessionId)}: create it with session/new, or load a conversation with session/load`);
  }
}

function closedMessage(id: string): string {
  return `conversation ${id} is closed: its history stays readable (\`faheem events ${id}\`), but it takes no more prompts; start a new session`;
}

async function checkWorkspace(cwd: string): Promise<string> {
  if (!path.isAbsolute(cwd)) throw new InvalidRequestError(`cwd must be an absolute path, not ${JSON.stringify(cwd)}`);
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) throw new InvalidRequestError(`cwd ${cwd} is not a directory`);
  return path.resolve(cwd);
}
