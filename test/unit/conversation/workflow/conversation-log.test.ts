// src/conversation/workflow/conversation-log.ts (and the event log's pages): the running counts equal recomputing them
// from the events; the events sent with a model call.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { follow } from '../../../../src/conversation/read-events.js';
import type { ActionEvent, ConversationEvent, ObservationEvent } from '../../../../src/core/types.js';
import { ConversationLog, type NewEvent } from '../../../../src/conversation/workflow/conversation-log.js';
import { compactEvents, eventsPage, EventLog, recentEvents } from '../../../../src/conversation/workflow/event-log.js';
import { condensationRange, isModelEvent, promptEvents } from '../../../../src/conversation/workflow/prompt.js';

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

describe('the conversation log', () => {
  test('its running counts equal recomputing them, through condensations and a carried (compacted) log', () => {
    for (let seed = 1; seed <= 10; seed++) {
      let log = new ConversationLog();
      const all: ConversationEvent[] = [];
      let seen = 0;
      for (const step of randomEvents(seed, 250)) {
        for (const e of step) {
          let event = e;
          if (e.kind === 'condensation') {
            const range = condensationRange(log.held(), 2);
            if (!range) continue;
            event = { kind: 'condensation', source: 'environment', summary: 's', forgottenFrom: range.from, forgottenTo: range.to };
          }
          all.push(log.append(event, `t${all.length}`));
        }
        if (all.length % 7 === 0) seen = all.length; // a model call saw everything so far
        const held = log.held();
        assert.equal(log.promptEvents, promptEvents(held).filter(isModelEvent).length);
        assert.equal(log.pendingMessages(seen), held.filter((e) => e.index >= seen && e.kind === 'message' && e.source === 'user').length);
        assert.equal(
          log.lastAction,
          [...held].reverse().find((e) => e.kind === 'action'),
        );
        assert.equal(kindOf(log.stuckReason()), referenceStuck(held));
        // Now and then the run continues as new: the next run holds only what the model needs.
        if (all.length % 97 === 0) {
          const before = log.held();
          log = new ConversationLog(log.compact());
          assert.deepEqual(promptEvents(log.held()), promptEvents(before), 'the model sees the same prompt');
          assert.equal(log.count, all.length);
        }
      }
      assert.ok(
        all.some((e) => e.kind === 'condensation'),
        'condensed',
      );
    }
  });

  test('events sent with a model call: all of them from the start, the new ones with an anchor, none when large or not held', () => {
    const ev = (index: number, text = `e${index}`) =>
      ({ index, timestamp: `t${index}`, source: 'user', kind: 'message', text }) as ConversationEvent;
    const log = new EventLog([ev(0), ev(1), ev(2), ev(3)]);
    assert.deepEqual(recentEvents(log, 0, 4), { from: 0, events: [ev(0), ev(1), ev(2), ev(3)] });
    assert.deepEqual(recentEvents(log, 2, 4), { from: 2, anchor: { index: 1, timestamp: 't1' }, events: [ev(2), ev(3)] });
    assert.equal(recentEvents(log, 0, 4, 50), undefined, 'over the size limit');
    const gap = new EventLog([ev(0), ev(3), ev(4)]);
    assert.equal(recentEvents(gap, 2, 5), undefined, 'event 2 is not held here');
    // The worker's side: its cache must end where they begin.
    const recent = recentEvents(log, 2, 4)!;
    assert.deepEqual(follow([ev(0), ev(1)], recent), [ev(0), ev(1), ev(2), ev(3)]);
    assert.deepEqual(
      follow([ev(0), ev(1), ev(2)], recent),
      [ev(0), ev(1), ev(2), ev(3)],
      'a cached event from a cancelled call is replaced',
    );
    assert.equal(follow([ev(0)], recent), undefined, 'the cache is behind');
    assert.equal(follow([ev(0), { ...ev(1), timestamp: 'other' }], recent), undefined, 'another history (a reset)');
    assert.equal(follow([], recent), undefined, 'nothing cached');
    assert.deepEqual(follow([ev(9)], recentEvents(log, 0, 2)!), [ev(0), ev(1)], 'from the start: the cache is not needed');
  });

  test('an events page stops at its limit and at about the page size, but holds at least one event', () => {
    const big = (index: number) =>
      ({ index, timestamp: '', source: 'user', kind: 'message', text: 'x'.repeat(300_000) }) as ConversationEvent;
    const small = (index: number) => ({ index, timestamp: '', source: 'user', kind: 'message', text: 'x' }) as ConversationEvent;
    assert.equal(eventsPage([small(0), small(1), small(2)], 2).length, 2);
    assert.equal(eventsPage([big(0), big(1)], 10).length, 1);
    assert.deepEqual(compactEvents([small(0)]), [small(0)]);
  });
});
