// In-process workflow tests: the real conversation workflow (dist/workflow-bundle.js) on a real
// Temporal dev server, run by real Workers created in the test process, with the activities stubbed
// in the test (stand-ins for OUR activities only: Temporal, the client and the worker are real).
// One dev server for the run (FAHEEM_TEST_TEMPORAL_ADDRESS, set by test/support/run-tests.ts), or
// one per file when a file runs alone; each file gets its own namespace and task queues.
import { DROP_CHANGES } from '../../src/live/change-notifier.js';
import { Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createHash, randomUUID } from 'node:crypto';
import type {
  CheckpointInfo,
  CheckpointWorkspaceInput,
  ForkResult,
  ForkWorkspaceInput,
  ListCheckpointsInput,
  RestoreResult,
  RestoreWorkspaceInput,
} from '../../src/time-travel/types.js';
import { withHeartbeat } from '../../src/conversation/heartbeat.js';
import type { DevServer } from '../../src/server/dev-server.js';
import {
  DEFAULTS,
  type ChatToolCall,
  type CondenseInput,
  type CondenseResult,
  type ConversationEvent,
  type ConversationInput,
  type ConversationOptions,
  type ConversationState,
  type ModelCallInput,
  type ModelCallResult,
  type PrepareToolsInput,
  type PrepareToolsResult,
  type RunToolInput,
  type RunToolResult,
  type ToolSpec,
} from '../../src/core/types.js';
import { readEvents as readEveryEvent } from '../../src/conversation/read-events.js';
import { eventsQuery, stateQuery } from '../../src/conversation/workflow/messages.js';
import { lacksPromptEvents } from '../../src/time-travel/workflow/rewind-rules.js';
import { countedRetries, startDevServerOnFreePorts, waitFor, workflowBundle } from './harness.js';
import { testNamespace } from './namespace.js';

/** What a scripted model answers: text, tool calls (arguments as objects), and the call's cost. */
export interface Reply {
  content?: string | null;
  toolCalls?: { name: string; arguments: unknown; plan?: ChatToolCall['plan'] }[];
  cost?: number;
}

/** The model of one conversation: called with the activity's input and the events it covers. */
export type ModelScript = (input: ModelCallInput, events: ConversationEvent[]) => Reply | Promise<Reply>;

/** The workspace host's tools of one conversation (the `runTool` and `prepareTools` activities). */
export interface HostScript {
  prepare?: (input: PrepareToolsInput) => PrepareToolsResult | Promise<PrepareToolsResult>;
  run?: (input: RunToolInput) => RunToolResult | Promise<RunToolResult>;
}

/** One conversation under test: its handle, what its activities saw, and ways to wait on it. */
export interface TestConversation {
  id: string;
  handle: WorkflowHandle;
  /** The workspace host's queue of this conversation. */
  toolTaskQueue: string;
  modelCalls: ModelCallInput[];
  toolCalls: RunToolInput[];
  prepareCalls: PrepareToolsInput[];
  /** The steps the workspace was checkpointed after (0: before the first step). */
  checkpointCalls: CheckpointWorkspaceInput[];
  /** The workspace put back by a rewind. */
  restoreCalls: RestoreWorkspaceInput[];
  state(): Promise<ConversationState>;
  events(): Promise<ConversationEvent[]>;
  /** Polls the state query until `check` holds (or fails after `timeoutMs`, with the last state). */
  until(what: string, check: (s: ConversationState) => boolean, timeoutMs?: number): Promise<ConversationState>;
}

export interface StartOptions {
  /** Overrides of the conversation's options (defaults: terminal + finish + think, never confirm). */
  options?: Partial<ConversationOptions>;
  firstMessage?: string;
  /** Start running at once (default true). */
  run?: boolean;
  model: ModelScript;
  host?: HostScript;
  /** Start through signal-with-start with this signal and arguments (e.g. a pause). */
  signal?: { name: string; args: unknown[] };
  /** A queue of its own for the host tools, with no worker until `env.hostWorker(queue)` starts one. */
  ownHostQueue?: boolean;
}

export interface WorkflowEnv {
  client: Client;
  namespace: string;
  taskQueue: string;
  start(options: StartOptions): Promise<TestConversation>;
  /** A worker for the host activities on `queue` (the stubs of the conversations using it); stop() ends it. */
  hostWorker(queue: string): Promise<{ stop(): Promise<void> }>;
  /** A worker for the workflows (and model activities) on `queue`, e.g. one started after work was queued there. */
  workflowWorker(queue: string): Promise<{ stop(): Promise<void> }>;
  close(): Promise<void>;
}

const SPECS: Record<string, ToolSpec> = {
  terminal: { name: 'terminal', description: 'Run a command', parameters: { type: 'object' }, runsIn: 'host', needsApproval: 'per-call' },
  file_editor: {
    name: 'file_editor',
    description: 'Edit files',
    parameters: { type: 'object' },
    runsIn: 'host',
    needsApproval: 'per-call',
  },
  think: { name: 'think', description: 'Think', parameters: { type: 'object' }, runsIn: 'workflow', needsApproval: false },
  finish: { name: 'finish', description: 'Finish', parameters: { type: 'object' }, runsIn: 'workflow', needsApproval: false },
  task_tracker: { name: 'task_tracker', description: 'Tasks', parameters: { type: 'object' }, runsIn: 'workflow', needsApproval: false },
  delegate: { name: 'delegate', description: 'Delegate', parameters: { type: 'object' }, runsIn: 'workflow', needsApproval: false },
  wait: { name: 'wait', description: 'Wait', parameters: { type: 'object' }, runsIn: 'workflow', needsApproval: false },
};

/** The host's default answer to prepareTools: a spec for each tool asked for. */
export function prepareDefault(input: PrepareToolsInput): PrepareToolsResult {
  return {
    tools: input.tools.map(
      (t) => SPECS[t] ?? { name: t, description: t, parameters: { type: 'object' }, runsIn: 'host', needsApproval: 'per-call' },
    ),
    errors: [],
  };
}

/** The host's default answer to a tool call: "ran <tool> <arguments>". */
export function runDefault(input: RunToolInput): RunToolResult {
  return { content: `ran ${input.tool} ${JSON.stringify(input.arguments)}`, isError: false, exitCode: 0 };
}

/** 40 hex digits derived from `key`, standing in for a checkpoint's commit id (`<conversation>:<step>`). */
export function fakeCommit(key: string): string {
  return createHash('sha1').update(key).digest('hex');
}

let sharedWorkerStarted = 0;
let runtimeInstalled = false;

/**
 * Starts the test file's environment: a namespace on the run's dev server (or a dev server of its
 * own), and one in-process worker for the workflow and the model activities.
 */
export async function startWorkflowEnv(name: string): Promise<WorkflowEnv> {
  // Warnings and errors only (FAHEEM_LOG_LEVEL to see more): the workers' state changes are noise here.
  if (!runtimeInstalled) {
    runtimeInstalled = true;
    const level = (process.env.FAHEEM_LOG_LEVEL?.toUpperCase() as 'WARN' | undefined) ?? 'WARN';
    // Host workers run activities only, as the real tool worker does: their warning about it is expected.
    const logger = new DefaultLogger(level, (entry) => {
      if (!entry.message.startsWith('No workflows registered')) console.warn(`[${entry.level}] ${entry.message}`, entry.meta ?? '');
    });
    Runtime.install({ logger });
  }
  const shared = process.env.FAHEEM_TEST_TEMPORAL_ADDRESS;
  let server: DevServer | undefined;
  let address = shared;
  if (!address) {
    server = await startDevServerOnFreePorts({ headless: true });
    address = server.address;
  }
  // Retries counted, so that close() lets those in backoff start before the connection goes.
  const retries = countedRetries();
  const connection = await Connection.connect({ address, interceptors: [retries.interceptor] });
  const namespace = await testNamespace(connection, name);
  const client = new Client({ connection, namespace });
  const nativeConnection = await NativeConnection.connect({ address });
  const taskQueue = `wf-${name}-${process.pid}-${++sharedWorkerStarted}`;

  interface Entry {
    model: ModelScript;
    host: HostScript;
    conversation: TestConversation;
  }
  const conversations = new Map<string, Entry>();
  // A sub-agent (`<id>.sub-<n>`) is answered by its root conversation's scripts.
  const entry = (id: string): Entry => {
    const found = conversations.get(id) ?? conversations.get(id.split('.sub-')[0]!);
    if (!found) throw new Error(`no test conversation ${id}`);
    return found;
  };

  async function readEvents(id: string): Promise<ConversationEvent[]> {
    return client.workflow.getHandle(id).query(eventsQuery, 0, 100_000);
  }

  const activities = {
    async callModel(input: ModelCallInput): Promise<ModelCallResult> {
      return beating(() => scriptedCall(input));
    },
    async condense(input: CondenseInput): Promise<CondenseResult> {
      return {
        summary: `summary of ${input.from}-${input.to}`,
        usage: { promptTokens: 10, completionTokens: 5, cacheReadTokens: 0 },
        cost: 0,
        latencyMs: 1,
      };
    },
  };
  async function scriptedCall(input: ModelCallInput): Promise<ModelCallResult> {
    const e = entry(input.conversationId);
    if (input.conversationId === e.conversation.id) e.conversation.modelCalls.push(input);
    // What the model activity reads (TranscriptCache.read): the events of [0, eventCount) the run
    // holds, and, after a rewind to before a condensation, those only earlier runs hold.
    let events = (await readEvents(input.conversationId)).filter((e) => e.index < input.eventCount);
    if (lacksPromptEvents(events, input.eventCount)) {
      events = await readEveryEvent(client.workflow.getHandle(input.conversationId), 0, input.eventCount);
    }
    const reply = await e.model(input, events);
    return {
      id: `reply-${input.conversationId}-${input.step}-${randomUUID().slice(0, 6)}`,
      model: 'scripted',
      content: reply.content ?? null,
      toolCalls: (reply.toolCalls ?? []).map((c, i) => ({
        id: `call-${input.step}-${i}-${randomUUID().slice(0, 6)}`,
        name: c.name,
        arguments: JSON.stringify(c.arguments),
        ...(c.plan ? { plan: c.plan } : {}),
      })),
      usage: { promptTokens: 100, completionTokens: 20, cacheReadTokens: 0 },
      cost: reply.cost ?? 0.0001,
      latencyMs: 1,
    };
  }
  const hostActivities = {
    async prepareTools(input: PrepareToolsInput): Promise<PrepareToolsResult> {
      const e = entry(input.conversationId);
      if (input.conversationId === e.conversation.id) e.conversation.prepareCalls.push(input);
      return (e.host.prepare ?? prepareDefault)(input);
    },
    async runTool(input: RunToolInput): Promise<RunToolResult> {
      const e = entry(input.conversationId);
      if (input.conversationId === e.conversation.id) e.conversation.toolCalls.push(input);
      return beating(async () => (e.host.run ?? runDefault)(input));
    },
    async releaseTools(_id: string): Promise<void> {},
    // Checkpoints of the workspace: a made-up commit per step (the store itself has its own tests).
    async checkpointWorkspace(input: CheckpointWorkspaceInput): Promise<CheckpointInfo> {
      const e = entry(input.conversationId);
      if (input.conversationId === e.conversation.id) e.conversation.checkpointCalls.push(input);
      const commit = fakeCommit(`${input.conversationId}:${input.step}`);
      return { commit, tree: commit, step: input.step, kind: 'step', time: Date.now(), added: 0, changed: 0, deleted: 0, skipped: [] };
    },
    async restoreWorkspace(input: RestoreWorkspaceInput): Promise<RestoreResult> {
      const e = entry(input.conversationId);
      if (input.conversationId === e.conversation.id) e.conversation.restoreCalls.push(input);
      const before = fakeCommit(`${input.conversationId}:${input.rewindId}`);
      return {
        before: {
          commit: before,
          tree: before,
          step: 0,
          kind: 'before-rewind',
          time: Date.now(),
          added: 0,
          changed: 0,
          deleted: 0,
          skipped: [],
        },
        restored: input.commit,
        written: 0,
        removed: 0,
        kept: [],
      };
    },
    async forkWorkspace(input: ForkWorkspaceInput): Promise<ForkResult> {
      return { target: input.target ?? `${input.workspace}-${input.newConversationId}`, files: 0, steps: 0 };
    },
    async listCheckpoints(_input: ListCheckpointsInput): Promise<CheckpointInfo[]> {
      return [];
    },
  };

  const workers: { worker: Worker; running: Promise<void> }[] = [];
  async function runWorker(worker: Worker): Promise<{ stop(): Promise<void> }> {
    const running = worker.run();
    const w = { worker, running };
    workers.push(w);
    // Polling once the state says so: a test may then rely on its tasks being picked up.
    await waitFor('the worker to run', () => worker.getState() === 'RUNNING', 30_000, 10);
    return {
      stop: async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        workers.splice(workers.indexOf(w), 1);
      },
    };
  }

  const workflowWorker = async (queue: string) =>
    runWorker(
      await Worker.create({
        connection: nativeConnection,
        namespace,
        taskQueue: queue,
        workflowBundle: { codePath: await workflowBundle() },
        sinks: DROP_CHANGES,
        activities,
        maxHeartbeatThrottleInterval: '100 milliseconds',
        defaultHeartbeatThrottleInterval: '100 milliseconds',
        shutdownGraceTime: '1 second',
      }),
    );
  await workflowWorker(taskQueue);
  const hostQueue = `${taskQueue}-tools`;
  await runWorker(
    await Worker.create({
      connection: nativeConnection,
      namespace,
      taskQueue: hostQueue,
      activities: hostActivities,
      shutdownGraceTime: '1 second',
    }),
  );
  let ownQueues = 0;

  const env: WorkflowEnv = {
    client,
    namespace,
    taskQueue,
    workflowWorker,
    async hostWorker(queue) {
      return runWorker(
        await Worker.create({
          connection: nativeConnection,
          namespace,
          taskQueue: queue,
          activities: hostActivities,
          shutdownGraceTime: '1 second',
        }),
      );
    },
    async start(o) {
      const id = `wf-${randomUUID().slice(0, 8)}`;
      const toolTaskQueue = o.ownHostQueue ? `${taskQueue}-host-${++ownQueues}` : hostQueue;
      const options: ConversationOptions = {
        workspace: '/nonexistent-workspace',
        agent: { llm: { usageId: 'test', model: 'scripted' }, tools: ['terminal', 'think', 'finish'] },
        toolTaskQueue,
        maxIterations: 50,
        confirmationPolicy: 'never',
        idleTimeoutMs: DEFAULTS.idleTimeoutMs,
        ...o.options,
      };
      const input: ConversationInput = { options, firstMessage: o.firstMessage ?? 'go', ...(o.run === false ? {} : { run: true }) };
      const startOptions = { workflowId: id, taskQueue, args: [input] as [ConversationInput] };
      const handle = o.signal
        ? await client.workflow.signalWithStart('conversation', { ...startOptions, signal: o.signal.name, signalArgs: o.signal.args })
        : await client.workflow.start('conversation', startOptions);
      const conversation: TestConversation = {
        id,
        handle,
        toolTaskQueue,
        modelCalls: [],
        toolCalls: [],
        prepareCalls: [],
        checkpointCalls: [],
        restoreCalls: [],
        state: () => handle.query(stateQuery),
        events: () => readEvents(id),
        async until(what, check, timeoutMs = 60_000) {
          let last: ConversationState | undefined;
          try {
            await waitFor(what, async () => check((last = await handle.query(stateQuery))), timeoutMs);
          } catch (err) {
            throw new Error(`${(err as Error).message}\nlast state: ${JSON.stringify(last)}`);
          }
          return last!;
        },
      };
      conversations.set(id, { model: o.model, host: o.host ?? {}, conversation });
      return conversation;
    },
    async close() {
      for (const w of [...workers].reverse()) if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      await Promise.allSettled(workers.map((w) => w.running));
      await nativeConnection.close();
      retries.close();
      await waitFor('the retries in backoff to start', () => retries.inBackoff() === 0, 30_000, 20);
      await connection.close();
      await server?.stop();
    },
  };
  return env;
}

/**
 * Runs a stand-in activity while heartbeating every 100 ms, and ends it as cancelled when its
 * cancellation arrives, as the real model and tool activities do: without the beats, a stand-in
 * slowed past the heartbeat timeout on a loaded machine is retried, and a script that counts
 * its calls sees one call too many.
 */
async function beating<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  return withHeartbeat(() => Promise.race([work(), ctx.cancelled]), { everyMs: 100, context: ctx });
}
