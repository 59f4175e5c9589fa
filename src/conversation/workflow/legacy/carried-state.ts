// Carried state (the input a run gets when its predecessor continued as new) of every older shape:
// checked against its schema, then migrated to the current one, in one place. Pure.
import { z } from 'zod';
import { FAILURE, failure } from '../../../core/failure-types.js';
import type { CarriedState, TerminalState } from '../../../core/types.js';

/** The shape `toCarried()` writes now. Version 1 (no number) wrote `terminal` and `tasks` beside `toolState`. */
export const CARRIED_STATE_VERSION = 2;

const STATUSES = ['idle', 'running', 'paused', 'waiting_for_confirmation', 'finished', 'error', 'stuck'] as const;

/**
 * Every shape of `CarriedState` a worker ever wrote (versions 1 to CARRIED_STATE_VERSION): the
 * fields a run reads, with their types; fields it does not know are kept as they are. Events are
 * checked for what the log relies on (index, kind, time); their own fields are the event types'.
 * Built on first use: the workflow bundle evaluates this module for every workflow (~12 ms of zod
 * construction), and only a run that continued as new reads carried state.
 */
export const CarriedStateSchema = z.lazy(() => {
  const count = z.number().int().nonnegative();
  const Terminal = z.looseObject({ cwd: z.string(), env: z.record(z.string(), z.string()) });
  return z.looseObject({
    version: z.number().int().min(1).max(CARRIED_STATE_VERSION).optional(),
    events: z.array(z.looseObject({ index: count, kind: z.string(), timestamp: z.string() })),
    status: z.enum(STATUSES),
    iterations: count,
    runNumber: count,
    metrics: z.looseObject({
      accumulatedCost: z.number(),
      promptTokens: z.number(),
      completionTokens: z.number(),
      llmCalls: z.number(),
      calls: z.array(z.looseObject({ step: z.number(), kind: z.enum(['step', 'condense']), cost: z.number() })).optional(),
    }),
    lastError: z.string().nullable(),
    terminal: Terminal.optional(),
    modelSeenEvents: count,
    tasks: z.array(z.looseObject({ title: z.string(), status: z.string() })).optional(),
    runCost: z.number().optional(),
    toolState: z.record(z.string(), z.unknown()).optional(),
    setup: z.looseObject({ version: count, tools: z.array(z.looseObject({ name: z.string() })) }).optional(),
    lastPromptTokens: z.number().optional(),
    condenseRetryAt: z.number().optional(),
    children: z.array(z.looseObject({ id: z.string(), status: z.enum(STATUSES), cost: z.number(), task: z.string() })).optional(),
    childCount: count.optional(),
    finalMessage: z.string().nullable().optional(),
    runs: z.array(z.looseObject({ runId: z.string(), from: count })).optional(),
    steps: count.optional(),
    checkpoints: z
      .array(z.looseObject({ step: count, index: count, time: z.string(), added: z.number(), changed: z.number(), deleted: z.number() }))
      .optional(),
    forkedFrom: z.looseObject({ id: z.string(), step: count, commit: z.string() }).optional(),
    forkMade: z.boolean().optional(),
    hooks: z.looseObject({ sessionStartedRun: z.number().int(), stopHookRun: z.number().int(), checkedPromptsUpTo: count }).optional(),
    movedStep: z
      .discriminatedUnion('kind', [
        z.looseObject({
          kind: z.literal('wait'),
          toolCallId: z.string(),
          until: z.string(),
          reason: z.string(),
          capped: z.boolean(),
          rest: z.array(z.string()),
        }),
        z.looseObject({ kind: z.literal('approval'), toolCallIds: z.array(z.string()) }),
      ])
      .optional(),
    confirmationPolicy: z.enum(['never', 'risky', 'always']).optional(),
  });
});

/**
 * The carried state if it has one of the shapes workers wrote. Our own data, written by an earlier
 * run: one that does not parse (a worker that wrote another shape, a hand-made input) cannot be
 * run on, and retrying the task would fail the same way for ever, so the workflow fails at once
 * with a CarriedStateInvalid failure that says which fields are wrong.
 */
export function checkedCarried(carried: unknown): CarriedState {
  const parsed = CarriedStateSchema.safeParse(carried);
  if (parsed.success) return parsed.data as unknown as CarriedState;
  const problems = parsed.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  throw failure(
    FAILURE.CarriedStateInvalid,
    `the state carried from the previous run is not one this worker can read (version ${String((carried as { version?: unknown } | null)?.version ?? 1)}): ${problems}`,
  );
}

/**
 * The carried state in the current shape: each tool's durable state by tool name (older runs
 * carried the terminal's state and the task list in fields of their own).
 */
export function migrateCarried(carried: CarriedState, workspace: string): CarriedState & { toolState: Record<string, unknown> } {
  if (carried.toolState) return { ...carried, toolState: carried.toolState };
  const terminal: TerminalState = carried.terminal ?? { cwd: workspace, env: {} };
  return {
    ...carried,
    toolState: { terminal, ...(carried.tasks ? { task_tracker: carried.tasks } : {}) },
  };
}
