// The worker area of the settings: the worker's FAHEEM_* settings (its home, log level, threads,
// caches, the sandbox asked for, live lines, its deployment version, metrics and model-call cap),
// read once at the edge (createWorker) into one typed object and passed in. Every value is checked
// by its entry of the environment table (src/environment.ts) when readSettings reads it: a bad one
// stops the worker with an error that names the variable.
import { setting, type Settings, type WorkerLogLevel } from '../environment.js';
import { InvalidRequestError } from '../core/errors.js';
import { sandboxFromEnv, type SandboxRequest } from '../sandbox/sandbox.js';
import { faheemHome } from './home.js';

export type { WorkerLogLevel };

/** The worker's settings from its environment. */
export interface WorkerConfig {
  /** FAHEEM_HOME: undo history, full outputs, start log (default ~/.faheem). */
  home: string;
  /** FAHEEM_LOG_LEVEL (default WARN). */
  logLevel: WorkerLogLevel;
  /** FAHEEM_WORKFLOW_THREADS: threads for workflow tasks (default two, or one on a one-core machine). */
  workflowThreads: number | undefined;
  /** FAHEEM_TERMINAL_SOFT_TIMEOUT_S, in ms: a command with no new output this long is returned as still running (default 30 s). */
  terminalSoftTimeoutMs: number;
  /** FAHEEM_TRANSCRIPT_CACHE_MB, in bytes: the model-call workers' cache of transcripts (default 512 MB). */
  transcriptCacheBytes: number;
  /** FAHEEM_SPAWN_HELPER: start commands through the spawn helper process (`0` turns it off). */
  spawnHelper: boolean;
  /** FAHEEM_SANDBOX / FAHEEM_SANDBOX_NETWORK: the sandbox asked for (unset: bwrap where it works, network internet). */
  sandbox: SandboxRequest;
  /** FAHEEM_LIVE: publish live lines (the reply as it streams, command output as it comes) to followers (`0` turns it off). */
  live: boolean;
  /**
   * FAHEEM_DEPLOYMENT / FAHEEM_BUILD_ID: the Worker Deployment version this worker serves (Temporal
   * Worker Versioning); undefined: an unversioned worker, as before.
   */
  deployment: WorkerDeploymentVersion | undefined;
  /** FAHEEM_METRICS_PORT: serve Prometheus text at `http://<metricsHost>:<port>/metrics` (undefined: no metrics). */
  metricsPort: number | undefined;
  /** FAHEEM_METRICS_HOST: the address metrics listen on (default 127.0.0.1: this machine only). */
  metricsHost: string;
  /**
   * FAHEEM_MAX_MODEL_CALLS: the most model calls (callModel and condense activities) this worker runs
   * at once; undefined: the Temporal SDK's default. Calls beyond it wait on the task queue, where
   * Temporal dispatches them by fairness key (the tenant).
   */
  maxModelCalls: number | undefined;
}

/** A Worker Deployment version: the deployment's name and this build's id. */
export interface WorkerDeploymentVersion {
  /** The deployment (one per application, e.g. `faheem`). */
  deploymentName: string;
  /** This build (e.g. a git commit or a release number). */
  buildId: string;
}

/** The defaults of the settings above that are plain numbers. */
export const CONFIG_DEFAULTS = {
  terminalSoftTimeoutS: 30,
  transcriptCacheMb: 512,
} as const;

/**
 * The worker's settings from `settings` (read by readSettings for the worker, so each value is
 * checked), defaults applied. Throws an InvalidRequestError when only one of FAHEEM_DEPLOYMENT and
 * FAHEEM_BUILD_ID is set, or a SandboxError for the sandbox variables.
 */
export function workerSettings(settings: Settings): WorkerConfig {
  return {
    home: faheemHome(settings),
    logLevel: setting(settings, 'FAHEEM_LOG_LEVEL') ?? 'WARN',
    workflowThreads: setting(settings, 'FAHEEM_WORKFLOW_THREADS'),
    terminalSoftTimeoutMs: (setting(settings, 'FAHEEM_TERMINAL_SOFT_TIMEOUT_S') ?? CONFIG_DEFAULTS.terminalSoftTimeoutS) * 1000,
    transcriptCacheBytes: (setting(settings, 'FAHEEM_TRANSCRIPT_CACHE_MB') ?? CONFIG_DEFAULTS.transcriptCacheMb) * 1024 * 1024,
    spawnHelper: setting(settings, 'FAHEEM_SPAWN_HELPER') !== '0',
    sandbox: sandboxFromEnv(settings),
    live: setting(settings, 'FAHEEM_LIVE') !== '0',
    deployment: deploymentFrom(setting(settings, 'FAHEEM_DEPLOYMENT'), setting(settings, 'FAHEEM_BUILD_ID')),
    metricsPort: setting(settings, 'FAHEEM_METRICS_PORT'),
    metricsHost: setting(settings, 'FAHEEM_METRICS_HOST') ?? '127.0.0.1',
    maxModelCalls: setting(settings, 'FAHEEM_MAX_MODEL_CALLS'),
  };
}

/** Both halves of a version, or neither; one without the other is a mistake worth naming. */
function deploymentFrom(deploymentName: string | undefined, buildId: string | undefined): WorkerDeploymentVersion | undefined {
  if (deploymentName === undefined && buildId === undefined) return undefined;
  if (deploymentName === undefined)
    throw new InvalidRequestError('FAHEEM_BUILD_ID is set but FAHEEM_DEPLOYMENT is not: give both (or --deployment with --build-id)');
  if (buildId === undefined)
    throw new InvalidRequestError('FAHEEM_DEPLOYMENT is set but FAHEEM_BUILD_ID is not: give both (or --deployment with --build-id)');
  return { deploymentName, buildId };
}
