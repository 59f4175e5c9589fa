// The worker's FAHEEM_* settings: parsed by the worker area's parser (src/settings/worker.ts) from
// the settings createWorker reads once at its edge. This keeps readWorkerConfig, which reads them
// from an environment.
import { readSettings, type RawEnv } from '../environment.js';
import { workerSettings, type WorkerConfig } from '../settings/worker.js';

export { CONFIG_DEFAULTS, type WorkerConfig, type WorkerDeploymentVersion, type WorkerLogLevel } from '../settings/worker.js';

/**
 * The worker's settings from `env` (the process's environment, or Settings read from it). Throws an
 * InvalidRequestError naming the variable when a value cannot be used (e.g.
 * `FAHEEM_WORKFLOW_THREADS=two`), or a SandboxError for the sandbox variables.
 */
export function readWorkerConfig(env: RawEnv): WorkerConfig {
  return workerSettings(readSettings(env, 'worker'));
}
