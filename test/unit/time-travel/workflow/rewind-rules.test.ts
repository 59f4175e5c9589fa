// Time travel's pure rules: what leaves the prompt, what compaction keeps, the checkpoint list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConversationEvent } from '../../../../src/core/types.js';
import { compactEvents } from '../../../../src/conversation/workflow/event-log.js';
import { promptEvents } from '../../../../src/conversation/workflow/prompt.js';
import {
  CheckpointList,
  describeSteps,
  lacksPromptEvents,
  liveEvents,
  rewindRefusal,
} from '../../../../src/time-travel/workflow/rewind-rules.js';

const t = '2026-12-01T00:00:00.000Z';
const msg = (index: number, text: string): ConversationEvent => ({ index, timestamp: t, kind: 'message', source: 'user', text });
const rewind = (index: number, dropFrom: number): ConversationEvent => ({
  index,
  timestamp: t,
  kind: 'rewind',
  source: 'user',
  toStep: 0,
  commit: 'a'.repeat(40),
  before: 'b'.repeat(40),
  dropFrom,
  dropTo: index,
  notUndone: '',
});

test('a rewind takes its range out of the prompt; a refused message stays out, also after compaction', () => {
  const events: ConversationEvent[] = [
    msg(0, 'task'),
    msg(1, 'my password is x'),
    {
      index: 2,
      timestamp: t,
      kind: 'checkpoint',
      source: 'environment',
      step: 0,
      commit: 'c'.repeat(40),
      added: 0,
      changed: 0,
      deleted: 0,
    },
    { index: 3, timestamp: t, kind: 'refused', source: 'environment', messageIndex: 1, reason: 'no passwords' },
    msg(4, 'later'),
    rewind(5, 3),
  ];
  assert.deepEqual(
    liveEvents(events).map((e) => e.index),
    [0, 2],
  );
  const carried = compactEvents(events);
  assert.ok(
    carried.some((e) => e.kind === 'refused'),
    'the refusal is carried even inside the rewound range',
  );
  assert.deepEqual(
    promptEvents(carried).map((e) => e.index),
    promptEvents(events).map((e) => e.index),
    'the next run builds the same prompt',
  );
});

test('after a rewind, a missing event the prompt needs is noticed (earlier runs hold it)', () => {
  const held: ConversationEvent[] = [msg(0, 'task'), msg(5, 'after'), rewind(6, 6)];
  assert.equal(lacksPromptEvents(held, 7), true);
  assert.equal(lacksPromptEvents([msg(0, 'a'), msg(1, 'b')], 2), false, 'no rewind: nothing to fetch');
});

test('the checkpoint list: active steps, rewound ones, refusals', () => {
  const list = new CheckpointList();
  for (let step = 0; step <= 5; step++)
    list.add({ step, index: step * 4, time: t, commit: `${step}`.repeat(40), added: 0, changed: 1, deleted: 0 });
  list.rewindTo(2);
  assert.deepEqual(list.restorable(), [0, 1, 2]);
  assert.equal(list.active(4), undefined);
  assert.match(rewindRefusal(4, list, false) ?? '', /step 4 has no checkpoint; steps with one: 0–2/);
  assert.equal(rewindRefusal(1, list, false), undefined);
  assert.match(rewindRefusal(1, list, true) ?? '', /closed/);
  assert.match(rewindRefusal(-1, list, false) ?? '', /whole number/);
  assert.equal(describeSteps([0, 1, 2, 4, 6, 7]), '0–2, 4, 6–7');
});
