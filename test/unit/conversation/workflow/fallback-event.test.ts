// A call that moved along its fallback chain: its event, its metrics entry, the Web UI's last-call
// line; and the SDK's, the CLI's and the team API's checks of a chain.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelAllowed } from '../../../../src/api/start.js';
import { LLM } from '../../../../src/client/client.js';
import { formatEvent } from '../../../../src/cli/format.js';
import { emptyMetrics, type ConversationEvent } from '../../../../src/core/types.js';
import { detailsText } from '../../../../src/conversation/workflow/details.js';
import { addUsage, fallbackEvent } from '../../../../src/conversation/workflow/reply.js';

const usage = { promptTokens: 10, completionTokens: 2, cacheReadTokens: 0 };
const skipped = [{ model: 'openai/gpt-4o', reason: 'HTTP 529 from https://api.openai.com/v1: overloaded' }];

test('a reply from a fallback is an event and names the models passed over in its metrics; one that did not move is neither', () => {
  assert.deepEqual(fallbackEvent({ answeredBy: 'anthropic/claude-sonnet-4-6', fallbacks: skipped }, 'step'), {
    kind: 'fallback',
    source: 'environment',
    model: 'anthropic/claude-sonnet-4-6',
    skipped,
    call: 'step',
  });
  assert.equal(fallbackEvent({}, 'step'), undefined);
  assert.equal(fallbackEvent({ answeredBy: 'x', fallbacks: [] }, 'condense'), undefined);

  const moved = addUsage(emptyMetrics(), { cost: 0.01, usage, latencyMs: 5, model: 'claude-sonnet-4-6', fallbacks: skipped }, 1, 'step');
  assert.deepEqual(moved.calls?.[0]?.fallbacks, ['openai/gpt-4o']);
  assert.equal(moved.calls?.[0]?.model, 'claude-sonnet-4-6');
  const plain = addUsage(emptyMetrics(), { cost: 0.01, usage, latencyMs: 5, model: 'gpt-4o' }, 1, 'step');
  assert.ok(!('fallbacks' in plain.calls![0]!), 'results without them look as they did');

  const details = detailsText({
    status: 'running',
    lastError: null,
    iterations: 1,
    maxIterations: 10,
    runNumber: 1,
    lastAction: undefined,
    waitingForHost: null,
    pendingMessages: 0,
    children: [],
    parentId: undefined,
    metrics: moved,
  });
  assert.match(details, /\*\*Last call:\*\* claude-sonnet-4-6 · fallback after openai\/gpt-4o ·/);
});

test('the CLI prints a fallback event with each model passed over and why', () => {
  const event = {
    ...fallbackEvent({ answeredBy: 'anthropic/claude-sonnet-4-6', fallbacks: skipped }, 'step')!,
    index: 7,
    timestamp: '2026-12-06T12:00:00.000Z',
  } as ConversationEvent;
  const text = formatEvent(event);
  assert.match(text, /reply by fallback anthropic\/claude-sonnet-4-6/);
  assert.match(text, /openai\/gpt-4o: HTTP 529/);
});

test('the SDK takes fallbacks as model names and keeps them in the spec', () => {
  assert.deepEqual(new LLM({ model: 'openai/gpt-4o', fallbacks: [' anthropic/claude-sonnet-4-6'] }).spec.fallbacks, [
    'anthropic/claude-sonnet-4-6',
  ]);
  assert.ok(!('fallbacks' in new LLM({ model: 'openai/gpt-4o', fallbacks: [] }).spec));
  for (const bad of [['a,b'], [''], 'anthropic/x', Array.from({ length: 8 }, (_, i) => `m${i}`)]) {
    assert.throws(() => new LLM({ fallbacks: bad as string[] }), /LLM: (fallbacks must be model names|at most 7 fallbacks)/);
  }
});

test('the team API allows a chain only when the operator allows each of its models', () => {
  const allowed = ['openai/gpt-4o', 'anthropic/claude-sonnet-4-6,openrouter/x'];
  assert.ok(modelAllowed(allowed, 'openai/gpt-4o'));
  assert.ok(modelAllowed(allowed, 'anthropic/claude-sonnet-4-6,openrouter/x'), 'as given');
  assert.ok(modelAllowed(allowed, 'openrouter/x'), 'each model of an allowed chain');
  assert.ok(modelAllowed(allowed, 'openai/gpt-4o, openrouter/x'));
  assert.ok(!modelAllowed(allowed, 'openai/gpt-4o,evil/model'));
  assert.ok(!modelAllowed(allowed, 'evil/model'));
  assert.ok(!modelAllowed(allowed, ' , '));
  assert.ok(!modelAllowed([], 'openai/gpt-4o'));
});
