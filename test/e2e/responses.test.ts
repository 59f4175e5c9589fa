// openai/ models through OpenAI's Responses API (scripted Responses server, real dev server and
// workers): reasoning items kept on the events and sent back after every tool call, through a worker
// killed mid-conversation, continue-as-new, condensation, rewind and fork; the API's 400s as the
// conversation's error; cached tokens and cost at list prices; a reply cut by the output cap.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { forkConversation } from '../../src/time-travel/fork.js';
import { countdownScript, type RecordedRequest, type Script } from '../../src/testing/scripted-model.js';
import type { ScriptedResponses } from '../../src/testing/scripted-responses.js';
import type { LiveDelta } from '../../src/live/types.js';
import type { ActionEvent, ConversationEvent } from '../../src/core/types.js';
import { startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

let h: Harness;
let worker: WorkerProcess;
const WORKER_ENV = { LLM_REASONING_EFFORT: 'low' };
before(async () => {
  h = await startHarness({ name: 'responses', api: 'responses', script: countdownScript({ delayMs: 0 }) });
  worker = await h.startWorker(WORKER_ENV);
});
after(async () => h?.close());

const server = () => h.model as ScriptedResponses;
const agent = (llm = new LLM({})) => new Agent({ llm, tools: ['terminal', 'file_editor', 'task_tracker'] });
const countdown = Array.from({ length: 100 }, (_, i) => String(100 - i));
type Raw = {
  store?: boolean;
  include?: string[];
  reasoning?: unknown;
  prompt_cache_key?: string;
  input: { type?: string; id?: string; encrypted_content?: string }[];
};
const raw = (r: RecordedRequest) => r.raw as Raw;
const count = (r: RecordedRequest, type: string) => raw(r).input.filter((i) => i.type === type).length;

// gpt-5.5's list prices, USD per million tokens (@pydantic/genai-prices): input, cached input, output.
const GPT55 = { input: 5, cached: 0.5, output: 30 };

test('a ten-step countdown with reasoning, a worker killed mid-conversation and continue-as-new: no 400, reasoning sent back every step, cost at list prices', async () => {
  // The model holds its sixth reply until the test has killed the worker that asked for it.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const script = countdownScript({ delayMs: 0 });
  let held = false;
  server().setScript(async (r) => {
    if (r.body.messages.filter((m) => m.role === 'tool').length === 5 && !held) {
      held = true;
      await gate;
    }
    return script(r);
  });
  const from = h.model.requests.length;
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace,
    firstMessage: 'Write the numbers 100 down to 1 into countdown.txt.',
    run: true,
    continueAsNewEverySteps: 3,
  });
  try {
    await waitFor('the sixth model call held', () => held, 60_000);
    await worker.kill('SIGKILL');
    worker = await h.startWorker(WORKER_ENV);
  } finally {
    release();
  }
  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  assert.deepEqual((await readFile(path.join(workspace, 'countdown.txt'), 'utf8')).trim().split('\n'), countdown);

  const requests = h.model.requests.slice(from);
  assert.equal(requests.filter((r) => r.status !== undefined && r.status >= 400).length, 0, 'no request refused');
  const ok = requests.filter((r) => r.status === 200);
  assert.equal(ok.length, 11, 'ten tool steps and the answer');
  for (const r of ok) {
    const body = raw(r);
    assert.equal(body.store, false);
    assert.deepEqual(body.include, ['reasoning.encrypted_content']);
    assert.deepEqual(body.reasoning, { effort: 'low', summary: 'auto' });
    assert.equal(body.prompt_cache_key, conversation.id);
    // Every earlier step's reasoning item goes back, before its function call.
    assert.equal(count(r, 'reasoning'), count(r, 'function_call'), `request ${r.index}`);
  }
  assert.equal(count(ok[10]!, 'reasoning'), 10, 'the last request carries all ten reasoning items');

  // Usage and cost: the metrics are the server's counts, at list prices.
  const sum = (k: string) => ok.reduce((n, r) => n + (r.usage?.[k] ?? 0), 0);
  const m = final.metrics;
  assert.equal(m.promptTokens, sum('input_tokens'));
  assert.equal(m.cacheReadTokens, sum('cached_tokens'));
  assert.equal(m.completionTokens, sum('output_tokens'));
  assert.ok(m.cacheReadTokens > 0, 'the prompt cache was read');
  const list =
    ((sum('input_tokens') - sum('cached_tokens')) * GPT55.input +
      sum('cached_tokens') * GPT55.cached +
      sum('output_tokens') * GPT55.output) /
    1e6;
  assert.ok(Math.abs(m.accumulatedCost - list) < 1e-9, `accumulatedCost ${m.accumulatedCost} vs ${list}`);

  // Summaries are thinking: on the events, in `faheem events`.
  const events = await conversation.events();
  const actions = events.filter((e): e is ActionEvent => e.kind === 'action');
  assert.ok(actions.every((a) => a.reasoning?.[0]?.type === 'openai_reasoning' && a.itemId?.startsWith('fc_')));
  const printed = (await h.cli(['events', conversation.id])).stdout;
  assert.match(printed, /thinking: Step \d+: looking at what the last result says/);
  assert.doesNotMatch(printed, /gAAAAB/, 'encrypted content is not shown');
});

test('a dropped reasoning item: the conversation ends in error with the API 400', async () => {
  server().setScript(countdownScript({ delayMs: 0 }));
  server().dropNextReasoning();
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Write the numbers 100 down to 1 into countdown.txt.',
    run: true,
  });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'error');
  assert.match(
    final.lastError ?? '',
    /HTTP 400 .*Item 'fc_scripted_\d+_0' of type 'function_call' was provided without its required 'reasoning' item: 'rs_scripted_\d+'/,
  );
  const errors = (await conversation.events()).filter((e) => e.kind === 'error');
  assert.ok(errors.some((e) => e.kind === 'error' && /required 'reasoning' item/.test(e.message)));
});

test('chat completions for a reasoning model with tools: error with the API message, and one worker warning naming LLM_WIRE_API', async () => {
  const llm = new LLM({ model: 'openai/gpt-5.6', wireApi: 'chat' });
  const conversation = await Conversation.create(h.client, {
    agent: agent(llm),
    workspace: await h.workspace(),
    firstMessage: 'hi',
    run: true,
  });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'error');
  assert.match(
    final.lastError ?? '',
    /Function tools with reasoning_effort are not supported for gpt-5\.6 in \/v1\/chat\/completions\. To use function tools, use \/v1\/responses/,
  );
  await waitFor('the warning', () => worker.output().includes('LLM_WIRE_API=responses'));
  assert.equal(worker.output().split('LLM_WIRE_API=responses').length - 1, 1, 'said once');
  assert.doesNotMatch(final.lastError ?? '', new RegExp(h.env.LLM_API_KEY ?? 'no-key'), 'key masked');
});

test('a text reply cut by the output cap ends the run, marked truncated; cut tool calls twice in a row are stuck', async () => {
  server().setScript(() => ({ content: 'I will now write a very long', truncated: true }));
  let from = h.model.requests.length;
  const cut = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: 'Talk.', run: true });
  let final = await cut.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  assert.equal(h.model.requests.length - from, 1, 'not asked to go on');
  assert.ok((await cut.events()).some((e) => e.kind === 'message' && e.source === 'agent' && e.truncated));

  server().setScript(() => ({ toolCalls: [{ name: 'terminal', arguments: '{"command": "seq 1 100000000' }], truncated: true }));
  from = h.model.requests.length;
  const stuck = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: 'Count.', run: true });
  final = await stuck.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(final.status, 'stuck');
  assert.match(final.lastError ?? '', /cut by the output-token cap twice in a row.*LLM_MAX_OUTPUT_TOKENS/);
  const requests = h.model.requests.slice(from);
  assert.equal(requests.length, 2, 'one retry');
  assert.match(JSON.stringify(requests[1]!.body.messages), /cut off: it reached the maximum number of output tokens/);
  const events = await stuck.events();
  assert.equal(events.filter((e) => e.kind === 'action').length, events.filter((e) => e.kind === 'observation').length);
});

test('reasoning follows condensation, rewind and fork: every later request is accepted', async () => {
  let steps = 0;
  const step = (n: number) => ({ toolCalls: [{ name: 'terminal', arguments: { command: `echo step ${n} >> steps.txt` } }] });
  const script: Script = (req) => {
    const messages = req.body.messages;
    if (String(messages[0]?.content ?? '').startsWith('You condense')) return { content: `summary of the work so far (${steps} steps)` };
    // After a rewind or in the fork: one more step, then done (condensation shortens the prompt, so count here).
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    if (String(messages[lastUser]?.content ?? '').startsWith('Go on')) {
      return messages.slice(lastUser + 1).some((m) => m.role === 'tool') ? { content: 'Finished.' } : step(steps + 1);
    }
    if (steps >= 8) return { content: 'Finished.' };
    steps++;
    return step(steps);
  };
  server().setScript(script);
  const from = h.model.requests.length;
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Write eight steps.',
    run: true,
    continueAsNewEverySteps: 4,
    condenser: { maxEvents: 12, maxPromptTokens: 1_000_000_000, keepFirst: 2 },
  });
  let final = await conversation.waitUntil((s) => s.status !== 'running', 100, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const events: ConversationEvent[] = await conversation.events();
  assert.ok(
    events.some((e) => e.kind === 'condensation'),
    'condensed',
  );

  // Rewind to step 3 and go on: the prompt holds steps 1..3 with their reasoning.
  await conversation.rewind(3);
  const rewoundAt = h.model.requests.length;
  await conversation.sendMessage('Go on.');
  final = await conversation.run().then(() => conversation.state());
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const afterRewind = h.model.requests.slice(rewoundAt).filter((r) => raw(r).prompt_cache_key === conversation.id);
  assert.ok(afterRewind.length > 0);

  // A fork at step 2: its own prompt cache key, its steps' reasoning sent back.
  const fork = await forkConversation(h.client, conversation.id, { at: 2 });
  const forkedAt = h.model.requests.length;
  await fork.sendMessage('Go on from here.');
  const forked = await fork.run().then(() => fork.state());
  assert.equal(forked.status, 'finished', forked.lastError ?? '');
  const forkRequests = h.model.requests.slice(forkedAt).filter((r) => raw(r).prompt_cache_key === fork.id);
  assert.ok(forkRequests.length > 0);
  assert.ok(count(forkRequests[0]!, 'reasoning') >= 1, 'the forked steps carry their reasoning');

  const all = h.model.requests.slice(from);
  assert.deepEqual(
    all.filter((r) => r.status !== 200).map((r) => `${r.status}`),
    [],
    'every request accepted',
  );
  for (const r of all)
    if (raw(r).input.some((i) => i.type === 'function_call')) assert.equal(count(r, 'reasoning'), count(r, 'function_call'));
});

test('live lines: reasoning summaries as thinking_delta, output text as model_delta', async () => {
  const THINKING = 'First I look at the directory, then I answer in one sentence.';
  const REPLY = 'The workspace is empty, so there is nothing to list yet.';
  // The reply is held after its first word until the follower has a line: lines go out only once
  // the worker knows someone follows, which on a busy machine can be after a short reply ended.
  server().setScript((r) =>
    r.body.messages.some((m) => m.role === 'tool')
      ? { content: REPLY, thinking: THINKING, wordByWord: true, gate: 'live', gateAfter: 1 }
      : { thinking: THINKING, toolCalls: [{ name: 'terminal', arguments: { command: 'ls' } }] },
  );
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'List.',
    run: true,
  });
  const seen: (ConversationEvent | LiveDelta)[] = [];
  for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) {
    seen.push(item);
    if ('live' in item && item.kind === 'model_delta' && item.toolCallId === undefined) server().release('live');
  }
  const live = seen.filter((x): x is LiveDelta => 'live' in x);
  const thinking = live.filter((d) => d.kind === 'thinking_delta');
  assert.ok(thinking.length > 0, 'summaries stream as thinking');
  assert.ok(
    thinking
      .map((d) => d.text)
      .join('')
      .includes(THINKING),
  );
  const words = live.filter((d) => d.kind === 'model_delta');
  // (The first step's tool-call arguments stream as lines of their own too.)
  assert.ok(
    words
      .map((d) => d.text)
      .join('')
      .endsWith(REPLY),
  );
  // (Their order against the events is live.test.ts's to check.)
  assert.ok(
    seen.some((x) => !('live' in x) && x.kind === 'message' && x.source === 'agent' && x.text === REPLY),
    'the reply recorded as well',
  );
  // A final reply's summaries are kept on its event, so `events`, the console and ACP show them later.
  const final = (await conversation.events()).find((e) => e.kind === 'message' && e.source === 'agent' && e.text === REPLY);
  assert.ok(final?.kind === 'message' && final.thinking?.includes(THINKING), JSON.stringify(final));
});
