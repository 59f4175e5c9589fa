// Forking a conversation at a step: a new conversation holding the first N steps, working in its
// own copy of the workspace as of checkpoint N (the original untouched). Works on a closed
// conversation too: its queries are answered by any worker, replaying its history.
import type { Client } from '@temporalio/client';
import path from 'node:path';
import { Conversation, tenantStart } from '../client/client.js';
import { defaultForkDir } from './shadow-repo.js';
import { readEvents } from '../conversation/read-events.js';
import { FaheemError } from '../core/errors.js';
import { poolQueueName } from '../pool/workflow/pool-rules.js';
import { checkConversationId } from '../conversation/conversation-id.js';
import { emptyMetrics, type CarriedState, type ConversationInput } from '../core/types.js';
import { CARRIED_STATE_VERSION } from '../conversation/workflow/legacy/carried-state.js';
import { ConversationModelKey, ConversationStatusKey, forkPointQuery } from '../conversation/workflow/messages.js';
import { clientSettings, clientStoreSettings, taskQueue as defaultTaskQueue } from '../connection.js';
import { randomUUID } from 'node:crypto';

/** A fork that cannot be made (no such step, no checkpoint). */
export class ForkError extends FaheemError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

/** Options of `forkConversation`. */
export interface ForkOptions {
  /** The step to fork at: the new conversation holds steps 1..at. */
  at: number;
  /** The new conversation's id (default: generated). */
  id?: string;
  /** Its workspace directory on the workspace host (default: a sibling of the source's, named after the new id). */
  workspace?: string;
  /** The task queue of the conversation workflows (default as the CLI's). */
  taskQueue?: string;
}

/**
 * Forks conversation `sourceId` at step `options.at`: the new conversation is paused, holds the
 * source's events up to that step's checkpoint (its status has `forkedFrom`), and its first act is
 * to write checkpoint N into its own workspace. Send it a message or resume it to go on.
 */
export async function forkConversation(client: Client, sourceId: string, options: ForkOptions): Promise<Conversation> {
  // The new id names its default workspace folder too: checked before anything is asked.
  if (options.id !== undefined) checkConversationId(options.id, 'new');
  const source = await Conversation.attach(client, sourceId);
  const handle = client.workflow.getHandle(sourceId);
  const point = await handle.query(forkPointQuery, options.at);
  if (!point) {
    const steps = (await source.checkpoints()).filter((c) => !c.rewound && c.commit).map((c) => c.step);
    throw new ForkError(
      `conversation ${sourceId} has no checkpoint of step ${options.at}${steps.length ? ` (steps with one: ${steps.join(', ')})` : ''}`,
    );
  }
  const id = options.id ?? `conv-${randomUUID().slice(0, 13)}`;
  const sourceWorkspace = point.options.workspace;
  // A pooled conversation's fork is pooled too: its workspace is the source's shipped step, in the store.
  const pool = point.options.pool;
  if (pool !== undefined && options.workspace !== undefined)
    throw new ForkError('a fork of a pooled conversation is pooled too: it has no workspace folder to choose');
  const workspace =
    pool !== undefined ? `/faheem-pool/${pool}/${id}` : path.resolve(options.workspace ?? defaultForkDir(sourceWorkspace, id));
  // Every event up to the checkpoint, those earlier runs hold included; the fork holds them itself.
  const all = await readEvents(handle, 0, point.checkpoint.index + 1);
  // Without readers' marks: the rewind events it carries say what is out of the prompt.
  const events = all.map(({ rewound: _r, ...e }) => e);
  const { toolState, ...checkpoint } = point.checkpoint;
  const carried: CarriedState = {
    version: CARRIED_STATE_VERSION,
    events,
    runs: [],
    status: 'paused',
    iterations: 0,
    runNumber: 0,
    metrics: emptyMetrics(),
    lastError: null,
    modelSeenEvents: events.length,
    runCost: 0,
    toolState: toolState ?? { terminal: { cwd: workspace, env: {} } },
    steps: checkpoint.step,
    // The source's checkpoints up to this step come along (the fork's workspace host has them too).
    checkpoints: [
      ...(await source.checkpoints()).filter((c) => !c.rewound && c.commit && c.step < checkpoint.step && c.index < checkpoint.index),
      point.checkpoint,
    ],
    finalMessage: null,
    forkedFrom: { id: sourceId, step: checkpoint.step, commit: checkpoint.commit as string },
    forkMade: false,
  };
  // The terminal's directory moves with the workspace.
  const terminal = carried.toolState?.terminal as { cwd?: string } | undefined;
  if (terminal?.cwd && (terminal.cwd === sourceWorkspace || terminal.cwd.startsWith(sourceWorkspace + path.sep))) {
    terminal.cwd = workspace + terminal.cwd.slice(sourceWorkspace.length);
  }
  // A fork is a conversation of its own, not a sub-agent.
  // A fork is a new conversation: the source's webhook (and its secret, kept under the source's id) stays with the source.
  const {
    parent: _parent,
    poolHost: _host,
    poolReleasedBy: _released,
    poolReleasedMidStep: _midStep,
    webhook: _webhook,
    ...options_
  } = point.options;
  const settings = clientSettings();
  if (pool !== undefined) {
    const { objectStore } = await import('../storage/object-store.js');
    const { forkShipped } = await import('../pool/shipping.js');
    const { encryptionCodec } = await import('../security/codec.js');
    const storage = clientStoreSettings(settings);
    const store = objectStore(storage);
    if (!store) throw new ForkError('forking a pooled conversation reads the object store: set FAHEEM_OBJECT_STORE');
    await forkShipped(store, sourceId, checkpoint.step, id, encryptionCodec(storage.codec));
    carried.forkMade = true; // the first host of the pool to claim it restores the step
  }
  const input: ConversationInput = {
    options: {
      ...options_,
      workspace,
      ...(pool !== undefined ? { toolTaskQueue: poolQueueName(options.taskQueue ?? defaultTaskQueue(settings), pool) } : {}),
    },
    carried,
    ...(pool === undefined ? { fork: { origin: carried.forkedFrom as NonNullable<CarriedState['forkedFrom']>, sourceWorkspace } } : {}),
  };
  // The fork stays in the source's tenant (its options carry it): the same attribute and fairness key.
  const placed = tenantStart(point.options.tenant);
  await client.workflow.start('conversation', {
    workflowId: id,
    taskQueue: options.taskQueue ?? defaultTaskQueue(settings),
    args: [input],
    typedSearchAttributes: [
      { key: ConversationStatusKey, value: 'paused' },
      { key: ConversationModelKey, value: point.options.agent.llm.model || 'default' },
      ...placed.typedSearchAttributes,
    ],
    ...(placed.priority ? { priority: placed.priority } : {}),
    staticSummary: `Fork of ${sourceId} at step ${checkpoint.step}`,
    staticDetails: `**Forked from:** \`${sourceId}\` at step ${checkpoint.step} (checkpoint ${String(checkpoint.commit).slice(0, 10)})\n\n**Workspace:** \`${workspace}\``,
  });
  const forked = await Conversation.attach(client, id);
  // Ready once its workspace is made (the first thing the fork does), or said why not.
  const state = await forked.waitUntil((s) => s.forkPending !== true || s.status === 'error', 100, 10 * 60_000);
  if (state.status === 'error') throw new ForkError(`the fork ${id} could not be made: ${state.lastError ?? 'unknown error'}`);
  return forked;
}
