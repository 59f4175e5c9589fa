// The step that the bench times and bench/trace.ts takes apart: one terminal command per model call.
import { Agent, Conversation, LLM } from '../src/client/client.js';
import type { Harness } from '../test/support/harness.js';
import type { Script } from '../src/testing/scripted-model.js';

export const benchAgent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

/** A model that asks for `echo` until it has seen `steps` tool results, then answers. */
export const stepScript =
  (steps: number): Script =>
  (req) =>
    req.body.messages.filter((m) => m.role === 'tool').length >= steps
      ? { content: 'done' }
      : { toolCalls: [{ name: 'terminal', arguments: { command: `echo step ${req.body.messages.length}` } }] };

/** Options every bench conversation gets: BENCH_CHECKPOINTS=0 leaves out the checkpoint per step (time travel's cost apart). */
export const benchOptions = (): { checkpoints?: false } => (process.env.BENCH_CHECKPOINTS === '0' ? { checkpoints: false } : {});

/** The `p`th percentile of `xs` (nearest rank; NaN when empty). */
export const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

/** Wall ms a step of a `steps`-step bench conversation, from its start until it stops (as a user's run() waits: one update for the run). */
export async function durableStepMs(h: Harness, steps: number): Promise<number> {
  h.model.setScript(stepScript(steps));
  const t0 = performance.now();
  const conversation = await startBenchConversation(h);
  await conversation.waitUntilStopped({ timeoutMs: 600_000 });
  return (performance.now() - t0) / (steps + 1);
}

/**
 * The bench conversation the step benches time (bench:step, step-parts, trace): the bench agent in a
 * new workspace, told `go` and run, no condenser; `options` adds to it (a task queue, a bound).
 */
export async function startBenchConversation(
  h: Harness,
  options: Partial<Parameters<typeof Conversation.create>[1]> = {},
): Promise<Conversation> {
  return Conversation.create(h.client, {
    ...benchOptions(),
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    run: true,
    condenser: false,
    ...options,
  });
}
