// What a model call costs and how much a model can take, from a maintained catalogue:
// @pydantic/genai-prices (input, output, cache write and cache read prices, tiers, context windows),
// instead of a hand-kept table. FAHEEM_PRICES='{"my-model":{"input":1,"output":2}}' overrides it.
import { calcPrice, type PriceCalculation } from '@pydantic/genai-prices';
import { z } from 'zod';
import type { TokenUsage } from '../core/types.js';
import type { ModelSettings } from '../settings/models.js';

/** USD per million tokens, as FAHEEM_PRICES gives them. */
export interface Price {
  input: number;
  output: number;
  /** Cache reads (default: the input price). */
  cachedInput?: number;
  /** Cache writes (default: the input price). */
  cacheWrite?: number;
}

const PriceSchema = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
  cacheWrite: z.number().nonnegative().optional(),
});

/** The FAHEEM_PRICES overrides (bad JSON or entries are ignored: the catalogue still prices them). */
export function priceTable(models: Pick<ModelSettings, 'prices'>): Record<string, Price> {
  if (!models.prices) return {};
  try {
    const parsed = z.record(z.string(), z.unknown()).parse(JSON.parse(models.prices));
    const out: Record<string, Price> = {};
    for (const [name, value] of Object.entries(parsed)) {
      const price = PriceSchema.safeParse(value);
      if (price.success) out[name] = price.data;
    }
    return out;
  } catch {
    return {};
  }
}

/** genai-prices' provider ids for ours (custom endpoints are matched by model name). */
const CATALOGUE_PROVIDER: Record<string, string> = { openai: 'openai', anthropic: 'anthropic', openrouter: 'openrouter' };

/** What is known of a model: its catalogue entry (when there is one) and its context window. */
export interface ModelFacts {
  /** The catalogue knows its price, or FAHEEM_PRICES gives one. */
  priced: boolean;
  contextWindow?: number;
}

function catalogue(model: string, provider: string | undefined, usage: Parameters<typeof calcPrice>[0]): PriceCalculation | null {
  const providerId = provider ? CATALOGUE_PROVIDER[provider] : undefined;
  try {
    return calcPrice(usage, model, providerId ? { providerId } : {}) ?? (providerId ? null : calcPrice(usage, model));
  } catch {
    return null;
  }
}

function override(model: string, table: Record<string, Price>): Price | undefined {
  return table[model] ?? table[model.split('/').pop() ?? ''];
}

// The catalogue's entry of each model asked about (null: none). Each lookup scans the catalogue,
// twice for a model it does not know (a local or custom one), and a call asks twice.
const entries = new Map<string, PriceCalculation | null>();
const MAX_ENTRIES = 1000;

function entryOf(model: string, provider: string | undefined): PriceCalculation | null {
  const key = `${provider ?? ''}\n${model}`;
  let found = entries.get(key);
  if (found === undefined) {
    found = catalogue(model, provider, { input_tokens: 0, output_tokens: 0 });
    if (entries.size >= MAX_ENTRIES) entries.clear();
    entries.set(key, found);
  }
  return found;
}

/** The model's price and context window, as far as the catalogue and FAHEEM_PRICES know them. */
export function modelFacts(model: string, provider?: string, table: Record<string, Price> = {}): ModelFacts {
  const found = entryOf(model, provider);
  return {
    priced: Boolean(override(model, table) ?? found),
    ...(found?.model.context_window ? { contextWindow: found.model.context_window } : {}),
  };
}

/**
 * Cost of one call in USD: uncached input, cache writes and reads, and output at the model's list
 * prices (FAHEEM_PRICES first). `promptTokens` is the whole input, cache tokens included. Undefined
 * when no price is known (the caller says so once; the cost counts as 0).
 */
export function costOf(model: string, usage: TokenUsage, table: Record<string, Price> = {}, provider?: string): number | undefined {
  const read = Math.min(usage.cacheReadTokens, usage.promptTokens);
  const write = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - read);
  const fresh = usage.promptTokens - read - write;
  const own = override(model, table);
  if (own) {
    return (
      (fresh * own.input +
        read * (own.cachedInput ?? own.input) +
        write * (own.cacheWrite ?? own.input) +
        usage.completionTokens * own.output) /
      1e6
    );
  }
  if (!entryOf(model, provider)) return undefined;
  const found = catalogue(model, provider, {
    input_tokens: usage.promptTokens,
    cache_read_tokens: read,
    cache_write_tokens: write,
    output_tokens: usage.completionTokens,
  });
  return found ? found.total_price : undefined;
}
