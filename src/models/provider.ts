// Resolves a model string such as `openai/gpt-4o` into an endpoint, the model name that endpoint
// expects, and the API key. Runs on the worker only: keys never leave it.
export interface Provider {
  baseUrl: string;
  /** The variable of the provider's key (one of the environment table's). */
  keyVar: VariableName;
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
  /** The worker has a key for this model but did not send it: the conversation's endpoint is not one it allows. */
  keyWithheld?: true;
}

/** Defined with the other errors (src/core/errors.ts): a FaheemError with code `model_config`. */
export { ModelConfigError } from '../core/errors.js';
import { ModelConfigError } from '../core/errors.js';
import type { VariableName } from '../environment.js';
import { parseHttpUrl, type ModelKeys, type ModelSettings } from '../settings/models.js';

/** How one model of a fallback chain is resolved. */
export interface ResolveOptions {
  /**
   * A fallback's: the endpoint of the chain's first model. LLM_API_KEY is the first model's key, so a
   * fallback gets it only at that endpoint or under LLM_BASE_URL; elsewhere only its provider's own
   * key variable (a fallback never receives another provider's key).
   */
  firstEndpoint?: string;
}

/** Whether LLM_API_KEY may go to `endpoint`: always for a chain's first model; for a fallback, see {@link ResolveOptions}. */
function generalKeyGoesTo(endpoint: string, models: ModelSettings, options: ResolveOptions): boolean {
  if (options.firstEndpoint === undefined) return true;
  const base = models.baseUrl;
  return underPrefix(endpoint, options.firstEndpoint) || (base !== undefined && underPrefix(endpoint, base));
}

/**
 * `anthropic/…` models are called through Anthropic's Messages API (its base URL here is the one
 * the OpenAI-compatibility layer had; the Messages client drops the `/v1`). `models` is the worker's model settings. An explicit base URL (the conversation's, then LLM_BASE_URL)
 * wins over the provider's; the provider's key variable wins over LLM_API_KEY. The key goes only to an
 * endpoint the worker allows (see {@link keyFor}); another gets none.
 */
export function resolveModel(
  model: string | undefined,
  baseUrl: string | undefined,
  models: ModelSettings,
  options: ResolveOptions = {},
): ResolvedModel {
  const name = (model || models.model || '').trim();
  if (!name) throw new ModelConfigError('no model is configured: set LLM_MODEL on the worker (e.g. openai/gpt-4o) or pass a model');
  const slash = name.indexOf('/');
  const prefix = slash > 0 ? name.slice(0, slash) : 'openai';
  const provider = PROVIDERS[prefix];
  const apiModel = provider && slash > 0 ? name.slice(slash + 1) : name;
  // Anthropic's own variable first (the SDK's name for it), then the general one.
  const explicitBase = baseUrl || (prefix === 'anthropic' && slash > 0 ? models.anthropicBaseUrl : undefined) || models.baseUrl;
  const endpoint = explicitBase || provider?.baseUrl;
  if (!endpoint) {
    throw new ModelConfigError(`unknown provider "${prefix}" in model "${name}": set LLM_BASE_URL to its OpenAI-compatible endpoint`);
  }
  const keyVar = provider?.keyVar;
  const general = generalKeyGoesTo(endpoint, models, options);
  // The endpoints the worker names itself always get the key; a conversation's own only when allowed.
  const { apiKey, withheld } = keyFor(endpoint, provider ? prefix : undefined, models, general);
  if (!apiKey && !withheld && provider?.keyRequired && !explicitBase) {
    throw new ModelConfigError(
      general
        ? `no API key for ${name}: set ${keyVar} or LLM_API_KEY on the worker`
        : `no API key for ${name}: set ${keyVar} on the worker (a fallback gets LLM_API_KEY only at the first model's endpoint or under LLM_BASE_URL)`,
    );
  }
  return {
    apiModel,
    provider: provider ? prefix : 'custom',
    baseUrl: endpoint,
    apiKey: apiKey || 'not-needed',
    ...(withheld ? { keyWithheld: true } : {}),
  };
}

// ---- Which endpoints get the worker's key ----
// A conversation names its own `llm.baseUrl`, and whoever can start a conversation is not thereby
// trusted with the worker's keys: they go only to the endpoints the worker itself names.

/** The worker variable that lists more endpoints its keys may go to (comma-separated URL prefixes). */
export const ALLOWED_BASE_URLS_VAR = 'FAHEEM_ALLOWED_BASE_URLS';

/**
 * Whether `url` lies under the URL prefix `prefix`: same scheme, host and port (parsed, so
 * `https://api.openai.com.evil.com` is not under `https://api.openai.com`, nor `:8443` under the
 * default port), and a path equal to the prefix's or below it at a `/` (`/v1` covers `/v1/chat`,
 * not `/v10`). Dot segments are resolved first, so `/v1/../admin` is not under `/v1`.
 */
export function underPrefix(url: string, prefix: string): boolean {
  const u = parseHttpUrl(url);
  const p = parseHttpUrl(prefix);
  if (!u || !p) return false;
  if (u.protocol !== p.protocol || u.host !== p.host) return false;
  const base = p.pathname.replace(/\/+$/, '');
  return base === '' || u.pathname === base || u.pathname.startsWith(`${base}/`);
}

/**
 * Whether the worker allows its key to go to `endpoint` for a model of `provider` (`openai`,
 * `anthropic`, …; anything else has no endpoint of its own): under LLM_BASE_URL, under
 * ANTHROPIC_BASE_URL for anthropic, on the provider's own host, or under a FAHEEM_ALLOWED_BASE_URLS prefix.
 */
export function endpointAllowed(endpoint: string, provider: string | undefined, models: ModelSettings): boolean {
  const own = provider ? PROVIDERS[provider]?.baseUrl : undefined;
  const allowed = [
    models.baseUrl,
    provider === 'anthropic' ? models.anthropicBaseUrl : undefined,
    own ? parseHttpUrl(own)?.origin : undefined,
    ...models.allowedBaseUrls,
  ].filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  return allowed.some((p) => underPrefix(endpoint, p));
}

/** The provider's own key (its key variable's), if it is one of {@link PROVIDERS} and the worker has one. */
export function ownKey(provider: string | undefined, models: ModelSettings): string | undefined {
  return provider !== undefined && Object.hasOwn(PROVIDERS, provider)
    ? models.keys[provider as Exclude<keyof ModelKeys, 'general'>]
    : undefined;
}

/** The key a model call sends, and whether the worker held one back. */
export interface EndpointKey {
  /** The key to send; '' when there is none to send. */
  apiKey: string;
  /** The worker has a key for this model but the endpoint is not one it allows: none was sent. */
  withheld: boolean;
}

/**
 * The key for a call to `endpoint` with a model of `provider`: the provider's key variable, else
 * LLM_API_KEY (unless `generalKey` is false: a fallback elsewhere), when {@link endpointAllowed}; otherwise none (a local server needs none; one that
 * does answers 401, and the error says why).
 */
export function keyFor(endpoint: string, provider: string | undefined, models: ModelSettings, generalKey = true): EndpointKey {
  const key = ownKey(provider, models) || (generalKey ? models.keys.general : '') || '';
  if (!key || endpointAllowed(endpoint, provider, models)) return { apiKey: key, withheld: false };
  return { apiKey: '', withheld: true };
}

/** What a 401/403 from an endpoint that was sent no key says, so the operator knows what to change. */
export function withheldKeyHint(endpoint: string): string {
  let origin = endpoint;
  try {
    origin = new URL(endpoint).origin;
  } catch {
    // shown as given
  }
  return (
    `the worker did not send its API key to ${endpoint}: a conversation's own base URL gets the key only when the worker allows it ` +
    `(LLM_BASE_URL, the provider's own endpoint, or ${ALLOWED_BASE_URLS_VAR}). To allow it, set ${ALLOWED_BASE_URLS_VAR}=${origin} ` +
    `(comma-separated URL prefixes) where the worker runs`
  );
}
