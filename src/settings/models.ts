// The model area of the settings: the worker's model, its endpoints and keys, the wire API,
// reasoning, the output cap, price overrides and the endpoints a conversation's own base URL may
// use. Built once at an entry point and passed to the model clients (src/models/). No zod here (the
// quick paths load it): FAHEEM_PRICES is kept as given, parsed by src/models/prices.ts.
// Secrets: the keys and the secret values are non-enumerable, so printing or serializing this object
// (JSON, util.inspect, a spread) leaves them out; they go only into a model call's request.
import type { Settings } from '../environment.js';

/** The reasoning efforts LLM_REASONING_EFFORT takes. */
export type ModelReasoningEffort = 'low' | 'medium' | 'high';

/** The wire APIs LLM_WIRE_API takes. */
export type ModelWireApi = 'responses' | 'chat';

/** The worker's model keys, by provider (secrets). */
export interface ModelKeys {
  /** LLM_API_KEY: the key when the provider's own variable is unset (a chain's first model's). */
  readonly general: string | undefined;
  /** OPENAI_API_KEY: `openai/…` models' key (wins over LLM_API_KEY). */
  readonly openai: string | undefined;
  /** ANTHROPIC_API_KEY: `anthropic/…` models' key (wins over LLM_API_KEY). */
  readonly anthropic: string | undefined;
  /** OPENROUTER_API_KEY: `openrouter/…` models' key (wins over LLM_API_KEY). */
  readonly openrouter: string | undefined;
  /** OLLAMA_API_KEY: `ollama/…` models' key, for an endpoint that wants one. */
  readonly ollama: string | undefined;
}

/** The model settings. */
export interface ModelSettings {
  /** LLM_MODEL (trimmed): the model, or a comma-separated fallback chain; undefined when unset. */
  readonly model: string | undefined;
  /** LLM_BASE_URL (trimmed): an OpenAI-compatible endpoint that wins over the provider's; it gets the key. */
  readonly baseUrl: string | undefined;
  /** ANTHROPIC_BASE_URL (trimmed): the Messages API endpoint of `anthropic/…` models. */
  readonly anthropicBaseUrl: string | undefined;
  /** The keys (LLM_API_KEY and the providers' own, trimmed). Non-enumerable: never printed. */
  readonly keys: ModelKeys;
  /** LLM_WIRE_API (trimmed, any case): `responses` or `chat`; undefined when unset or neither. */
  readonly wireApi: ModelWireApi | undefined;
  /** LLM_REASONING_EFFORT (trimmed): `low`, `medium` or `high`; undefined (off) when unset or another value. */
  readonly reasoningEffort: ModelReasoningEffort | undefined;
  /** LLM_MAX_OUTPUT_TOKENS: a positive integer; undefined (the model's own cap) when unset or not one. */
  readonly maxOutputTokens: number | undefined;
  /** FAHEEM_ALLOWED_BASE_URLS: its entries that are http(s) URLs (prefixes more endpoints may be under and get the key). */
  readonly allowedBaseUrls: readonly string[];
  /** FAHEEM_ALLOWED_BASE_URLS: its entries that are not http(s) URLs (ignored, and said). */
  readonly invalidBaseUrls: readonly string[];
  /** FAHEEM_PRICES as given: JSON price overrides (parsed by src/models/prices.ts; bad JSON is ignored). */
  readonly prices: string | undefined;
  /** Settings that are set but ignored, one line each (the worker says them once, at start). */
  readonly warnings: readonly string[];
  /** The values of the environment's secret variables: masked in what a model call reports. Non-enumerable. */
  readonly secrets: readonly string[];
}

/** `url` (trimmed) parsed, when it is an http(s) URL; undefined otherwise. */
export function parseHttpUrl(url: string): URL | undefined {
  try {
    const u = new URL(url.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}

const httpUrl = (url: string): boolean => parseHttpUrl(url) !== undefined;

const text = (value: string | undefined): string | undefined => value?.trim() || undefined;

/**
 * The model settings `settings` gives (a blank value is unset). Values that are set but unusable are
 * ignored as the model calls always ignored them, each with a line in `warnings`. `secrets` are the
 * values to mask in what model calls report: the entry point passes every secret of its environment
 * (secretValues, src/security/env-policy.ts); by default, the keys here.
 */
export function modelSettings(settings: Settings, secrets?: readonly string[]): ModelSettings {
  const warnings: string[] = [];
  const effort = settings.LLM_REASONING_EFFORT?.trim();
  const reasoningEffort: ModelReasoningEffort | undefined =
    effort === 'low' || effort === 'medium' || effort === 'high' ? effort : undefined;
  if (effort && effort !== 'off' && !reasoningEffort)
    warnings.push(`LLM_REASONING_EFFORT=${effort} is not low, medium or high: reasoning stays off`);
  const wire = settings.LLM_WIRE_API?.trim().toLowerCase();
  const wireApi: ModelWireApi | undefined = wire === 'responses' || wire === 'chat' ? wire : undefined;
  if (wire && !wireApi)
    warnings.push(
      `LLM_WIRE_API=${wire} is not responses or chat: the default applies (responses on OpenAI's own endpoint, chat elsewhere)`,
    );
  const entries = (settings.FAHEEM_ALLOWED_BASE_URLS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const invalidBaseUrls = entries.filter((s) => !httpUrl(s));
  if (invalidBaseUrls.length)
    warnings.push(`FAHEEM_ALLOWED_BASE_URLS: ${invalidBaseUrls.map((v) => JSON.stringify(v)).join(', ')} not an http(s) URL, ignored`);
  const max = Number(settings.LLM_MAX_OUTPUT_TOKENS);
  const visible = {
    model: text(settings.LLM_MODEL),
    baseUrl: text(settings.LLM_BASE_URL),
    anthropicBaseUrl: text(settings.ANTHROPIC_BASE_URL),
    wireApi,
    reasoningEffort,
    maxOutputTokens: Number.isInteger(max) && max > 0 ? max : undefined,
    allowedBaseUrls: entries.filter(httpUrl),
    invalidBaseUrls,
    prices: settings.FAHEEM_PRICES || undefined,
    warnings,
  };
  const keys: ModelKeys = {
    general: text(settings.LLM_API_KEY),
    openai: text(settings.OPENAI_API_KEY),
    anthropic: text(settings.ANTHROPIC_API_KEY),
    openrouter: text(settings.OPENROUTER_API_KEY),
    ollama: text(settings.OLLAMA_API_KEY),
  };
  const own = Object.values(keys).filter((k): k is string => k !== undefined && k.length >= 6);
  return withSecrets(visible, keys, secrets ?? own);
}

/**
 * `models` reached at another endpoint with no LLM_API_KEY: the scripted model's server, which the
 * worker reaches with none of its general key (the providers' own keys and the masked secrets stay).
 */
export function modelSettingsAt(models: ModelSettings, baseUrl: string): ModelSettings {
  const { keys, secrets, ...visible } = models;
  return withSecrets({ ...visible, baseUrl }, { ...keys, general: undefined }, secrets);
}

function withSecrets(visible: Omit<ModelSettings, 'keys' | 'secrets'>, keys: ModelKeys, secrets: readonly string[]): ModelSettings {
  const out = { ...visible } as ModelSettings;
  Object.defineProperty(out, 'keys', { value: Object.freeze(keys), enumerable: false });
  Object.defineProperty(out, 'secrets', { value: Object.freeze([...secrets]), enumerable: false });
  return Object.freeze(out);
}
