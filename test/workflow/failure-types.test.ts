// The workflow reads a failure's type from the table (src/core/failure-types.ts) through the activity's
// failure: ContextWindowExceeded makes it condense and ask once more; any other type ends the run in
// error with the provider's words. Real workflow, real server and Workers; our activities stubbed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE } from '../../src/core/failure-types.js';
import type { CondensationEvent, ErrorEvent } from '../../src/core/types.js';
import { closeSignal } from '../../src/conversation/workflow/messages.js';
import { startWorkflowEnv, type WorkflowEnv } from '../support/workflow-env.js';

let env: WorkflowEnv;
before(async () => {
  env = await startWorkflowEnv('workflow-failure-types');
});
after(async () => env?.close());

const think = (n: number) => ({ toolCalls: [{ name: 'think', arguments: { thought: `t${n}` } }] });

describe('failure types in the loop', () => {
  test('ContextWindowExceeded: the workflow condenses and asks once more, and the run finishes', async () => {
    let calls = 0;
    let thrown = 0;
    const c = await env.start({
      options: { condenser: { maxEvents: 1_000, maxPromptTokens: 1_000_000_000, keepFirst: 2 } },
      // Too long from the fifth call on, until a condensation shortens what the call covers.
      model: (_input, events) => {
        calls++;
        if (events.some((e) => e.kind === 'condensation')) return { content: 'done after condensing' };
        if (calls <= 4) return think(calls);
        thrown++;
        throw ApplicationFailure.nonRetryable('prompt is too long: 210000 tokens > 200000 maximum', FAILURE.ContextWindowExceeded);
      },
    });
    const final = await c.until('finished', (s) => s.status === 'finished', 60_000);
    assert.equal(thrown, 1, 'asked once more, after condensing');
    assert.equal(final.finalMessage, 'done after condensing');
    const events = await c.events();
    const note = events.find((e): e is ErrorEvent => e.kind === 'error');
    assert.match(note?.message ?? '', /too long for the model's context window; condensing and trying once more/);
    assert.equal(events.filter((e): e is CondensationEvent => e.kind === 'condensation').length, 1);
    assert.equal(final.lastError ?? null, null);
    await c.handle.signal(closeSignal);
  });

  test('another failure type (ModelRequestRejected): no condensation, the run ends in error with its words', async () => {
    const c = await env.start({
      model: () => {
        throw ApplicationFailure.nonRetryable('401 invalid x-api-key', FAILURE.ModelRequestRejected);
      },
    });
    const final = await c.until('error', (s) => s.status === 'error', 60_000);
    assert.match(final.lastError ?? '', /401 invalid x-api-key/);
    assert.equal((await c.events()).filter((e) => e.kind === 'condensation').length, 0);
    await c.handle.signal(closeSignal);
  });
});
