// The worker's FAHEEM_* settings, read once at the edge (createWorker, createActivities) into one
// typed object and passed in; nothing reads them at import time. Every value is checked (zod): a
// bad one stops the worker with an error that names the variable. Names and defaults are the ones
// the README lists.
import { isIP } from 'node:net';
import { z } from 'zod';
import { InvalidRequestError } from './errors.js';
import { faheemHome } from './home.js';
import { sandboxFromEnv, type SandboxRequest } from './tools/sandbox.js';

/** A log level of the Temporal worker runtime. */
export type WorkerLogLevel = 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

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

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
const unset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const positiveNumber = z.preprocess(unset, z.coerce.number({ error: 'must be a number' }).positive('must be more than 0').optional());
const positiveInt = z.preprocess(
  unset,
  z.coerce.number({ error: 'must be a whole number' }).int('must be a whole number').min(1, 'must be 1 or more').optional(),
);

/** A deployment name or build id: Temporal joins them with a dot, so neither may hold one. */
const versionPart = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_-][A-Za-z0-9_:+-]{0,254}$/, 'must be letters, digits, -, _, : or + (no dots, no spaces)');

const WorkerEnv = z.object({
  FAHEEM_LOG_LEVEL: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() !== '' ? v.trim().toUpperCase() : undefined),
    z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).optional(),
  ),
  FAHEEM_WORKFLOW_THREADS: positiveInt,
  FAHEEM_TERMINAL_SOFT_TIMEOUT_S: positiveNumber,
  FAHEEM_TRANSCRIPT_CACHE_MB: positiveNumber,
  FAHEEM_SPAWN_HELPER: z.preprocess(unset, z.enum(['0', '1'], { error: 'must be 0 (off) or 1 (on)' }).optional()),
  FAHEEM_LIVE: z.preprocess(unset, z.enum(['0', '1'], { error: 'must be 0 (off) or 1 (on)' }).optional()),
  FAHEEM_DEPLOYMENT: z.preprocess(unset, versionPart.optional()),
  FAHEEM_BUILD_ID: z.preprocess(unset, versionPart.optional()),
  FAHEEM_METRICS_PORT: z.preprocess(
    unset,
    z.coerce
      .number({ error: 'must be a port number' })
      .int('must be a port number')
      .min(1, 'must be a port number')
      .max(65535, 'must be a port number')
      .optional(),
  ),
  FAHEEM_METRICS_HOST: z.preprocess(
    unset,
    z
      .string()
      .trim()
      .transform((v) => v.replace(/^\[(.*)\]$/, '$1'))
      .refine((v) => isIP(v) !== 0, 'must be an IP address (e.g. 127.0.0.1, or 0.0.0.0 for every interface)')
      .optional(),
  ),
});

/**
 * The worker's settings from `env`. Throws an InvalidRequestError naming the variable when a value
 * cannot be used (e.g. `FAHEEM_WORKFLOW_THREADS=two`), or a SandboxError for the sandbox variables.
 */
export function readWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const parsed = WorkerEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'a FAHEEM_ variable');
    throw new InvalidRequestError(`${name}=${JSON.stringify(env[name] ?? '')} ${issue?.message ?? 'is not valid'}`);
  }
  const e = parsed.data;
  return {
    home: faheemHome(env),
    logLevel: e.FAHEEM_LOG_LEVEL ?? 'WARN',
    workflowThreads: e.FAHEEM_WORKFLOW_THREADS,
    terminalSoftTimeoutMs: (e.FAHEEM_TERMINAL_SOFT_TIMEOUT_S ?? CONFIG_DEFAULTS.terminalSoftTimeoutS) * 1000,
    transcriptCacheBytes: (e.FAHEEM_TRANSCRIPT_CACHE_MB ?? CONFIG_DEFAULTS.transcriptCacheMb) * 1024 * 1024,
    spawnHelper: e.FAHEEM_SPAWN_HELPER !== '0',
    sandbox: sandboxFromEnv(env),
    live: e.FAHEEM_LIVE !== '0',
    deployment: deploymentFrom(e.FAHEEM_DEPLOYMENT, e.FAHEEM_BUILD_ID),
    metricsPort: e.FAHEEM_METRICS_PORT,
    metricsHost: e.FAHEEM_METRICS_HOST ?? '127.0.0.1',
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
