// Whether a worker is there to answer: which workers poll a task queue (Temporal's describeTaskQueue),
// and what the CLI can still say about a conversation when none does (the status it last recorded).
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { decodeArrayFromPayloads, extstoreInboundOptions, visit } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { walkGetWorkflowExecutionHistoryResponse } from '@temporalio/proto/lib/payload-visitor.generated.js';
import { accessSync, constants } from 'node:fs';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import pc from 'picocolors';
import type { Conversation } from '../client/client.js';
import type { ConversationInput, ConversationState } from '../core/types.js';
import { ConversationModelKey, ConversationStatusKey } from '../conversation/workflow/messages.js';
import { colorStatus } from './format.js';
import { shownTime } from '../core/text.js';
import { POLLER_FRESH_MS, QUICK_ANSWER_MS } from './presence-rules.js';

export { POLLER_FRESH_MS, QUICK_ANSWER_MS };

export interface QueuePollers {
  queue: string;
  kind: 'workflow' | 'activity';
  /** A worker polled within POLLER_FRESH_MS. */
  polling: boolean;
  /** The workers that did (their identities, e.g. `1234@host`). */
  identities: string[];
  /** Without a present worker: how long ago the last one polled, if the server still lists it. */
  lastPollAgoMs?: number;
}

/** Who polls `queue` for workflow tasks (`workflow`) or activities (`activity`); bounded by `timeoutMs`. */
export async function queuePollers(client: Client, queue: string, kind: 'workflow' | 'activity', timeoutMs = 3_000): Promise<QueuePollers> {
  const response = await client.connection.withDeadline(Date.now() + timeoutMs, () =>
    client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: queue, kind: 1 /* TASK_QUEUE_KIND_NORMAL */ },
      taskQueueType: kind === 'workflow' ? 1 : 2 /* TASK_QUEUE_TYPE_WORKFLOW / _ACTIVITY */,
    }),
  );
  const now = Date.now();
  const pollers = (response.pollers ?? []).map((p) => ({
    identity: p.identity || '?',
    ageMs: p.lastAccessTime ? now - (Number(p.lastAccessTime.seconds ?? 0) * 1000 + (p.lastAccessTime.nanos ?? 0) / 1e6) : Infinity,
  }));
  const present = pollers.filter((p) => p.ageMs < POLLER_FRESH_MS);
  const newest = Math.min(...pollers.map((p) => p.ageMs));
  return {
    queue,
    kind,
    polling: present.length > 0,
    identities: present.map((p) => p.identity),
    ...(present.length === 0 && Number.isFinite(newest) ? { lastPollAgoMs: newest } : {}),
  };
}

function lastPoll(p: QueuePollers): string {
  return p.lastPollAgoMs !== undefined ? ` (its last worker polled ${Math.round(p.lastPollAgoMs / 1000)} s ago)` : '';
}

export function noWorkflowWorker(p: QueuePollers): string {
  return `no worker polls the task queue ${p.queue}${lastPoll(p)}`;
}

export function noToolWorker(p: QueuePollers): string {
  return `no worker polls the tool queue ${p.queue}${lastPoll(p)}`;
}

/**
 * Warnings (one line each, for stderr) when nobody polls a conversation's task queue or its tool
 * queue. A check that cannot be made (an old server, a deadline) stays silent: this only warns.
 */
export async function workerWarnings(client: Client, queues: { taskQueue: string; toolTaskQueue?: string | undefined }): Promise<string[]> {
  const [main, tools] = await Promise.all([
    queuePollers(client, queues.taskQueue, 'workflow').catch(() => undefined),
    queues.toolTaskQueue ? queuePollers(client, queues.toolTaskQueue, 'activity').catch(() => undefined) : undefined,
  ]);
  const warnings: string[] = [];
  if (main && !main.polling) {
    warnings.push(
      `warning: ${noWorkflowWorker(main)}: the conversation waits until one does (run \`npx faheem worker\` against this server)`,
    );
  }
  if (tools && !tools.polling) {
    warnings.push(`warning: ${noToolWorker(tools)}: its commands and edits wait until the workspace host runs \`npx faheem worker\``);
  }
  return warnings;
}

/** The task queue of a conversation's workflow and the tool queue it was started with (if readable). */
export async function conversationQueues(client: Client, id: string): Promise<{ taskQueue: string; toolTaskQueue?: string }> {
  const description = await client.workflow.getHandle(id).describe();
  const toolTaskQueue = await startInput(client, id, description.runId)
    .then((input) => input?.options?.toolTaskQueue)
    .catch(() => undefined);
  return { taskQueue: description.taskQueue, ...(toolTaskQueue ? { toolTaskQueue } : {}) };
}

/**
 * The input payloads the workflow's current run (or `runId`) started with (its first history event),
 * back from external storage but not yet decoded by the codecs.
 */
export async function startInputPayloads(client: Client, workflowId: string, runId?: string): Promise<Payload[]> {
  const response = await client.connection.withDeadline(Date.now() + 3_000, () =>
    client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      maximumPageSize: 1,
    }),
  );
  await visit(
    response,
    walkGetWorkflowExecutionHistoryResponse,
    extstoreInboundOptions(client.options.loadedDataConverter.externalStorage),
  );
  return (response.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []) as Payload[];
}

/** The start input, decoded the way the SDK decodes a result: external storage first, then the codecs. */
async function startInput(client: Client, workflowId: string, runId: string): Promise<ConversationInput | undefined> {
  const [input] = await decodeArrayFromPayloads(client.options.loadedDataConverter, await startInputPayloads(client, workflowId, runId));
  return input as ConversationInput | undefined;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** What the CLI knows of a conversation when no worker answers: the workflow's description. */
export interface LastKnown {
  id: string;
  /** The ConversationStatus search attribute the workflow last set; null before a worker ever ran it. */
  status: string | null;
  lastKnown: true;
  workerPolling: false;
  taskQueue: string;
  model: string | null;
  closed: boolean;
  startTime: string;
  note: string;
}

/**
 * The conversation's live state when a worker answers; when none polls its task queue, the last
 * known status at once. When a worker is there but slow, `waitLonger` decides how long to wait.
 */
export async function stateOrLastKnown(
  client: Client,
  conversation: Conversation,
  waitLonger: <T>(p: Promise<T>) => Promise<T>,
): Promise<{ state: ConversationState } | { lastKnown: LastKnown }> {
  type Answer = { ok: true; state: ConversationState } | { ok: false; err: unknown };
  const query: Promise<Answer> = conversation.state().then(
    (state) => ({ ok: true, state }),
    (err: unknown) => ({ ok: false, err }),
  );
  const description = client.workflow.getHandle(conversation.id).describe();
  const pollers = description.then((d) => queuePollers(client, d.taskQueue, 'workflow'));
  // Both settle below, if at all; an early exit must not turn them into unhandled rejections.
  description.catch(() => undefined);
  pollers.catch(() => undefined);
  const nobody = pollers.then(
    async (p) => (p.polling ? new Promise<never>(() => undefined) : delay(150).then(() => 'nobody' as const)),
    () => new Promise<never>(() => undefined),
  );
  const first = await Promise.race([query, delay(QUICK_ANSWER_MS).then(() => 'slow' as const), nobody]);
  if (typeof first === 'object' && first.ok) return { state: first.state };
  const present = await pollers.then((p) => p.polling).catch(() => true);
  if (present) {
    const answer = await waitLonger(query);
    if (answer.ok) return { state: answer.state };
    throw answer.err;
  }
  const d = await description;
  const status = d.typedSearchAttributes.get(ConversationStatusKey);
  const model = d.typedSearchAttributes.get(ConversationModelKey);
  const p = await pollers;
  return {
    lastKnown: {
      id: conversation.id,
      status: status === undefined ? null : String(status),
      lastKnown: true,
      workerPolling: false,
      taskQueue: d.taskQueue,
      model: model === undefined ? null : String(model),
      closed: d.status.name !== 'RUNNING',
      startTime: d.startTime.toISOString(),
      note:
        `${noWorkflowWorker(p)}; ` +
        (status === undefined ? 'no worker has picked this conversation up yet' : 'this is the status it last recorded') +
        ' (run `npx faheem worker` against this server for the live state)',
    },
  };
}

export function formatLastKnown(k: LastKnown): string {
  const head =
    k.status === null
      ? `${pc.bold(k.id)}  ${pc.yellow('no status yet')}${pc.dim(' (no worker has run it)')}`
      : `${pc.bold(k.id)}  ${colorStatus(k.status)}${k.closed ? pc.dim(' (closed)') : ''}  ${pc.yellow('(last known status: no worker answered)')}`;
  return [
    head,
    `  ${pc.yellow(k.note)}`,
    ...(k.model ? [`  model       ${k.model}`] : []),
    `  started     ${shownTime(k.startTime)}`,
    `  task queue  ${k.taskQueue}`,
  ].join('\n');
}

/**
 * Why the agent could not work in `dir` on this machine (missing, not a directory, not readable or
 * writable), or undefined when it can.
 */
export async function workspaceProblem(dir: string): Promise<string | undefined> {
  let info;
  try {
    info = await stat(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `${dir} does not exist`;
    if (code === 'ENOTDIR') return `${dir} does not exist (a parent of it is a file)`;
    if (code === 'EACCES') return `${dir} cannot be reached (permission denied on a parent directory)`;
    return `${dir}: ${(err as Error).message}`;
  }
  if (!info.isDirectory()) return `${dir} is not a directory`;
  const missing = [
    [constants.R_OK, 'readable'],
    [constants.W_OK, 'writable'],
    [constants.X_OK, 'searchable'],
  ].flatMap(([mode, what]) => {
    try {
      accessSync(dir, mode as number);
      return [];
    } catch {
      return [what as string];
    }
  });
  return missing.length ? `${dir} is not ${missing.join(' or ')} by this user` : undefined;
}

/**
 * For `start`: a workspace this machine cannot use is refused when the tools run here (the default
 * tool queue is this host's); with another host's tool queue it is only a warning, as the workspace
 * may be there.
 */
export async function startWorkspaceCheck(dir: string, toolQueue: string): Promise<{ error?: string; warning?: string }> {
  const problem = await workspaceProblem(dir);
  if (!problem) return {};
  if (toolQueue.endsWith(`@${os.hostname()}`)) return { error: `workspace ${problem}: create it or pass another --workspace` };
  return { warning: `warning: workspace ${problem} on this machine; the host behind the tool queue ${toolQueue} must have it` };
}

/** Warnings when nobody polls an existing conversation's task queue or tool queue. */
export async function conversationWorkerWarnings(client: Client, id: string): Promise<string[]> {
  const queues = await conversationQueues(client, id).catch(() => undefined);
  return queues ? workerWarnings(client, queues) : [];
}

export function printWarnings(lines: string[]): void {
  for (const l of lines) console.error(pc.yellow(`faheem: ${l}`));
}
