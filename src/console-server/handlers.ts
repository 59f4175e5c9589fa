// The console's API handlers: what each request of the page does, over the client (Temporal only).
// routes.ts picks the handler; requests.ts checks what the page sends.
import type { Client } from '@temporalio/client';
import type http from 'node:http';
import os from 'node:os';
import { workerWarnings, workspaceProblem } from '../cli/presence.js';
import type { ConnectionSettings } from '../settings/connection.js';
import { NoWorkerError } from '../core/errors.js';
import type { LiveDelta } from '../live/types.js';
import { startConversation } from '../conversation/start-conversation.js';
import { withTimeout } from '../core/timeout.js';
import { DEFAULTS, type ConversationEvent, type ConversationState, type ImageRef } from '../core/types.js';
import { StateCache, attach, childTree, shownModel } from './conversations.js';
import { TenantKey } from '../conversation/workflow/messages.js';
import { HttpError, actionBodies, errorAnswer, followQuery, newConversationBody, parseOr400, type ActionName } from './requests.js';

/** What the handlers work with: one console's client, caches and settings. */
export interface HandlerContext {
  client: Client;
  /** Each conversation's cost and model, as last read (for the list). */
  states: StateCache;
  /** How long an action waits for a worker to answer before saying none did. */
  answerTimeoutMs: number;
  /** The connection settings: the task queues (FAHEEM_TASK_QUEUE, FAHEEM_TOOL_TASK_QUEUE). */
  connection: ConnectionSettings;
  /**
   * An image's bytes from the store (readImage with the console's store and keys, bound by
   * startConsole): the handlers never see the settings themselves.
   */
  readImage(ref: Pick<ImageRef, 'sha256'>): Promise<Uint8Array>;
  /** The follow streams open now (aborted when the console closes). */
  streams: Set<AbortController>;
  /** A conversation's page in the Temporal Web UI. */
  temporalUrl(id: string): string;
}

/** How often a follow stream asks whether its conversation has closed. */
const CLOSED_CHECK_MS = 3_000;

/** An action's promise, or a NoWorkerError when no worker answered in time. */
function answered<T>(ctx: HandlerContext, promise: Promise<T>): Promise<T> {
  return withTimeout(
    promise,
    ctx.answerTimeoutMs,
    () => new NoWorkerError(`no worker answered within ${ctx.answerTimeoutMs / 1000} s; is \`faheem worker\` running?`),
  );
}

/** One conversation: its state (when a worker answers), its tree and its link to the Web UI. */
export async function detail(ctx: HandlerContext, id: string) {
  const { client, states } = ctx;
  const conversation = await attach(client, id);
  const described = await client.workflow.getHandle(id).describe();
  const closed = described.status.name !== 'RUNNING';
  let state: ConversationState | undefined;
  let stateError: string | undefined;
  try {
    state = await answered(ctx, conversation.state());
    states.set(id, `${described.runId}:${described.historyLength}`, { cost: state.metrics.accumulatedCost, model: state.model ?? '' });
  } catch (err) {
    stateError = errorAnswer(err).error;
  }
  const tree = await childTree(client, id, 3, states).catch(() => []);
  return {
    id,
    closed,
    temporalUrl: ctx.temporalUrl(id),
    tree,
    ...(stateError ? { stateError } : {}),
    state: state
      ? {
          status: state.status,
          closed: state.closed || closed,
          iterations: state.iterations,
          runNumber: state.runNumber,
          events: state.events,
          pendingMessages: state.pendingMessages,
          metrics: {
            accumulatedCost: state.metrics.accumulatedCost,
            promptTokens: state.metrics.promptTokens,
            completionTokens: state.metrics.completionTokens,
            cacheReadTokens: state.metrics.cacheReadTokens,
            cacheWriteTokens: state.metrics.cacheWriteTokens ?? 0,
            llmCalls: state.metrics.llmCalls,
          },
          lastError: state.lastError,
          workspace: state.workspace,
          model: state.model,
          pendingActions: state.pendingActions,
          children: state.children ?? [],
          parentId: state.parentId ?? null,
          waitingForHost: state.waitingForHost ?? null,
          ...(state.tenant !== undefined ? { tenant: state.tenant } : {}),
        }
      : {
          status: String(described.searchAttributes.ConversationStatus?.[0] ?? 'unknown'),
          closed,
          model:
            shownModel(
              described.searchAttributes.ConversationModel?.[0] === undefined
                ? null
                : String(described.searchAttributes.ConversationModel[0]),
              undefined,
            ) ?? '',
          ...(described.typedSearchAttributes.get(TenantKey) !== undefined
            ? { tenant: String(described.typedSearchAttributes.get(TenantKey)) }
            : {}),
        },
  };
}

/** A button's action on a conversation (pause, resume, send, approve, reject, close). */
export async function act(ctx: HandlerContext, id: string, action: ActionName, body: unknown): Promise<unknown> {
  const { client } = ctx;
  const conversation = await attach(client, id);
  switch (action) {
    case 'pause': {
      const b = parseOr400(actionBodies.pause, body);
      await conversation.pause({ now: b.now ?? false });
      return { ok: true };
    }
    case 'resume': {
      parseOr400(actionBodies.resume, body);
      return { ok: true, ...(await answered(ctx, conversation.resume())) };
    }
    case 'send': {
      const b = parseOr400(actionBodies.send, body);
      const index = await answered(ctx, conversation.sendMessage(b.text));
      if (b.run) await answered(ctx, conversation.resume());
      return { ok: true, index };
    }
    case 'approve': {
      parseOr400(actionBodies.approve, body);
      return { ok: true, approved: await answered(ctx, conversation.approve()) };
    }
    case 'reject': {
      const b = parseOr400(actionBodies.reject, body);
      return { ok: true, rejected: await answered(ctx, conversation.reject(b.reason ?? '')) };
    }
    case 'close': {
      parseOr400(actionBodies.close, body);
      await conversation.close();
      return { ok: true };
    }
  }
}

/**
 * The "New conversation" form: checked (zod), the workspace looked at on this machine when the
 * tools run here (as `faheem start` does), then started through the CLI's own path.
 */
export async function create(ctx: HandlerContext, body: unknown): Promise<{ id: string; warnings: string[] }> {
  const { client, connection } = ctx;
  const form = parseOr400(newConversationBody, body);
  const toolQueue = connection.toolTaskQueue;
  const warnings: string[] = [];
  const problem = await workspaceProblem(form.workspace);
  if (problem) {
    // The tools run on another host: the workspace may be there.
    if (toolQueue.endsWith(`@${os.hostname()}`)) throw new HttpError(400, `workspace ${problem}: create it or choose another folder`);
    warnings.push(`workspace ${problem} on this machine; the host behind the tool queue ${toolQueue} must have it`);
  }
  const present = workerWarnings(client, { taskQueue: connection.taskQueue, toolTaskQueue: toolQueue });
  const conversation = await startConversation(client, {
    message: form.message,
    workspace: form.workspace,
    ...(form.id ? { id: form.id } : {}),
    ...(form.model ? { model: form.model } : {}),
    confirm: form.confirm,
    maxIterations: DEFAULTS.maxIterations,
  });
  warnings.push(...(await present).map((w) => w.replace(/^warning: /, '')));
  return { id: conversation.id, warnings };
}

/**
 * Relays the conversation's events (and live lines) as NDJSON until the browser goes away or the
 * conversation closes (checked every few seconds with describe(), which needs no worker): then the
 * events that are left, and an end line, so the page stops asking.
 */
export async function follow(ctx: HandlerContext, res: http.ServerResponse, id: string, query: URLSearchParams): Promise<void> {
  const { client, streams } = ctx;
  const q = parseOr400(followQuery, Object.fromEntries(query));
  const conversation = await attach(client, id);
  const abort = new AbortController();
  streams.add(abort);
  const stop = () => abort.abort();
  res.on('close', stop);
  res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'X-Accel-Buffering': 'no' });
  res.flushHeaders();
  let next = q.from;
  const write = (item: ConversationEvent | LiveDelta) => {
    if ('index' in item) next = Math.max(next, item.index + 1);
    res.write(`${JSON.stringify(item)}\n`);
  };
  // A blank line now and then: the browser's reader ignores it, a dead connection shows up.
  let closed = await conversation.isClosed().catch(() => false);
  const beat = setInterval(() => res.write('\n'), 15_000);
  const watch = setInterval(() => {
    void conversation.isClosed().then(
      (c) => {
        if (c) {
          closed = true;
          abort.abort();
        }
      },
      () => undefined,
    );
  }, CLOSED_CHECK_MS);
  const aborted = new Promise<'aborted'>((resolve) => abort.signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
  let items: AsyncGenerator<ConversationEvent | LiveDelta> | undefined;
  try {
    if (!closed) {
      items = conversation.follow({
        fromIndex: q.from,
        live: true,
        ...(q.liveFrom !== undefined ? { liveFrom: q.liveFrom } : {}),
        signal: abort.signal,
      });
      for (;;) {
        const step = await Promise.race([items.next(), aborted]);
        if (step === 'aborted' || step.done) break;
        write(step.value);
      }
    }
    if (closed && !res.destroyed) {
      // A closed conversation does not change: what is left of its events, and the end.
      for (const e of await conversation.events(next)) write(e);
      res.write(`${JSON.stringify({ end: true, closed: true })}\n`);
    }
  } catch (err) {
    if (!res.destroyed) res.write(`${JSON.stringify({ end: true, error: errorAnswer(err).error })}\n`);
  } finally {
    clearInterval(beat);
    clearInterval(watch);
    abort.abort();
    streams.delete(abort);
    // Ends the generator once its pending wait settles (at once when it honours the signal).
    if (items) void items.return(undefined).catch(() => undefined);
    res.end();
  }
}
