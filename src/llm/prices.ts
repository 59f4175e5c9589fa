// USD per million tokens. Users extend it with FAHEEM_PRICES='{"my-model":{"input":1,"output":2}}'.
export interface Price {
  input: number;
  output: number;
  cachedInput?: number;
}

const BUILT_IN: Record<string, Price> = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
  'o3': { input: 2, output: 8, cachedInput: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'claude-sonnet-4-5-20250929': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-sonnet-4-20250514': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-opus-4-1-20250805': { input: 15, output: 75, cachedInput: 1.5 },
  'claude-haiku-4-5-20251001': { input: 1, output: 5, cachedInput: 0.1 },
};

export function priceTable(env: NodeJS.ProcessEnv = process.env): Record<string, Price> {
  if (!env.FAHEEM_PRICES) return BUILT_IN;
  try {
    return { ...BUILT_IN, ...(JSON.parse(env.FAHEEM_PRICES) as Record<string, Price>) };
  } catch {
    return BUILT_IN;
  }
}

/** Cost of one call; 0 for models we have no price for (local models, unknown names). */
export function costOf(
  model: string,
  usage: { promptTokens: number; completionTokens: number; cacheReadTokens: number },
  table: Record<string, Price> = priceTable(),
): number {
  const price = table[model] ?? table[model.split('/').pop() ?? ''];
  if (!price) return 0;
  const cached = Math.min(usage.cacheReadTokens, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  return (fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.completionTokens * price.output) / 1e6;
}
