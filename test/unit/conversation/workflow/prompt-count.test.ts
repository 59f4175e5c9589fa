// src/conversation/workflow/prompt-count.ts: the condenser's count kept as events come.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

describe("the condenser's count", () => {
  test('kept as events come equals rebuilding the prompt, through condensations', async () => {
    const { PromptCount } = await import('../../../../src/conversation/workflow/prompt-count.js');
    const { promptEvents, isModelEvent } = await import('../../../../src/conversation/workflow/prompt.js');
    const { condensationRange } = await import('../../../../src/conversation/workflow/prompt.js');
    type E = import('../../../../src/core/types.js').ConversationEvent;
    // A seeded pseudo-random log: messages, tool calls and results, status noise, and condensations.
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const events: E[] = [];
    const count = new PromptCount();
    const push = (e: Omit<E, 'index' | 'timestamp'>) => {
      const full = { ...e, index: events.length, timestamp: '' } as E;
      events.push(full);
      count.add(full, (i) => events[i]);
      assert.equal(count.visible, promptEvents(events).filter(isModelEvent).length, `after event ${full.index} (${full.kind})`);
    };
    for (let step = 0; step < 400; step++) {
      const r = rand();
      if (r < 0.1) push({ kind: 'message', source: 'user', text: 'hi' } as never);
      else if (r < 0.15) push({ kind: 'status', source: 'environment', status: 'running' } as never);
      else if (r < 0.2) {
        const range = condensationRange(events, 2);
        if (range)
          push({ kind: 'condensation', source: 'environment', summary: 's', forgottenFrom: range.from, forgottenTo: range.to } as never);
      } else {
        push({ kind: 'action', source: 'agent', tool: 'think', toolCallId: `c${step}`, arguments: {}, replyId: `r${step}` } as never);
        push({ kind: 'observation', source: 'environment', tool: 'think', toolCallId: `c${step}`, content: 'ok', isError: false } as never);
      }
    }
    assert.ok(
      events.some((e) => e.kind === 'condensation'),
      'the log was condensed',
    );
    assert.equal(new PromptCount(events).visible, count.visible, 'rebuilt from a carried log');
    // A carried (compacted) log gives the model the same prompt, and the same count.
    const { compactEvents } = await import('../../../../src/conversation/workflow/event-log.js');
    const carried = compactEvents(events);
    assert.ok(carried.length < events.length / 2, `carried ${carried.length} of ${events.length}`);
    assert.deepEqual(promptEvents(carried), promptEvents(events));
    assert.equal(new PromptCount(carried).visible, count.visible);
  });
});
