// anthropic/ models through the Messages API (scripted Anthropic server, real dev server and
// worker): streamed, prompt cache read call after call, costs at list prices, 529 retried, thinking
// kept and sent back; and an OpenAI-compatible conversation streamed with usage and capped output.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { startScriptedModel, countdownScript, type RecordedRequest, type ScriptedModel } from '../../src/testing/scripted-model.js';
import type { ActionEvent, ConversationState } from '../../src/core/types.js';
import { startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

let h: Harness;
let worker: WorkerProcess;
let openai: ScriptedModel;
before(async () => {
  h = await startHarness({ name: 'anthropic', api: 'anthropic', script: countdownScript({ delayMs: 0 }) });
  worker = await h.startWorker();
  openai = await startScriptedModel(countdownScript({ delayMs: 0 }));
});
after(async () => {
  await openai?.close();
  await h?.close();
});

const agent = (llm: LLM = new LLM({})) => new Agent({ llm, tools: ['terminal', 'file_editor', 'task_tracker'] });

/**
 * How many different prompts the model was asked: a call the worker makes again on a busy machine
 * (a retry after a lost attempt) sends the same prompt, and is not another step.
 */
const prompts = (requests: RecordedRequest[]) => new Set(requests.map((r) => JSON.stringify(r.body.messages))).size;

async function countdown(llm?: LLM): Promise<{ final: ConversationState; requests: RecordedRequest[]; conversation: Conversation }> {
  const from = h.model.requests.length;
  const conversation = await Conversation.create(h.client, { agent: agent(llm), workspace: await h.workspace() });
  await conversation.sendMessage('Write the numbers 100 down to 1 into countdown.txt.');
  const final = await conversation.run().then(() => conversation.state());
  return { final, requests: h.model.requests.slice(from), conversation };
}

// claude-sonnet-4-6's list prices, USD per million tokens: input, cache write (5 min), cache read, output.
const SONNET = { input: 3, write: 3.75, read: 0.3, output: 15 };

test('ten tool steps streamed through the Messages API: ≥ 60 % of prompt tokens read from the cache, cost at list prices', async () => {
  const { final, requests } = await countdown();
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const ok = requests.filter((r) => r.status === 200);
  assert.equal(prompts(ok), 11, 'ten tool steps and the answer');
  for (const r of ok) {
    assert.equal(r.api, 'anthropic');
    const raw = r.raw as { stream?: boolean; max_tokens?: number; model: string };
    assert.equal(raw.stream, true);
    assert.equal(raw.model, 'claude-sonnet-4-6');
    assert.ok((raw.max_tokens ?? 0) > 0 && (raw.max_tokens ?? 0) <= 32_000, 'output capped');
  }
  const sum = (k: string) => ok.reduce((n, r) => n + (r.usage?.[k] ?? 0), 0);
  const read = sum('cache_read_input_tokens');
  const write = sum('cache_creation_input_tokens');
  const fresh = sum('input_tokens');
  const prompt = read + write + fresh;
  const m = final.metrics;
  assert.equal(m.promptTokens, prompt);
  assert.equal(m.cacheReadTokens, read);
  assert.equal(m.cacheWriteTokens, write);
  assert.equal(m.completionTokens, sum('output_tokens'));
  // The CONTRACT's names, as `faheem status --json` prints them.
  const printed = JSON.parse((await h.cli(['status', final.id, '--json'])).stdout) as { metrics: Record<string, number> };
  assert.equal(printed.metrics.cacheReadTokens, read);
  assert.equal(printed.metrics.cacheWriteTokens, write);
  assert.ok(read / prompt >= 0.6, `cache-read share ${(read / prompt).toFixed(3)}`);
  const listCost = ok.reduce((c, r) => {
    const u = r.usage!;
    return (
      c +
      ((u.input_tokens ?? 0) * SONNET.input +
        (u.cache_creation_input_tokens ?? 0) * SONNET.write +
        (u.cache_read_input_tokens ?? 0) * SONNET.read +
        (u.output_tokens ?? 0) * SONNET.output) /
        1e6
    );
  }, 0);
  assert.ok(Math.abs(m.accumulatedCost - listCost) < 1e-9, `accumulatedCost ${m.accumulatedCost} vs ${listCost}`);
  assert.ok(
    m.calls?.every((c) => c.model === 'claude-sonnet-4-6'),
    'each call names the model that answered',
  );
  assert.equal(final.model, 'anthropic/claude-sonnet-4-6', 'status names the model as the worker does, even when only the worker set it');
  console.log(`cache-read share ${((100 * read) / prompt).toFixed(1)} % of ${prompt} prompt tokens; cost $${m.accumulatedCost.toFixed(6)}`);
});

test('a 529 (overloaded) is retried and the conversation completes', async () => {
  let overloaded = 0;
  const script = countdownScript({ delayMs: 0 });
  h.model.setScript((r) => (overloaded++ < 2 ? { status: 529, error: 'Overloaded' } : script(r)));
  try {
    const { final, requests } = await countdown();
    assert.equal(final.status, 'finished', final.lastError ?? '');
    assert.deepEqual(
      requests.slice(0, 3).map((r) => r.status),
      [529, 529, 200],
    );
  } finally {
    h.model.setScript(countdownScript({ delayMs: 0 }));
  }
});

test('an OpenAI-compatible conversation is streamed with usage, and every call caps its output', async () => {
  const from = openai.requests.length;
  const conversation = await Conversation.create(h.client, {
    agent: agent(new LLM({ model: 'openai/gpt-4o-mini', baseUrl: openai.baseUrl })),
    workspace: await h.workspace(),
  });
  await conversation.sendMessage('Write the numbers 100 down to 1 into countdown.txt.');
  const final = await conversation.run().then(() => conversation.state());
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const requests = openai.requests.slice(from);
  assert.equal(prompts(requests), 11);
  for (const r of requests) {
    assert.equal(r.body.stream, true);
    assert.deepEqual(r.body.stream_options, { include_usage: true });
    assert.ok((r.body.max_tokens ?? 0) > 0, 'output capped');
  }
  assert.equal(final.metrics.promptTokens, 100 * 11, 'usage from the stream');
});

test('a reply whose tool call the output cap cut is told to the model and the conversation goes on', async () => {
  let cut = false;
  const script = countdownScript({ delayMs: 0 });
  h.model.setScript((r) => {
    if (!cut) {
      cut = true;
      return {
        content: 'I will now write a very long',
        toolCalls: [{ name: 'terminal', arguments: '{"command": "seq 100 -1 9' }],
        truncated: true,
      };
    }
    return script(r);
  });
  try {
    const { final, requests, conversation } = await countdown();
    assert.equal(final.status, 'finished', final.lastError ?? '');
    assert.match(JSON.stringify(requests[1]!.body.messages), /cut off: it reached the maximum number of output tokens/);
    assert.ok((await conversation.events()).some((e) => e.kind === 'action' && e.truncated));
    assert.ok(final.metrics.calls?.[0]?.truncated);
  } finally {
    h.model.setScript(countdownScript({ delayMs: 0 }));
  }
});

test('a pause aborts a Messages call mid-stream; resume finishes', async () => {
  // The reply after two steps opens its stream and is held at the gate 'mid-stream': only the pause ends it.
  const script = countdownScript({ delayMs: 0, gates: { 2: 'mid-stream' } });
  h.model.setScript(script);
  try {
    const from = h.model.requests.length;
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace() });
    await conversation.sendMessage('Write the numbers 100 down to 1 into countdown.txt.');
    await conversation.resume();
    const slow = await h.model.reached('mid-stream');
    assert.ok(h.model.requests.indexOf(slow) >= from);
    await conversation.pause();
    await waitFor('the request aborted', () => slow.aborted);
    assert.equal(h.model.held('mid-stream').length, 0);
    h.model.setScript(countdownScript({ delayMs: 0 }));
    const final = await conversation.run().then(() => conversation.state());
    assert.equal(final.status, 'finished', final.lastError ?? '');
  } finally {
    h.model.setScript(countdownScript({ delayMs: 0 }));
  }
});

test('a retired model is warned about once on the worker, with its replacement', async () => {
  h.model.setScript(() => ({ content: 'ok' }));
  try {
    for (let i = 0; i < 2; i++) {
      const conversation = await Conversation.create(h.client, {
        agent: agent(new LLM({ model: 'anthropic/claude-sonnet-4-5-20250929' })),
        workspace: await h.workspace(),
      });
      await conversation.sendMessage('hi');
      assert.equal((await conversation.run()).status, 'finished');
    }
    const warnings = worker
      .output()
      .split('\n')
      .filter((l) => l.includes('claude-sonnet-4-5-20250929 was retired'));
    assert.equal(warnings.length, 1, worker.output());
    assert.match(warnings[0]!, /use claude-sonnet-4-6 instead/);
  } finally {
    h.model.setScript(countdownScript({ delayMs: 0 }));
  }
});

test('with LLM_REASONING_EFFORT=low every call carries thinking, sent back on each tool-use continuation', async () => {
  await worker.kill();
  worker = await h.startWorker({ LLM_REASONING_EFFORT: 'low' });
  const { final, requests, conversation } = await countdown();
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const ok = requests.filter((r) => r.status === 200);
  assert.equal(prompts(ok), 11);
  assert.equal(requests.length, ok.length, 'no call refused (a dropped thinking block would be a 400)');
  for (const r of ok) {
    const raw = r.raw as { thinking?: { type: string; budget_tokens: number }; max_tokens: number };
    assert.equal(raw.thinking?.type, 'enabled');
    assert.ok(raw.thinking.budget_tokens >= 1024 && raw.thinking.budget_tokens < raw.max_tokens);
  }
  const actions = (await conversation.events()).filter((e): e is ActionEvent => e.kind === 'action');
  assert.equal(actions.length, 10);
  assert.ok(
    actions.every((a) => a.reasoning?.[0]?.type === 'thinking'),
    'thinking kept on each action',
  );
});
