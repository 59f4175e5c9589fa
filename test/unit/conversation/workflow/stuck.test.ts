// src/conversation/workflow/stuck.ts: stuck detection kept incrementally equals recomputing it over the whole log.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ActionEvent, ConversationEvent, ObservationEvent } from '../../../../src/core/types.js';
import { type NewEvent } from '../../../../src/conversation/workflow/conversation-log.js';
import { detectStuck, StuckWatch } from '../../../../src/conversation/workflow/stuck.js';

/** Stuck detection as it was written before it was kept incrementally: the reference to equal. */
function referenceStuck(events: readonly ConversationEvent[]): string | null {
  let start = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.kind === 'message' && e.source === 'user') {
      start = i + 1;
      break;
    }
  }
  const actions = new Map<string, ActionEvent>();
  const pairs: { action: string; observation: string; isError: boolean }[] = [];
  let agentMessages = 0;
  for (const e of events.slice(start)) {
    if (e.kind === 'action') actions.set(e.toolCallId, e);
    if (e.kind === 'message' && e.source === 'agent') agentMessages++;
    if (e.kind === 'observation') {
      const a = actions.get(e.toolCallId);
      if (!a) continue;
      agentMessages = 0;
      pairs.push({ action: `${a.tool} ${JSON.stringify(a.arguments)}`, observation: (e as ObservationEvent).content, isError: e.isError });
    }
  }
  const last = (n: number) => (pairs.length >= n ? pairs.slice(-n) : null);
  const four = last(4);
  if (four && four.every((p) => p.action === four[0]!.action && p.observation === four[0]!.observation)) return 'four';
  const three = last(3);
  if (three && three.every((p) => p.action === three[0]!.action && p.isError)) return 'three';
  if (agentMessages >= 3) return 'talk';
  const twelve = last(12);
  if (twelve) {
    const [a, b] = twelve;
    if (
      a!.action !== b!.action &&
      twelve.every((p, i) => p.action === (i % 2 === 0 ? a! : b!).action && p.observation === (i % 2 === 0 ? a! : b!).observation)
    )
      return 'alternate';
  }
  return null;
}
const kindOf = (reason: string | null) =>
  reason === null
    ? null
    : reason.includes('4 times')
      ? 'four'
      : reason.includes('3 times in a row')
        ? 'three'
        : reason.includes('talked')
          ? 'talk'
          : 'alternate';

/** A seeded pseudo-random conversation: messages, calls (often repeated), results, noise, condensations. */
function randomEvents(seed: number, n: number, condense = true): NewEvent[][] {
  let x = seed;
  const rand = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)] as T;
  const steps: NewEvent[][] = [];
  for (let i = 0; i < n; i++) {
    const r = rand();
    if (r < 0.05) steps.push([{ kind: 'message', source: 'user', text: 'go on' }]);
    else if (r < 0.12) steps.push([{ kind: 'message', source: 'agent', text: 'hmm' }]);
    else if (r < 0.15) steps.push([{ kind: 'status', source: 'environment', status: 'running' }]);
    else if (r < 0.18 && condense)
      steps.push([{ kind: 'condensation' } as NewEvent]); // filled in by the caller
    else {
      const id = rand() < 0.05 ? 'dup' : `c${i}`; // a model may reuse a call id
      const command = pick(['ls', 'ls', 'pwd', 'make']);
      steps.push([
        { kind: 'action', source: 'agent', tool: 'terminal', toolCallId: id, arguments: { command }, replyId: `r${i}` },
        {
          kind: 'observation',
          source: 'environment',
          tool: 'terminal',
          toolCallId: id,
          content: pick(['a', 'a', 'b']),
          isError: rand() < 0.3,
        },
      ]);
    }
  }
  return steps;
}

describe('stuck detection kept as events come', () => {
  test('equals recomputing it over the whole log, at every step, and rebuilt from a carried log', () => {
    let stuckSeen = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const events: ConversationEvent[] = [];
      const watch = new StuckWatch();
      for (const step of randomEvents(seed, 300, false)) {
        for (const e of step) {
          const full = { ...e, index: events.length, timestamp: '' } as ConversationEvent;
          events.push(full);
          watch.add(full);
        }
        const expected = referenceStuck(events);
        assert.equal(kindOf(watch.check()), expected, `seed ${seed}, event ${events.length}`);
        if (expected) stuckSeen++;
      }
      assert.equal(kindOf(detectStuck(events)), referenceStuck(events));
      assert.equal(kindOf(new StuckWatch(events).check()), kindOf(watch.check()));
    }
    assert.ok(stuckSeen > 20, `the random logs hit stuck patterns (${stuckSeen})`);
  });
});
