// The Responses API's prompt cache, measured (figures, not asserts): `npm run bench:responses`.
// Four openai/gpt-5.5 conversations of 50 tool steps each run side by side through the Responses
// API (reasoning on) against the scripted Responses server, whose cache model routes a request to
// the machine its prompt's first 256 tokens and `prompt_cache_key` hash to, and spills it to another
// machine once that route has had more than 15 requests in the last minute (OpenAI's documented
// figure); only the machine that saw a prefix can read it. The clock the server counts minutes by
// advances 5 s per conversation step (a real model's pace, 12 requests a minute per conversation).
// Once with the conversation's stable `prompt_cache_key` (what the client sends), once routed as if
// no key had been sent. Also: what the reasoning items cost in history (bytes per step, the largest
// payload).
import { Agent, Conversation, LLM } from '../src/client/client.js';
import { costOf } from '../src/models/prices.js';
import type { Script } from '../src/testing/scripted-model.js';
import type { ScriptedResponses } from '../src/testing/scripted-responses.js';
import type { ConversationState } from '../src/core/types.js';
import { startHarness } from '../test/support/harness.js';

const MODEL = 'gpt-5.5';
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 4);
const STEPS = Number(process.env.BENCH_STEPS ?? 50);
const STEP_MS = 5_000;
/** Characters of each reasoning item's encrypted_content (the real API's grow with the reasoning). */
const ENCRYPTED = Number(process.env.BENCH_ENCRYPTED_CHARS ?? 2_048);
const ARMS = (process.env.BENCH_ARMS ?? 'key,nokey').split(',');

/** 50 steps, each printing ~4.4 KB (about 1.1k tokens), after a ~28 KB task: ~8k → ~60k tokens. */
function growingScript(steps: number): Script {
  // Steps counted per conversation (a condensation would shorten the prompt the script sees).
  const done = new Map<string, number>();
  return (req) => {
    const system = String(req.body.messages[0]?.content ?? '');
    if (system.startsWith('You condense')) return { content: 'summary: parts printed so far' };
    const key = String(req.body.prompt_cache_key);
    const n = done.get(key) ?? 0;
    if (n >= steps) return { content: `Read all ${steps} parts.` };
    done.set(key, n + 1);
    return { toolCalls: [{ name: 'terminal', arguments: { command: `echo part ${n + 1}; head -c 4400 /dev/zero | tr '\\0' x` } }] };
  };
}

interface Arm {
  arm: string;
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  share: number;
  cost: number;
  uncachedCost: number;
  seconds: number;
}

const h = await startHarness({
  name: 'bench-responses',
  api: 'responses',
  script: growingScript(STEPS),
  record: false,
  responses: { encryptedContentChars: ENCRYPTED },
});
const server = h.model as ScriptedResponses;
try {
  await h.startWorker({ LLM_REASONING_EFFORT: 'low' });
  // Each conversation its own task (what they share is the tools and the system prompt).
  const task = (n: number) =>
    `Read spec ${n} below, then print its ${STEPS} parts one by one.\n\n${`spec ${n} line: keep every number. `.repeat(900)}`;
  const arms: Arm[] = [];
  let lastFinals: ConversationState[] = [];
  for (const ignoreCacheKey of ARMS.map((a) => a === 'nokey')) {
    const from = server.requests.length;
    const t0 = Date.now();
    server.setRouting({
      machines: 8,
      requestsPerMinute: 15,
      ignoreCacheKey,
      now: () => t0 + ((server.requests.length - from) * STEP_MS) / CONVERSATIONS,
    });
    const started = performance.now();
    const finals = await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, n) => {
        const agent = new Agent({ llm: new LLM({ model: `openai/${MODEL}` }), tools: ['terminal', 'file_editor', 'task_tracker'] });
        const conversation = await Conversation.create(h.client, { agent, workspace: await h.workspace(), maxIterations: 200 });
        await conversation.sendMessage(task(n + 1));
        const final = await conversation.run().then(() => conversation.state());
        if (final.status !== 'finished') throw new Error(`ended ${final.status}: ${final.lastError}`);
        return final;
      }),
    );
    lastFinals = finals;
    const sum = (f: (s: ConversationState) => number) => finals.reduce((n, s) => n + f(s), 0);
    const prompt = sum((s) => s.metrics.promptTokens);
    const cached = sum((s) => s.metrics.cacheReadTokens);
    const output = sum((s) => s.metrics.completionTokens);
    arms.push({
      arm: ignoreCacheKey ? 'routed as without prompt_cache_key' : 'stable prompt_cache_key (per conversation)',
      calls: sum((s) => s.metrics.llmCalls),
      promptTokens: prompt,
      cachedTokens: cached,
      share: cached / prompt,
      cost: sum((s) => s.metrics.accumulatedCost),
      uncachedCost:
        costOf(MODEL, { promptTokens: prompt, completionTokens: output, cacheReadTokens: 0, cacheWriteTokens: 0 }, {}, 'openai') ?? NaN,
      seconds: (performance.now() - started) / 1000,
    });
  }
  console.log(
    `model openai/${MODEL} (list prices from @pydantic/genai-prices), ${CONVERSATIONS} conversations × ${STEPS} steps side by side, scripted Responses server (8 cache machines, 15 requests a minute a route)`,
  );
  console.log('| arm | calls | prompt tokens | cached | cost | all billed as fresh input | wall time |');
  console.log('|---|---|---|---|---|---|---|');
  for (const a of arms)
    console.log(
      `| ${a.arm} | ${a.calls} | ${a.promptTokens.toLocaleString('en')} | ${(100 * a.share).toFixed(1)} % | $${a.cost.toFixed(3)} | $${a.uncachedCost.toFixed(3)} | ${a.seconds.toFixed(0)} s |`,
    );

  // What the reasoning items weigh: in the prompts (this server counts their bytes as input, four
  // characters a token), and in history (the last arm's first conversation).
  const last = server.requests.filter(
    (r) => r.status === 200 && (r.raw as { prompt_cache_key?: string }).prompt_cache_key === lastFinals[0]!.id,
  );
  const final = last[last.length - 1]!;
  const items = (final.raw as { input: { type?: string }[] }).input.filter((i) => i.type === 'reasoning');
  const reasoningInPrompt = items.reduce((n, i) => n + Math.ceil(`item:${JSON.stringify(i)}`.length / 4), 0);
  console.log(
    `the last prompt of a conversation: ${(final.usage?.input_tokens ?? 0).toLocaleString('en')} tokens, of which its ${items.length} reasoning items ${reasoningInPrompt.toLocaleString('en')} (${((100 * reasoningInPrompt) / (final.usage?.input_tokens ?? 1)).toFixed(1)} %)`,
  );
  const id = lastFinals[0]!.id;
  const events = await (await Conversation.attach(h.client, id)).events();
  const reasoningBytes = events.reduce((n, e) => n + (e.kind === 'action' && e.reasoning ? JSON.stringify(e.reasoning).length : 0), 0);
  const steps = events.filter((e) => e.kind === 'action' && e.reasoning).length;
  const condensations = events.filter((e) => e.kind === 'condensation').length;
  let largest = 0;
  let total = 0;
  const runs: string[] = [];
  for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(wf.runId);
  for (const runId of runs) {
    const history = await h.client.workflow.getHandle(id, runId).fetchHistory();
    for (const e of history.events ?? []) {
      const payloads = [
        ...(e.activityTaskCompletedEventAttributes?.result?.payloads ?? []),
        ...(e.workflowExecutionStartedEventAttributes?.input?.payloads ?? []),
      ];
      for (const p of payloads) {
        const size = (p.data?.length ?? 0) + JSON.stringify(p.metadata ?? {}).length;
        total += size;
        largest = Math.max(largest, size);
      }
    }
  }
  console.log(
    `reasoning on the events: ${steps} steps, ${(reasoningBytes / steps).toFixed(0)} bytes a step (encrypted_content ${ENCRYPTED} characters), ${(reasoningBytes / 1024).toFixed(0)} KiB in all; ` +
      `${condensations} condensations, ${runs.length} runs, model results and run inputs ${(total / 1024).toFixed(0)} KiB in history, largest payload ${(largest / 1024).toFixed(0)} KiB (Temporal's limit 2 MiB)`,
  );
  console.log(JSON.stringify({ arms, reasoningBytes, steps, largest, total, runs: runs.length }));
} finally {
  await h.close();
}
