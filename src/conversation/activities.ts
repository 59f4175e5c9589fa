// All activities, built from the worker's environment (where the secrets are) and its tools.
import path from 'node:path';
import { instrumentCallModel, instrumentRunTool } from '../telemetry/instrument.js';
import { NO_METRICS, type FaheemMetrics } from '../telemetry/metrics.js';
import { TranscriptCache } from './read-events.js';
import { SetupCache } from './setup-cache.js';
import { readWorkerConfig, type WorkerConfig } from '../worker/config.js';
import { ModelClients } from '../models/client.js';
import { McpManager } from '../mcp/manager.js';
import { namedSecrets, secretValues } from '../security/env-policy.js';
import { ToolRegistry } from '../tools/registry.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { CheckpointStore } from '../time-travel/shadow-repo.js';
import { checkWorkerHooks, workerHookEvents, type WorkerHooks } from '../hooks/run-hook.js';
import { createCallModel } from '../models/call-model.js';
import { ImageCache } from '../images/prompt-images.js';
import { readImage } from '../images/store.js';
import { HEARTBEAT_EVERY_MS, withHeartbeat } from './heartbeat.js';
import { createCheckpointWorkspace } from '../time-travel/checkpoint-workspace.js';
import { createCondense } from './condense.js';
import { createForkWorkspace } from '../time-travel/fork-workspace.js';
import { createListCheckpoints } from '../time-travel/list-checkpoints.js';
import { createPrepareTools } from './prepare-tools.js';
import { createReleaseTools, stopConversationProcesses } from './release-tools.js';
import { createRestoreWorkspace } from '../time-travel/restore-workspace.js';
import { createRunHooks } from '../hooks/run-hooks.js';
import { createLegacyToolActivities } from './legacy-tools.js';
import { createRunTool } from '../tools/run-tool.js';
import { StartLog } from './start-log.js';
import { LivePublisher } from '../live/publisher.js';
import {
  claimPoolHost,
  MidStepReleaseInput,
  releasePoolHost,
  releasePoolHostMidStep,
  shipAfterSnapshot,
  type ClaimInput,
  type ClaimResult,
  type MidStepRelease,
  type PoolSettings,
} from '../pool/pool.js';
import { asActivity, objectStoreFailure, parseInput } from '../time-travel/activity-support.js';
import { ObjectStoreError } from '../storage/object-store.js';
import { FAILURE, failure } from '../core/failure-types.js';
import type { ChildEnv } from '../environment.js';
import { connectionSettings, type ConnectionSettings } from '../settings/connection.js';
import { telemetrySettings, type TelemetrySettings } from '../settings/telemetry.js';
import { checkpointSettings, type CheckpointSettings } from '../settings/checkpoints.js';
import { modelSettings, type ModelSettings } from '../settings/models.js';
import { storeSettings, type StoreSettings } from '../settings/store.js';

/** What the activities are made from. */
export interface ActivitiesOptions {
  /** The worker's environment, read once by createWorker: settings, and what commands, hooks, MCP servers and git start from (through the allow-list). */
  env: ChildEnv;
  /** The worker's FAHEEM_* settings (default: read from `env`). */
  config?: WorkerConfig;
  /** Tools made with defineTool, besides the built-ins. */
  tools?: readonly unknown[];
  /** Where MCP servers run (one process per conversation and server). */
  mcp?: McpManager;
  /** Confine terminal commands and ctx.exec (default: none; createWorker reads FAHEEM_SANDBOX). */
  sandbox?: Sandbox;
  /** Why commands here are less confined than the default (createWorker's fallback): recorded in each conversation's setup. */
  sandboxWarning?: string;
  /** TypeScript hooks, run by runHooks after a conversation's command hooks. */
  hooks?: WorkerHooks;
  /** Where model and tool calls are counted (createWorker: the runtime's Prometheus meter). */
  metrics?: FaheemMetrics;
  /** How often model and tool calls heartbeat (createWorker: from its server's pause channel; default 50 ms). */
  heartbeatEveryMs?: number;
  /** The pool this worker hosts (createWorker: --pool / FAHEEM_POOL): its checkpoints are shipped, it takes claims. */
  pool?: PoolSettings;
  /** Where live lines go (createWorker shares it with its change notices; default: one of their own). */
  live?: LivePublisher;
  /** The task queues (createWorker's connection settings; default: read from `env`). */
  connection?: ConnectionSettings;
  /** Whether spans carry message content (createWorker's telemetry settings; default: read from `env`). */
  telemetry?: TelemetrySettings;
  /** How checkpoints are taken (createWorker's checkpoint settings; default: read from `env`). */
  checkpoints?: CheckpointSettings;
  /** The model settings (createWorker's, for its model; default: read from `env`). */
  models?: ModelSettings;
  /** The object store, its payload keys and this host's pool (createWorker's store settings; default: read from `env`). */
  store?: StoreSettings;
}

/** Every activity of the conversation workflow, made for one worker. */
export function createActivities(options: ActivitiesOptions) {
  const env = options.env;
  const config = options.config ?? readWorkerConfig(env);
  const connection = options.connection ?? connectionSettings(env);
  const home = config.home;
  const models = new ModelClients(options.models ?? modelSettings(env, secretValues(env)));
  const store = options.store ?? storeSettings(env);
  const registry = new ToolRegistry(options.tools ?? [], {
    env,
    store,
    softTimeoutMs: config.terminalSoftTimeoutMs,
    spawnHelper: config.spawnHelper,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  const mcp = options.mcp ?? new McpManager({ env });
  // What a conversation started here (its command left running, MCP servers, kept network): stopped together.
  const processes = { mcp, sandbox: options.sandbox };
  const stopProcesses = (conversationId: unknown) => stopConversationProcesses(String(conversationId), processes);
  const secrets = secretValues(env);
  const hooks = checkWorkerHooks(options.hooks);
  // Model calls and condensation read the same transcripts: one cache serves both.
  const transcripts = new TranscriptCache(config.transcriptCacheBytes);
  const starts = new StartLog(path.join(home, 'started'));
  const pool = options.pool;
  const checkpoints = CheckpointStore.fromSettings(
    options.checkpoints ?? checkpointSettings(env),
    env,
    pool ? { afterSnapshot: shipAfterSnapshot(pool, env) } : {},
  );
  const live = options.live ?? new LivePublisher({ taskQueue: connection.taskQueue, secrets, enabled: config.live });
  const beatEveryMs = options.heartbeatEveryMs ?? HEARTBEAT_EVERY_MS;
  const tools = createRunTool({
    heartbeatEveryMs: beatEveryMs,
    live,
    checkpoints,
    registry,
    starts,
    mcp,
    secretValues: secrets,
    namedSecrets: namedSecrets(env),
    env,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  // Each model and tool call: a GenAI span (a no-op without a tracer provider) and our counters.
  const telemetry = options.telemetry ?? telemetrySettings(env);
  const instrument = { telemetry, workerModel: env.LLM_MODEL, metrics: options.metrics ?? NO_METRICS };
  return {
    callModel: instrumentCallModel(
      createCallModel(models, transcripts, new SetupCache(), registry, live, beatEveryMs, {
        read: (ref) => readImage(store, ref),
        cache: new ImageCache(),
        onMissing: (ref, err) => console.warn(`faheem worker: image ${ref.sha256} not read: ${(err as Error)?.message ?? String(err)}`),
      }),
      instrument,
    ),
    condense: createCondense(models, transcripts, beatEveryMs),
    prepareTools: createPrepareTools({
      registry,
      mcp,
      secretValues: secrets,
      home,
      hookEvents: workerHookEvents(hooks),
      checkpoints,
      ...(env.LLM_MODEL?.trim() ? { workerModel: env.LLM_MODEL.trim() } : {}),
      ...(options.sandboxWarning ? { sandboxWarning: options.sandboxWarning } : {}),
    }),
    releaseTools: createReleaseTools(processes),
    runTool: instrumentRunTool(tools.runTool, instrument),
    runHooks: createRunHooks({
      env,
      secretValues: secrets,
      ...(hooks ? { workerHooks: hooks } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    }),
    // Replay-era activities (see legacy.ts).
    ...createLegacyToolActivities(tools.runTool),
    checkpointWorkspace: createCheckpointWorkspace(checkpoints),
    /** On a pool's queue: takes a pooled conversation on this host (src/pool/pool.ts). */
    async claimPoolHost(input: ClaimInput): Promise<ClaimResult> {
      if (!pool) throw failure(FAILURE.ObjectStoreConfig, 'this worker hosts no pool (faheem worker --pool NAME)');
      // What an earlier claim here left running (a command, MCP servers) works in the folder the claim
      // replaces: stopped (the next call starts the servers anew).
      await stopProcesses(input.conversationId);
      try {
        return await claimPoolHost(pool, checkpoints, connection.toolTaskQueue, input, env);
      } catch (err) {
        if (err instanceof ObjectStoreError) throw objectStoreFailure(err);
        throw err;
      }
    },
    /**
     * On the host's queue: a hibernating pooled conversation gives back its folder here, and so does a
     * host it has left as lost (once it polls again). What the conversation runs here stops first.
     */
    async releasePoolHost(input: { conversationId: string; epoch: number }): Promise<boolean> {
      if (!pool) return false;
      const id = String(input.conversationId);
      // Its processes work in the folder that goes (the next host starts its own MCP servers); a claim of
      // a later epoch here is another's, and keeps them.
      return releasePoolHost(pool, checkpoints, id, Number(input.epoch), () => stopProcesses(id));
    },
    /**
     * On the host's queue: a pooled conversation hibernating in the middle of a step (a wait, an
     * approval) ships its workspace as it is now, then gives back its folder here.
     */
    async releasePoolHostMidStep(input: MidStepReleaseInput): Promise<MidStepRelease> {
      if (!pool) return { released: false };
      const checked = parseInput(MidStepReleaseInput, input, 'releasePoolHostMidStep');
      // Its processes (MCP servers, kept network) work in the folder that goes: stopped once the workspace is shipped.
      const stop = () => stopProcesses(checked.conversationId);
      return withHeartbeat(() => asActivity(() => releasePoolHostMidStep(pool, checkpoints, checked, stop)));
    },
    restoreWorkspace: createRestoreWorkspace(checkpoints),
    forkWorkspace: createForkWorkspace(checkpoints),
    listCheckpoints: createListCheckpoints(checkpoints),
  };
}

/** The activities by name, as the worker registers them. */
export type Activities = ReturnType<typeof createActivities>;
