// The worker's own model (LLM_MODEL), said at its start, and published where clients can read it:
// the worker's identity, which `describeTaskQueue` shows (`faheem doctor` reads it; the key never).
// `LLM_MODEL=scripted/demo` is the offline scripted model the demo uses, served by the worker itself.
import os from 'node:os';
import type { ScriptedModel } from '../testing/scripted-model.js';
import { ModelConfigError, resolveModel } from './provider.js';
import { splitChain } from './workflow/model-chain.js';
import type { ChildEnv } from '../environment.js';
import { modelSettingsAt, type ModelSettings } from '../settings/models.js';

/** The offline scripted model: a stand-in that replays the demo's fixed script (no network, no key). */
export const SCRIPTED_DEMO = 'scripted/demo';

/** The worker's model: its name, the line its start prints, the settings its calls take. */
export interface WorkerModel {
  /** LLM_MODEL, or undefined when none is set. */
  name: string | undefined;
  /** What the worker says of it at start (stderr); loud for the scripted model and for none. */
  announce: string;
  /** Whether the announcement is a warning (no model, the scripted stand-in, a setting that does not resolve). */
  warn: boolean;
  /** The worker's environment, for what it starts (LLM_BASE_URL set to the scripted model's server for scripted/demo). */
  env: ChildEnv;
  /** The model settings model calls take (the scripted model's server, reached with no general key, for scripted/demo). */
  models: ModelSettings;
  /** The scripted model's server, for scripted/demo (closed with the worker). */
  scripted?: ScriptedModel;
}

/**
 * Reads the worker's model from its model settings and, for scripted/demo, starts the scripted
 * model's server on 127.0.0.1 (the demo's countdown script, replies 400 ms apart). `env` is the
 * worker's whole environment, returned with the same change for the scripted model.
 */
export async function workerModel(env: ChildEnv, models: ModelSettings): Promise<WorkerModel> {
  const name = models.model;
  if (name === SCRIPTED_DEMO) {
    // Loaded only here: `faheem doctor` reads this module's names, and every CLI command loads it.
    const { countdownScript, startScriptedModel } = await import('../testing/scripted-model.js');
    const scripted = await startScriptedModel(countdownScript({ delayMs: 400 }));
    return {
      name,
      scripted,
      warn: true,
      // The stand-in is reached with no key: none of the worker's keys goes to it.
      env: { ...env, LLM_BASE_URL: scripted.baseUrl, LLM_API_KEY: '' },
      models: modelSettingsAt(models, scripted.baseUrl),
      announce:
        `model ${SCRIPTED_DEMO}: the OFFLINE SCRIPTED MODEL, a stand-in that replays the demo's fixed script ` +
        '(countdown.txt, then hello.txt when asked), not an agent; set LLM_MODEL (and its key) for a real model',
    };
  }
  if (!name) {
    return {
      name,
      env,
      models,
      warn: true,
      announce:
        'NO MODEL configured (LLM_MODEL is unset): a conversation that names no model fails at its first model call. ' +
        `Set LLM_MODEL (e.g. anthropic/claude-sonnet-4-6) and its key, or LLM_MODEL=${SCRIPTED_DEMO} for the offline scripted model`,
    };
  }
  // A chain (`openai/a,anthropic/b`): each model resolved as its calls resolve it, each said.
  const [head, ...fallbacks] = splitChain(name);
  try {
    const resolved = resolveModel(head, undefined, models);
    const more = fallbacks.map((m) => fallbackLine(m, resolved.baseUrl, models));
    return {
      name,
      env,
      models,
      warn: more.some((l) => l.warn),
      announce: [`model ${head} at ${resolved.baseUrl}`, ...more.map((l) => l.text)].join('; '),
    };
  } catch (err) {
    if (!(err instanceof ModelConfigError)) throw err;
    return { name, env, models, warn: true, announce: `model ${head}: ${err.message}` };
  }
}

/** How a fallback of the worker's chain resolves, or why it does not (calls then pass it over). */
function fallbackLine(model: string, firstEndpoint: string, models: ModelSettings): { text: string; warn: boolean } {
  try {
    return { text: `fallback ${model} at ${resolveModel(model, undefined, models, { firstEndpoint }).baseUrl}`, warn: false };
  } catch (err) {
    if (!(err instanceof ModelConfigError)) throw err;
    return { text: `fallback ${model}: ${err.message}`, warn: true };
  }
}

/** The worker's identity as Temporal shows it (`pid@host`), with the model it calls by default. */
export function workerIdentity(model: string | undefined): string {
  return `${process.pid}@${os.hostname()} model=${(model ?? 'none').replace(/\s+/g, '')}`;
}

/** The model a worker's identity names (`undefined`: an identity without one, from an older worker). */
export function modelOfIdentity(identity: string): string | undefined {
  return / model=(\S+)$/.exec(identity)?.[1];
}
