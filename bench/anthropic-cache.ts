// Prompt caching, measured (figures, not asserts): `npm run bench:cache`. Two anthropic/
// conversations through the Messages API against the scripted Anthropic server, which reads a
// prefix from its cache only when an earlier request wrote exactly those bytes (breakpoints as
// sent, the API's minimum length and 20-block lookback): the seed's countdown (10 tool steps), and
// a 50-step one whose context grows from about 8k to 60k tokens. For each: prompt tokens, the share
// read from the cache, and the cost with caching against the same tokens all billed as fresh input.
import { Agent, Conversation, LLM } from '../src/client/client.js';
import { costOf } from '../src/models/prices.js';
import { countdownScript, type Script } from '../src/testing/scripted-model.js';
import type { Metrics } from '../src/core/types.js';
import { startHarness, type Harness } from '../test/support/harness.js';

const MODEL = 'claude-sonnet-4-6';

interface CacheFigures {
  name: string;
  calls: number;
  promptTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  readShare: number;
  firstPrompt: number;
  lastPrompt: number;
  costCached: number;
  costUncached: number;
  seconds: number;
}

/** 50 steps, each printing ~4.4 KB (about 1.1k tokens), after a ~28 KB task: ~8k → ~60k tokens. */
function growingScript(steps: number): Script {
  return (req) => {
    const done = req.body.messages.filter((m) => m.role === 'tool').length;
    if (done >= steps) return { content: `Read all ${steps} parts.` };
    return { toolCalls: [{ name: 'terminal', arguments: { command: `echo part ${done + 1}; head -c 4400 /dev/zero | tr '\\0' x` } }] };
  };
}

async function measure(h: Harness, name: string, script: Script, message: string): Promise<CacheFigures> {
  h.model.setScript(script);
  const from = h.model.requests.length;
  const t0 = performance.now();
  const agent = new Agent({ llm: new LLM({ model: `anthropic/${MODEL}` }), tools: ['terminal', 'file_editor', 'task_tracker'] });
  const conversation = await Conversation.create(h.client, { agent, workspace: await h.workspace(), maxIterations: 100 });
  await conversation.sendMessage(message);
  const final = await conversation.run().then(() => conversation.state());
  if (final.status !== 'finished') throw new Error(`${name} ended ${final.status}: ${final.lastError}`);
  const m: Metrics = final.metrics;
  const prompts = h.model.requests
    .slice(from)
    .filter((r) => r.status === 200)
    .map((r) => Object.values(r.usage ?? {}).reduce((a, b) => a + b, 0) - (r.usage?.output_tokens ?? 0));
  const uncached =
    costOf(
      MODEL,
      { promptTokens: m.promptTokens, completionTokens: m.completionTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
      {},
      'anthropic',
    ) ?? NaN;
  return {
    name,
    calls: m.llmCalls,
    promptTokens: m.promptTokens,
    cacheReadTokens: m.cacheReadTokens,
    cacheWriteTokens: m.cacheWriteTokens,
    readShare: m.cacheReadTokens / m.promptTokens,
    firstPrompt: prompts[0] ?? 0,
    lastPrompt: prompts[prompts.length - 1] ?? 0,
    costCached: m.accumulatedCost,
    costUncached: uncached,
    seconds: (performance.now() - t0) / 1000,
  };
}

const h = await startHarness({ name: 'bench-cache', api: 'anthropic', script: countdownScript({ delayMs: 0 }), record: false });
try {
  await h.startWorker();
  const rows = [
    await measure(h, 'countdown (10 tool steps)', countdownScript({ delayMs: 0 }), 'Write the numbers 100 down to 1 into countdown.txt.'),
    await measure(
      h,
      '50 steps, 8k → 60k tokens',
      growingScript(50),
      `Read the spec below, then print its 50 parts one by one.\n\n${'spec line: keep every number. '.repeat(950)}`,
    ),
  ];
  console.log(`model anthropic/${MODEL} (list prices from @pydantic/genai-prices), scripted Anthropic server`);
  console.log(
    '| conversation | calls | prompt tokens (first → last call) | read from cache | written | cost with caching | without | saving |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.calls} | ${r.promptTokens.toLocaleString('en')} (${r.firstPrompt.toLocaleString('en')} → ${r.lastPrompt.toLocaleString('en')}) | ${(100 * r.readShare).toFixed(1)} % | ${r.cacheWriteTokens.toLocaleString('en')} | $${r.costCached.toFixed(4)} | $${r.costUncached.toFixed(4)} | ${(r.costUncached / r.costCached).toFixed(1)}× cheaper |`,
    );
  }
  console.log(JSON.stringify(rows));
} finally {
  await h.close();
}
