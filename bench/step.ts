// The step that the bench times and bench/trace.ts takes apart: one terminal command per model call.
import { Agent, LLM } from '../src/client.js';
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
