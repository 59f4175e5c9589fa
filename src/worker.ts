// The worker: runs conversation workflows and model calls on the shared task queue, and tools on
// this host's tool queue. Holds the secrets (from its environment); nothing else does.
import type { LogMetadata } from '@temporalio/common';
import {
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type LogLevel,
  type NativeConnection,
  type RuntimeOptions,
  type WorkerOptions,
} from '@temporalio/worker';
import { availableParallelism } from 'node:os';
import { Client } from '@temporalio/client';
import { createActivities } from './conversation/activities.js';
import { ChangeNotifier } from './live/change-notifier.js';
import { LivePublisher } from './live/publisher.js';
import { secretValues } from './security/env-policy.js';
import { McpManager } from './mcp/manager.js';
import type { AnyTool } from './tools/define.js';
import type { WorkerHooks } from './hooks/run-hook.js';
import { resolveSandbox, type SandboxOptions, type SandboxRequest } from './sandbox/sandbox.js';
import { stopKeptNetworks } from './sandbox/kept-network.js';
import { setUpSpawner } from './sandbox/spawner.js';
import { readWorkerConfig as workerConfigOf, type WorkerConfig, type WorkerDeploymentVersion } from './worker/config.js';
import { createMetrics } from './telemetry/metrics.js';
import { connectConnection, connectWorker } from './connection.js';
import { connectionSettings, type ConnectionSettings } from './settings/connection.js';
import { telemetrySettings } from './settings/telemetry.js';
import { workerSettings } from './settings/worker.js';
import { deploySettings, type DeploySettings } from './settings/deploy.js';
import { checkpointSettings } from './settings/checkpoints.js';
import { modelSettings, type ModelSettings } from './settings/models.js';
import { storeSettings, type StoreSettings } from './settings/store.js';
import { SEARCH_ATTRIBUTES } from './client/search-attributes.js';
import { dataConverter } from './storage/local-payloads.js';
import { tracedWorkflowSource, workflowSource as workflowSourceOf, type WorkflowSource } from './worker/workflow-source.js';
import { heartbeatCadence, pauseChannelOf, type PauseChannel } from './client/pause-channel.js';
import { shutdownTracing, startTracing, type Tracing } from './telemetry/tracing.js';
import { poolQueue, poolSettings, type PoolSettings } from './pool/pool.js';
import { storeGuarantee } from './pool/shipping.js';
import { activityFailureLine } from './worker/worker-log.js';
import { workerIdentity, workerModel, type WorkerModel } from './models/worker-model.js';
import { readSettings, type ChildEnv, type RawEnv, type Settings } from './environment.js';
import { InvalidRequestError } from './core/errors.js';

export { bundlerOptions, workflowsPath, type WorkflowSource } from './worker/workflow-source.js';
export type { WorkerConfig, WorkerDeploymentVersion, WorkerLogLevel } from './worker/config.js';
export type { WorkerHookContext, WorkerHookFn, WorkerHooks, WorkerHookSpec } from './hooks/run-hook.js';
export type { HookAnswer } from './hooks/decision.js';

/**
 * The worker's settings (FAHEEM_*), checked: from `env`, by default this process's environment.
 * Throws an InvalidRequestError naming a variable whose value cannot be used.
 */
export function readWorkerConfig(env: RawEnv | Settings = process.env): WorkerConfig {
  return workerConfigOf(env);
}

/** The workflow code a worker runs (FAHEEM_WORKFLOW_BUNDLE, else the package's bundle), by default from this process's environment. */
export function workflowSource(env: Settings = readSettings(process.env, 'worker')): WorkflowSource {
  return workflowSourceOf(deploySettings(env));
}

/** A created worker: `run()` until `shutdown()`; its task queues and sandbox. */
export interface WorkerHandle {
  /** Polls both task queues until shutdown (then closes MCP servers and the connection). */
  run(): Promise<void>;
  /** Stops polling; `run()` resolves once the calls in flight are done. */
  shutdown(): void;
  /** The queue of workflows and model calls (FAHEEM_TASK_QUEUE, default `faheem`). */
  taskQueue: string;
  /** This host's tool queue (FAHEEM_TOOL_TASK_QUEUE, default `faheem-tools@<host>`). */
  toolTaskQueue: string;
  /** The sandbox this worker's commands run under; undefined: unsandboxed. */
  sandbox: SandboxOptions | undefined;
  /** Set when the default sandbox could not be had here: what commands get instead, and why (also printed at start). */
  sandboxWarning: string | undefined;
  /** The Worker Deployment version it serves; undefined: unversioned. */
  deployment: WorkerDeploymentVersion | undefined;
  /** The port of its Prometheus endpoint; undefined: none. */
  metricsPort: number | undefined;
  /** The address its Prometheus endpoint listens on (default 127.0.0.1). */
  metricsHost: string;
  /** How a pause reaches this worker's calls in flight (worker commands, or heartbeats on an older server). */
  pauseChannel: PauseChannel;
  /** The pool this worker hosts workspaces of (--pool / FAHEEM_POOL); undefined: none. */
  pool: Pick<PoolSettings, 'pool' | 'hostId' | 'workspacesDir'> | undefined;
  /** The model conversations that name none call (LLM_MODEL; `scripted/demo`: the offline scripted model); undefined: none. */
  model: string | undefined;
  /** The most model calls it runs at once (--max-model-calls / FAHEEM_MAX_MODEL_CALLS); undefined: the SDK's default. */
  maxModelCalls: number | undefined;
}

/** The default logger, less the warning that the tools worker runs no workflows (by design). */
class WorkerLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (message.startsWith('No workflows registered')) return;
    // One line per failed attempt (the stack adds nothing a user can act on; DEBUG keeps it all).
    if (message === 'Activity failed' && meta && this.level !== 'DEBUG' && this.level !== 'TRACE') {
      super.log(level, activityFailureLine(meta), {});
      return;
    }
    super.log(level, message, meta);
  }
}

/**
 * The runtime the worker installs: its logger, and the core's own log lines forwarded to it (the
 * core writes them to stdout otherwise, which is `faheem acp`'s protocol channel: a warning there
 * broke an editor's session). With a metrics port, one Prometheus endpoint for Temporal's worker
 * metrics and ours (src/telemetry/metrics.ts).
 */
export function runtimeOptions(level: LogLevel, metricsPort: number | undefined, metricsHost: string): RuntimeOptions {
  return {
    logger: new WorkerLogger(level),
    telemetryOptions: {
      logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) },
      ...(metricsPort !== undefined
        ? { metrics: { prometheus: { bindAddress: `${bindHost(metricsHost)}:${metricsPort}`, useSecondsForDurations: true } } }
        : {}),
    },
  };
}

let runtimeInstalled = false;
function installRuntime(level: LogLevel, metricsPort: number | undefined, metricsHost: string): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install(runtimeOptions(level, metricsPort, metricsHost));
  } catch {
    // Already installed by the embedding program: keep its logger (and its metrics, if any).
  }
}

/** An address as a socket address's host part (an IPv6 literal in brackets). */
function bindHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** What `createWorker` takes. */
export interface CreateWorkerOptions {
  /** Your tools (made with `defineTool`), run on this host's tool queue; the built-ins are always there. */
  tools?: readonly AnyTool[];
  /** Environment to read TEMPORAL_*, LLM_*, FAHEEM_* and secrets from (default: process.env). */
  env?: ChildEnv;
  /**
   * Run terminal commands, `ctx.exec`, hooks and MCP stdio servers under this sandbox (`{ kind: 'bwrap',
   * network: 'internet' | 'none' | 'host' }`, which must work here: otherwise createWorker fails with the
   * reason), or a request as parseSandbox makes it; `false` runs them unsandboxed. Default:
   * FAHEEM_SANDBOX / FAHEEM_SANDBOX_NETWORK, and unset, bwrap with the internet network where it works
   * (where it does not, the worker warns and `sandboxWarning` says why).
   */
  sandbox?: SandboxOptions | SandboxRequest | false;
  /**
   * TypeScript hooks by event (`{ PreToolUse: (event) => ({ decision: 'deny', reason }) }`), run on
   * this host after each conversation's command hooks for the same event; see WorkerHooks.
   */
  hooks?: WorkerHooks;
  /**
   * Run under Temporal Worker Versioning as this version of a Worker Deployment: each conversation
   * stays on the version it started on, and moves to a new current version by continuing as new
   * (`faheem deploy`). Default: FAHEEM_DEPLOYMENT / FAHEEM_BUILD_ID; neither: unversioned.
   */
  deployment?: WorkerDeploymentVersion;
  /** Serve Prometheus text at `/metrics` on this port (default: FAHEEM_METRICS_PORT; unset: none). */
  metricsPort?: number;
  /** The address metrics listen on (default: FAHEEM_METRICS_HOST, else 127.0.0.1). */
  metricsHost?: string;
  /**
   * Host workspaces of this pool (default: FAHEEM_POOL): take pooled conversations from the pool's
   * queue, materialise their workspaces under FAHEEM_WORKSPACES_DIR, ship each checkpoint to
   * FAHEEM_OBJECT_STORE (required).
   */
  pool?: string;
  /**
   * At most this many model calls (and condensations) at once on this worker (default:
   * FAHEEM_MAX_MODEL_CALLS, else the Temporal SDK's). The rest wait on the task queue, where the
   * server dispatches them by fairness key: each tenant's conversations get their share.
   */
  maxModelCalls?: number;
}

/**
 * A worker for the conversation workflows and model calls (task queue `faheem`) and for this host's
 * tools (`faheem-tools@<host>`): built-ins, `options.tools`, and the MCP servers conversations ask for.
 *
 * ```ts
 * const worker = await createWorker({ tools: [addNumbers] });
 * await worker.run();   // until shutdown()
 * ```
 */
export async function createWorker(options: CreateWorkerOptions = {}): Promise<WorkerHandle> {
  // The worker's edge: its environment, read once. Settings go to the modules below; the whole
  // environment goes only where a child process's is built from it (through the allow-list).
  const given: ChildEnv = options.env ?? process.env;
  const settings = readSettings(given, 'worker'); // a bad value stops here, naming the variable
  // The areas the worker's modules take, each parsed once here.
  const config = workerSettings(settings);
  const temporal = connectionSettings(settings);
  const telemetry = telemetrySettings(settings);
  const checkpoints = checkpointSettings(settings);
  const storage = storeSettings(settings);
  setUpSpawner({ helper: config.spawnHelper, env: given });
  const metricsPort = options.metricsPort ?? config.metricsPort;
  const metricsHost = options.metricsHost ?? config.metricsHost;
  installRuntime(config.logLevel, metricsPort, metricsHost);
  const deployment = options.deployment ?? config.deployment;
  const maxModelCalls = checkMaxModelCalls(options.maxModelCalls) ?? config.maxModelCalls;
  // Asked for but unusable: fail now, not on the first command; the default falls back and says so.
  const { sandbox, warning: sandboxWarning } = await resolveSandbox(sandboxRequest(options.sandbox, config.sandbox), given);
  if (sandboxWarning) console.warn(`faheem worker: ${sandboxWarning}`);
  await ensureSearchAttributes(temporal);
  const { connection, namespace } = await connectWorker(temporal);
  // The model area from the whole environment: every secret value in it is masked in what model calls report.
  const model = await announceModel(given, modelSettings(given, secretValues(given)));
  const env = model.env;
  // A worker that fails to start leaves no scripted model's server listening behind it.
  const orClose = <T>(work: Promise<T>): Promise<T> =>
    work.catch(async (err: unknown) => {
      await model.scripted?.close().catch(() => undefined);
      throw err;
    });
  const pauseChannel = await pauseChannelOfServer(connection, namespace);
  const cadence = heartbeatCadence(pauseChannel);
  // OTLP traces when an endpoint is configured: Temporal's spans and ours; nothing loaded otherwise.
  const tracing = await startTracing(telemetry);
  const workflowCode = withTracing(tracing, deploySettings(settings));
  const mcp = new McpManager({ env, ...(sandbox ? { sandbox } : {}) });
  const pool = poolSettings(storage, options.pool ?? storage.pool.name);
  const store = pool && storeGuarantee(storage);
  if (store && !store.bound) console.warn(`faheem worker: ${store.detail}`);
  // Live lines and change notices go to the conversations' streams while somebody follows them:
  // one list of followed conversations serves both.
  const live = new LivePublisher({ taskQueue: temporal.taskQueue, secrets: secretValues(env), enabled: config.live });
  const changes = new ChangeNotifier(new Client({ connection, namespace, dataConverter: dataConverter(storage) }), live.followed);
  const activities = createActivities({
    ...(pool ? { pool } : {}),
    live,
    env,
    store: storage,
    config,
    connection: temporal,
    telemetry,
    checkpoints,
    models: model.models,
    tools: options.tools ?? [],
    mcp,
    ...(sandbox ? { sandbox } : {}),
    ...(sandboxWarning ? { sandboxWarning } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    metrics: createMetrics(Runtime.instance().metricMeter),
    heartbeatEveryMs: cadence.beatEveryMs,
  });
  const mainQueue = temporal.taskQueue;
  const toolsQueue = temporal.toolTaskQueue;
  const parts: WorkerParts = {
    connection,
    namespace,
    identity: workerIdentity(model.name),
    storage,
    versioning: deployment ? deploymentOptions(deployment) : {},
    cadence,
    activities,
  };
  const main = await orClose(
    Worker.create(mainWorkerOptions(parts, mainQueue, workflowCode, changes.sinks(), config.workflowThreads, maxModelCalls)),
  );
  const tools = await orClose(Worker.create(toolsWorkerOptions(parts, toolsQueue, tracing)));
  // A pool's hosts take its conversations' claims from the pool's queue (one host at a time each).
  const claims = pool ? await orClose(Worker.create(claimsWorkerOptions(parts, poolQueue(mainQueue, pool.pool)))) : undefined;
  return {
    taskQueue: mainQueue,
    toolTaskQueue: toolsQueue,
    pool: pool ? { pool: pool.pool, hostId: pool.hostId, workspacesDir: pool.workspacesDir } : undefined,
    sandbox: sandbox && { kind: sandbox.kind, network: sandbox.network },
    sandboxWarning,
    deployment,
    metricsPort,
    metricsHost,
    pauseChannel,
    model: model.name,
    maxModelCalls,
    ...lifecycle([main, tools, ...(claims ? [claims] : [])], async () => {
      changes.stop();
      stopKeptNetworks(sandbox);
      await mcp.closeAll().catch(() => undefined);
      await model.scripted?.close().catch(() => undefined);
      await connection.close();
      await shutdownTracing().catch(() => undefined);
    }),
  };
}

/** createWorker's `maxModelCalls`, checked: a positive whole number (an InvalidRequestError otherwise). */
function checkMaxModelCalls(n: number | undefined): number | undefined {
  if (n === undefined) return undefined;
  if (!Number.isInteger(n) || n < 1) throw new InvalidRequestError(`maxModelCalls: a positive whole number, not ${String(n)}`);
  return n;
}

/** Runs the workers until they are shut down, then lets go of what they held (`release`). */
function lifecycle(workers: Worker[], release: () => Promise<void>): Pick<WorkerHandle, 'run' | 'shutdown'> {
  return {
    run: async () => {
      try {
        await Promise.all(workers.map((w) => w.run()));
      } finally {
        await release();
      }
    },
    shutdown: () => {
      for (const w of workers) w.shutdown();
    },
  };
}

/** The sandbox asked for: createWorker's option (`false`: none; a request as is; options: chosen), else the environment's. */
function sandboxRequest(option: CreateWorkerOptions['sandbox'], fromEnv: SandboxRequest): SandboxRequest {
  if (option === false) return { kind: 'none', network: 'internet', networkChosen: false };
  if (option === undefined) return fromEnv;
  return 'networkChosen' in option ? option : { kind: 'bwrap', network: option.network, networkChosen: true };
}

/**
 * The worker's model, said at start (loudly when there is none, or it is the scripted stand-in) and
 * put in the worker's identity, where `faheem doctor` reads it; scripted/demo starts its server here.
 */
async function announceModel(env: ChildEnv, models: ModelSettings): Promise<WorkerModel> {
  const model = await workerModel(env, models);
  (model.warn ? console.warn : console.error)(`faheem worker: ${model.announce}`);
  return model;
}

/**
 * How a pause reaches calls in flight. Worker commands carry it; without them heartbeats must, ten a
 * second. Not knowing (no answer within 5 s, no permission) is taken as not having them, and said.
 */
function pauseChannelOfServer(connection: NativeConnection, namespace: string): Promise<PauseChannel> {
  return connection
    .withDeadline(Date.now() + 5_000, () => connection.workflowService.describeNamespace({ namespace }))
    .then(pauseChannelOf)
    .catch((err: unknown): PauseChannel => {
      console.warn(
        `faheem worker: could not read namespace ${namespace}'s capabilities (${(err as Error).message}); pauses go through heartbeats`,
      );
      return 'heartbeats';
    });
}

/** The workflow code to run: the bundle, with Temporal's tracing interceptors and sinks when traces are on. */
function withTracing(tracing: Tracing | undefined, deploy: DeploySettings) {
  if (!tracing) return workflowSourceOf(deploy);
  const source = tracedWorkflowSource(deploy);
  return {
    ...source,
    interceptors: { ...('interceptors' in source ? (source.interceptors ?? {}) : {}), ...tracing.workerInterceptors },
    sinks: tracing.sinks,
  };
}

type WorkflowCode = ReturnType<typeof withTracing>;

/** What the worker's three Temporal workers share. */
interface WorkerParts {
  connection: NativeConnection;
  namespace: string;
  identity: string;
  /** What its data converter reads (the encryption keys, the payload store). */
  storage: StoreSettings;
  versioning: Pick<WorkerOptions, 'workerDeploymentOptions'>;
  cadence: ReturnType<typeof heartbeatCadence>;
  activities: ReturnType<typeof createActivities>;
}

/** The worker of conversations and model calls (the shared task queue). */
function mainWorkerOptions(
  parts: WorkerParts,
  taskQueue: string,
  workflowCode: WorkflowCode,
  changeSinks: ReturnType<ChangeNotifier['sinks']>,
  workflowThreads: number | undefined,
  maxModelCalls: number | undefined,
): WorkerOptions {
  const { activities, cadence } = parts;
  return {
    connection: parts.connection,
    namespace: parts.namespace,
    taskQueue,
    identity: parts.identity,
    ...workflowCode,
    // The workflow tells the worker of each change (a sink: no history), for followers.
    sinks: { ...('sinks' in workflowCode ? workflowCode.sinks : {}), ...changeSinks },
    dataConverter: dataConverter(parts.storage),
    activities: { callModel: activities.callModel, condense: activities.condense },
    // Its only activities are model calls: their slots are the cap. Calls beyond it wait on the
    // task queue, which the server dispatches by fairness key (the tenant) when fairness is on.
    ...(maxModelCalls !== undefined ? { maxConcurrentActivityTaskExecutions: maxModelCalls } : {}),
    // How often heartbeats reach the server (src/client/pause-channel.ts): twice a second when worker
    // commands carry a pause, every 100 ms when only a heartbeat's answer can.
    maxHeartbeatThrottleInterval: cadence.modelThrottleMs,
    defaultHeartbeatThrottleInterval: cadence.modelThrottleMs,
    // If this worker dies, its conversations' next tasks move to another worker after 2 s, not 10 s.
    stickyQueueScheduleToStartTimeout: '2 seconds',
    // Workflow tasks run in worker threads; the SDK's default of one made a single core the ceiling of
    // many conversations (docs/behaviour.md, worker tuning: 50 at once, 25 → 13 s with two).
    workflowThreadPoolSize: workflowThreads ?? Math.min(2, availableParallelism()),
    shutdownGraceTime: '2 seconds',
    ...parts.versioning,
  };
}

/** The worker of this host's tool queue: tools, hooks, checkpoints, a pooled workspace's release. */
function toolsWorkerOptions(parts: WorkerParts, taskQueue: string, tracing: Tracing | undefined): WorkerOptions {
  const { activities, cadence } = parts;
  return {
    connection: parts.connection,
    namespace: parts.namespace,
    taskQueue,
    identity: parts.identity,
    dataConverter: dataConverter(parts.storage),
    ...(tracing ? { interceptors: tracing.workerInterceptors } : {}),
    activities: {
      runTool: activities.runTool,
      runHooks: activities.runHooks,
      prepareTools: activities.prepareTools,
      releaseTools: activities.releaseTools,
      // Checkpoints live in the workspace host's shadow repository: they run where the workspace is.
      checkpointWorkspace: activities.checkpointWorkspace,
      restoreWorkspace: activities.restoreWorkspace,
      forkWorkspace: activities.forkWorkspace,
      listCheckpoints: activities.listCheckpoints,
      // A pooled conversation that hibernates gives its folder back on the host that holds it.
      releasePoolHost: activities.releasePoolHost,
      releasePoolHostMidStep: activities.releasePoolHostMidStep,
      // Conversations that scheduled these before tools were open still get an answer.
      runTerminal: activities.runTerminal,
      editFile: activities.editFile,
    },
    maxHeartbeatThrottleInterval: cadence.toolsThrottleMs,
    defaultHeartbeatThrottleInterval: cadence.toolsThrottleMs,
    shutdownGraceTime: '2 seconds',
    // The tool queue is part of the same version: a pinned conversation's tools run on its own build.
    ...parts.versioning,
  };
}

/** The worker of a pool's claims (the pool's queue): one host at a time takes each conversation. */
function claimsWorkerOptions(parts: WorkerParts, taskQueue: string): WorkerOptions {
  return {
    connection: parts.connection,
    namespace: parts.namespace,
    taskQueue,
    identity: parts.identity,
    dataConverter: dataConverter(parts.storage),
    activities: { claimPoolHost: parts.activities.claimPoolHost },
    shutdownGraceTime: '2 seconds',
    ...parts.versioning,
  };
}

/**
 * Worker options for a version of a deployment: conversations are pinned to the version they
 * started on (they move only by continuing as new, which the workflow does when the deployment's
 * current version changes).
 */
export function deploymentOptions(version: WorkerDeploymentVersion): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return { workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' } };
}

/**
 * Registers the search attributes the workflow sets. The dev server started by `faheem server`
 * has them already; on a cluster this needs operator rights, so failure is only a warning.
 */
export async function ensureSearchAttributes(settings?: Settings | ConnectionSettings): Promise<void> {
  // An unreachable server is an error (ServerUnreachableError names the address), not a warning.
  const { connection, namespace } = await connectConnection(settings);
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !(name in (existing.customAttributes ?? {})));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([name]) => [name, 2 /* KEYWORD */])),
    });
  } catch (err) {
    console.warn(
      `faheem worker: could not register search attributes ${Object.keys(SEARCH_ATTRIBUTES).join(', ')} (${(err as Error).message}). ` +
        'Register them with `temporal operator search-attribute create --name ConversationStatus --type Keyword` (and ConversationModel).',
    );
  } finally {
    await connection.close();
  }
}
