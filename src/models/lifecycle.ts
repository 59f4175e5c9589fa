// Model lifecycle: which models their vendor has deprecated or retired, from the deprecation table
// shipped inside @anthropic-ai/sdk (the SDK's own warning reads it), with the model to move to.
import { createRequire } from 'node:module';
import path from 'node:path';

/** A deprecated or retired model: when it ends (or ended) and what replaces it. */
export interface ModelLifecycle {
  model: string;
  /** The end-of-life date as the vendor wrote it, e.g. `November 30th, 2026`. */
  endOfLife: string;
  /** True once that date has passed. */
  retired: boolean;
  /** The current model of the same family. */
  replacement?: string;
}

/**
 * Replacements by family: the newest model of each family in the SDK's model list. The SDK's table
 * says when a model ends, not what follows it.
 */
const REPLACEMENTS: Record<string, string> = {
  'claude-sonnet': 'claude-sonnet-4-6',
  'claude-opus': 'claude-opus-4-8',
  'claude-haiku': 'claude-haiku-4-5',
  'claude-mythos': 'claude-mythos-5-2',
};

let table: Record<string, string> | undefined;

/** The SDK's table of deprecated models (model → end-of-life date); empty if the SDK moved it. */
export function deprecatedModels(): Record<string, string> {
  if (table) return table;
  try {
    // Not among the package's exports: read the file beside its entry point.
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@anthropic-ai/sdk'));
    const data = require(path.join(dir, 'internal', 'data', 'deprecated-models.js')) as { DEPRECATED_MODELS?: Record<string, string> };
    table = data.DEPRECATED_MODELS ?? {};
  } catch {
    table = {};
  }
  return table;
}

let adaptive: string[] | undefined;

/**
 * Models for which the SDK says budgeted thinking (`type: 'enabled'`) is deprecated in favour of
 * adaptive thinking (its own table, read like the deprecations).
 */
export function adaptiveThinkingModels(): string[] {
  if (adaptive) return adaptive;
  try {
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@anthropic-ai/sdk'));
    const data = require(path.join(dir, 'internal', 'data', 'models-to-warn-with-thinking-enabled.js')) as {
      MODELS_TO_WARN_WITH_THINKING_ENABLED?: string[];
    };
    adaptive = data.MODELS_TO_WARN_WITH_THINKING_ENABLED ?? [];
  } catch {
    adaptive = [];
  }
  return adaptive;
}

/** The lifecycle of `model` (`claude-…`, with or without `anthropic/`) when it is deprecated or retired. */
export function modelLifecycle(model: string, now = new Date(), known = deprecatedModels()): ModelLifecycle | undefined {
  const name = model.replace(/^anthropic\//, '');
  const endOfLife = known[name];
  if (!endOfLife) return undefined;
  // "November 30th, 2026" → a date: drop the ordinal suffix.
  const at = Date.parse(endOfLife.replace(/(\d+)(st|nd|rd|th)/, '$1'));
  const family = /^(claude-[a-z]+)/.exec(name)?.[1];
  const replacement = family ? REPLACEMENTS[family] : undefined;
  return {
    model: name,
    endOfLife,
    retired: Number.isFinite(at) && now.getTime() >= at + 24 * 60 * 60 * 1000,
    ...(replacement && replacement !== name ? { replacement } : {}),
  };
}

/** The one-line warning for a deprecated or retired model. */
export function lifecycleWarning(l: ModelLifecycle): string {
  const state = l.retired ? `was retired on ${l.endOfLife}` : `is deprecated and reaches end of life on ${l.endOfLife}`;
  return `model ${l.model} ${state}${l.replacement ? `; use ${l.replacement} instead` : ''}`;
}
