// A prompt too long for the model's context window (a 400 from the provider) condenses the
// conversation and asks once more, instead of putting it in error.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, type Harness } from '../support/harness.js';

let overflowed = 0;
function script(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  if (String(messages[0]?.content ?? '').startsWith('You condense')) return { content: 'SUMMARY: four echo commands ran' };
  const tools = messages.filter((m) => m.role === 'tool').length;
  const condensed = messages.some((m) => String(m.content ?? '').includes('SUMMARY: four echo'));
  if (tools >= 4 && !condensed) {
    overflowed++;
    return {
      status: 400,
      error: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    };
  }
  if (condensed) return { content: 'done after condensing' };
  return { toolCalls: [{ name: 'terminal', arguments: { command: `echo step ${tools + 1}` } }] };
}

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'context-overflow', script });
  await h.startWorker();
});
after(async () => h?.close());

test('a context-window overflow condenses and retries once; the conversation finishes', async () => {
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    workspace: await h.workspace(),
    firstMessage: 'echo four times',
    run: true,
    condenser: { maxEvents: 1000, maxPromptTokens: 10_000_000, keepFirst: 1 },
  });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  assert.equal(final.finalMessage, 'done after condensing');
  assert.equal(overflowed, 1, 'asked once more, after condensing');
  const events = await conversation.events();
  assert.ok(events.some((e) => e.kind === 'condensation'));
  assert.ok(events.some((e) => e.kind === 'error' && /too long for the model's context window; condensing/.test(e.message)));
});
