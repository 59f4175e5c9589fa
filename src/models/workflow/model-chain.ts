// A conversation's fallback chain: the models a call may try, in order. Pure string work with no
// imports, so workflow code (the activity summary), the CLI, the team API and the worker share it.

/** The most models a chain holds; more would make one call wait through too many outages. */
export const MAX_CHAIN = 8;

/** `openai/a, anthropic/b` → `['openai/a', 'anthropic/b']`: trimmed, empty parts and repeats dropped. */
export function splitChain(text: string | undefined): string[] {
  const out: string[] = [];
  for (const part of (text ?? '').split(',')) {
    const name = part.trim();
    if (name !== '' && !out.includes(name)) out.push(name);
  }
  return out;
}

/**
 * The models a call tries, in order: the conversation's model (else the worker's LLM_MODEL, which
 * may itself be a chain), then the conversation's fallbacks; repeats dropped, at most
 * {@link MAX_CHAIN}. Empty when no model is named anywhere.
 */
export function chainOf(
  llm: { model?: string | undefined; fallbacks?: readonly string[] | undefined },
  workerModel: string | undefined,
): string[] {
  const head = splitChain(llm.model?.trim() ? llm.model : workerModel);
  return splitChain([...head, ...(llm.fallbacks ?? [])].join(',')).slice(0, MAX_CHAIN);
}

/** A chain as people read it: `openai/a → anthropic/b`. */
export function chainText(models: readonly string[]): string {
  return models.join(' → ');
}
