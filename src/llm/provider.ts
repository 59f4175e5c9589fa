// Resolves a model string such as `openai/gpt-4o` into an endpoint, the model name that endpoint
// expects, and the API key. Runs on the worker only: keys never leave it.
export interface Provider {
  baseUrl: string;
  keyVar: string;
  keyRequired: boolean;
}

export const PROVIDERS: Record<string, Provider> = {
  openai: { baseUrl: 'https://api.openai.com/v1', keyVar: 'OPENAI_API_KEY', keyRequired: true },
  anthropic: { baseUrl: 'https://api.anthropic.com/v1/', keyVar: 'ANTHROPIC_API_KEY', keyRequired: true },
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', keyVar: 'OPENROUTER_API_KEY', keyRequired: true },
  ollama: { baseUrl: 'http://localhost:11434/v1', keyVar: 'OLLAMA_API_KEY', keyRequired: false },
};

export interface ResolvedModel {
  /** The name sent to the endpoint (`gpt-4o` for `openai/gpt-4o`). */
  apiModel: string;
  provider: string;
  baseUrl: string;
  apiKey: string;
}

/** Defined with the other errors (src/errors.ts): a FaheemError with code `model_config`. */
export { ModelConfigError } from '../errors.js';
import { ModelConfigError } from '../errors.js';

/**
 * `anthropic/…` models are called through Anthropic's Messages API (its base URL here is the one
 * the OpenAI-compatibility layer had; the Messages client drops the `/v1`). `env` is the worker's environment. An explicit base URL (the conversation's, then LLM_BASE_URL)
 * wins over the provider's; the provider's key variable wins over LLM_API_KEY.
 */
export function resolveModel(model: string | undefined, baseUrl: string | undefined, env: NodeJS.ProcessEnv): ResolvedModel {
  const name = (model || env.LLM_MODEL || '').trim();
  if (!name) throw new ModelConfigError('no model is configured: set LLM_MODEL on the worker (e.g. openai/gpt-4o) or pass a model');
  const slash = name.indexOf('/');
  const prefix = slash > 0 ? name.slice(0, slash) : 'openai';
  const provider = PROVIDERS[prefix];
  const apiModel = provider && slash > 0 ? name.slice(slash + 1) : name;
  // Anthropic's own variable first (the SDK's name for it), then the general one.
  const explicitBase = baseUrl || (prefix === 'anthropic' && slash > 0 ? env.ANTHROPIC_BASE_URL : undefined) || env.LLM_BASE_URL;
  const endpoint = explicitBase || provider?.baseUrl;
  if (!endpoint) {
    throw new ModelConfigError(`unknown provider "${prefix}" in model "${name}": set LLM_BASE_URL to its OpenAI-compatible endpoint`);
  }
  const keyVar = provider?.keyVar;
  const apiKey = (keyVar && env[keyVar]) || env.LLM_API_KEY || '';
  if (!apiKey && provider?.keyRequired && !explicitBase) {
    throw new ModelConfigError(`no API key for ${name}: set ${keyVar} or LLM_API_KEY on the worker`);
  }
  return { apiModel, provider: provider ? prefix : 'custom', baseUrl: endpoint, apiKey: apiKey || 'not-needed' };
}
