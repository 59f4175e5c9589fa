// Who did what: the actor's checks and text (src/client/actors.ts), its header (src/client/actor-header.ts), the
// client's actingAs and interceptor (src/client/acting.ts), the workflow's inbound interceptor and store
// (src/conversation/workflow/interceptors.ts, src/conversation/workflow/actor.ts), ConversationRun stamping `by` on the
// events a call records, and how the CLI, the console and the Web UI's details show it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { WorkflowSignalInput, WorkflowStartInput, WorkflowStartUpdateInput } from '@temporalio/client';
import type { SignalInput, UpdateInput, WorkflowExecuteInput } from '@temporalio/workflow';
import { actingAs, actorInterceptor, currentActor as clientActor } from '../../../src/client/acting.js';
import { ACTOR_HEADER, actorFromHeaders, encodeActor } from '../../../src/client/actor-header.js';
import { actorProblem, actorText, checkedActor } from '../../../src/client/actors.js';
import { formatEvent } from '../../../src/cli/format.js';
import { InvalidRequestError } from '../../../src/core/errors.js';
import type { ConversationEvent, ConversationInput } from '../../../src/core/types.js';
import { emptyMetrics } from '../../../src/core/types.js';
import { actingIn, currentActor, startActor } from '../../../src/conversation/workflow/actor.js';
import { detailsText } from '../../../src/conversation/workflow/details.js';
import { actorInbound } from '../../../src/conversation/workflow/interceptors.js';
import { checkMessageText } from '../../../src/conversation/workflow/messages.js';
import { close, decide, message, pause, record, requestRun, start } from '../../../src/conversation/workflow/runner/commands.js';
import { ConversationRun, lastChangeOf, type RunEnvironment } from '../../../src/conversation/workflow/runner/conversation-run.js';
import { buildBlocks, emptyTranscript, applyItem } from '../../../console-page/transcript.js';

const acme = { tenant: 'acme', key: 'ci-bot' };
const globex = { tenant: 'globex', key: '3f9a0c1d2e4b' };
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

describe('the actor and its header', () => {
  test('a tenant name and a short printable key id or name is an actor; only those two fields are kept', () => {
    assert.deepEqual(checkedActor({ ...acme, extra: 'dropped' }), acme);
    assert.deepEqual(checkedActor({ tenant: 'a.b_c-1', key: 'key with spaces: fine' }), {
      tenant: 'a.b_c-1',
      key: 'key with spaces: fine',
    });
    assert.equal(actorText(acme), 'acme/ci-bot');
  });

  test('anything else is no actor, and says why', () => {
    for (const bad of [
      undefined,
      null,
      'acme/ci-bot',
      [acme],
      { tenant: 'acme' },
      { key: 'ci-bot' },
      { tenant: 'Acme', key: 'k' },
      { tenant: 'a..b', key: 'k' },
      { tenant: 'acme', key: '' },
      { tenant: 'acme', key: 'x'.repeat(101) },
      { tenant: 'acme', key: 'line\nbreak' },
      { tenant: 'acme', key: 'esc\u001b[31m' },
      { tenant: 'acme', key: 'back`quote' },
      { tenant: 'acme', key: 7 },
    ]) {
      assert.equal(checkedActor(bad), undefined, JSON.stringify(bad));
      assert.ok(actorProblem(bad), JSON.stringify(bad));
    }
    assert.equal(actorProblem(acme), undefined);
  });

  test('the header goes as JSON and comes back as the same actor', () => {
    const payload = encodeActor(acme);
    assert.equal(new TextDecoder().decode(payload.metadata?.encoding), 'json/plain');
    assert.deepEqual(actorFromHeaders({ [ACTOR_HEADER]: payload }), acme);
  });

  test('no header, another header, or a header that is not an actor: none (never an error)', () => {
    assert.equal(actorFromHeaders(undefined), undefined);
    assert.equal(actorFromHeaders({}), undefined);
    assert.equal(actorFromHeaders({ other: encodeActor(acme) }), undefined);
    assert.equal(actorFromHeaders({ [ACTOR_HEADER]: defaultPayloadConverter.toPayload({ tenant: 'acme' }) }), undefined);
    assert.equal(actorFromHeaders({ [ACTOR_HEADER]: defaultPayloadConverter.toPayload('acme/ci-bot') }), undefined);
    const broken = { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode('{not json') };
    assert.equal(actorFromHeaders({ [ACTOR_HEADER]: broken }), undefined);
    const unknown = { metadata: { encoding: new TextEncoder().encode('binary/encrypted') }, data: new Uint8Array([1, 2]) };
    assert.equal(actorFromHeaders({ [ACTOR_HEADER]: unknown }), undefined);
  });
});

describe('the client: actingAs and its interceptor', () => {
  const signalInput = (headers: Headers = {}): WorkflowSignalInput => ({
    signalName: 'pause',
    args: [{}],
    workflowExecution: { workflowId: 'c1' },
    headers,
  });

  test('inside actingAs, a signal, an update and a start carry the actor; outside, nothing is added', async () => {
    const seen: Headers[] = [];
    const sent = async (input: { headers: Headers }) => {
      seen.push(input.headers);
    };
    const existing = { trace: defaultPayloadConverter.toPayload('t') };
    await actingAs(acme, async () => {
      await actorInterceptor.signal!(signalInput(existing), sent);
      const update = {
        updateName: 'run',
        args: [],
        workflowExecution: { workflowId: 'c1' },
        headers: {},
        options: {},
      } as WorkflowStartUpdateInput;
      await actorInterceptor.startUpdate!(update, async (i) => {
        seen.push(i.headers);
        return { updateId: 'u', workflowRunId: 'r' };
      });
      const startInput = { workflowType: 'conversation', headers: {}, options: {} } as unknown as WorkflowStartInput;
      await actorInterceptor.startWithDetails!(startInput, async (i) => {
        seen.push(i.headers);
        return { runId: 'r', eagerlyStarted: false };
      });
    });
    assert.equal(seen.length, 3);
    for (const headers of seen) assert.deepEqual(actorFromHeaders(headers), acme);
    assert.ok(seen[0]!.trace, 'the headers already there stay');

    const outside = signalInput(existing);
    await actorInterceptor.signal!(outside, async (i) => {
      assert.equal(i.headers, existing, 'outside actingAs the headers are passed on as they were');
    });
  });

  test('the actor follows the calls it starts (awaited or not) and ends with them; the innermost wins', async () => {
    assert.equal(clientActor(), undefined);
    const later = actingAs(acme, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return clientActor();
    });
    const nested = actingAs(acme, () => actingAs(globex, () => clientActor()));
    assert.deepEqual(await later, acme);
    assert.deepEqual(nested, globex);
    assert.equal(clientActor(), undefined);
  });

  test('an actor that is not one is refused with the reason', () => {
    assert.throws(
      () => actingAs({ tenant: 'acme', key: 'a\nb' }, () => 1),
      (err: unknown) => err instanceof InvalidRequestError && /printable/.test(err.message),
    );
    assert.throws(() => actingAs({ tenant: '../etc', key: 'k' }, () => 1), InvalidRequestError);
  });
});

describe('the workflow: its inbound interceptor and the current actor', () => {
  const headers = (actor?: object): Headers => (actor ? { [ACTOR_HEADER]: defaultPayloadConverter.toPayload(actor) } : {});

  test("a signal's or update's actor is current while its handler's synchronous part runs, then no one", async () => {
    let during: unknown;
    let afterAwait: unknown = 'unset';
    const done = actorInbound.handleSignal!({ signalName: 'pause', args: [], headers: headers(acme) } as SignalInput, async () => {
      during = currentActor();
      await Promise.resolve();
      afterAwait = currentActor();
    });
    assert.deepEqual(during, acme);
    assert.equal(currentActor(), undefined);
    await done;
    assert.equal(afterAwait, undefined, 'what the handler awaits runs as no one');

    let inUpdate: unknown;
    await actorInbound.handleUpdate!({ updateId: 'u', name: 'run', args: [], headers: headers(globex) } as UpdateInput, async () => {
      inUpdate = currentActor();
    });
    assert.deepEqual(inUpdate, globex);
  });

  test('a call without the header (or with a bad one) runs as no one, even inside another actor', async () => {
    for (const h of [headers(), headers({ tenant: 'acme', key: 'x\u0007' })]) {
      let during: unknown = 'unset';
      await actingIn(acme, () =>
        actorInbound.handleSignal!({ signalName: 'pause', args: [], headers: h } as SignalInput, async () => {
          during = currentActor();
        }),
      );
      assert.equal(during, undefined);
    }
  });

  test("the start's actor is kept for the workflow function", async () => {
    await actorInbound.execute!({ args: [], headers: headers(acme) } as WorkflowExecuteInput, async () => undefined);
    assert.deepEqual(startActor(), acme);
    await actorInbound.execute!({ args: [], headers: {} } as WorkflowExecuteInput, async () => undefined);
    assert.equal(startActor(), undefined);
  });
});

function input(over: Partial<ConversationInput> = {}): ConversationInput {
  return {
    options: {
      workspace: '/w',
      agent: { llm: { usageId: 'u', model: 'm' }, tools: ['terminal', 'finish'] },
      toolTaskQueue: 'host',
      maxIterations: 50,
      confirmationPolicy: 'never',
      idleTimeoutMs: 1000,
    },
    ...over,
  };
}

function runWith(over: Partial<ConversationInput> = {}): { run: ConversationRun; details: string[] } {
  const details: string[] = [];
  const env: RunEnvironment = {
    workflowId: 'conv-1',
    runId: 'run-1',
    effects: { searchAttributes: () => undefined, details: (text) => details.push(text), signalParent: () => undefined },
    patched: () => true,
    targetVersionChanged: () => false,
    actor: currentActor,
  };
  return { run: ConversationRun.fromInput(input(over), env), details };
}

const byOf = (events: readonly ConversationEvent[]) => events.map((e) => `${e.kind}${e.by ? ` by ${actorText(e.by)}` : ''}`);

describe('ConversationRun stamps `by` on the events a call records', () => {
  test('a start, a message, a pause, a run and a close made by actors name them; the loop and plain calls do not', () => {
    const { run } = runWith({ firstMessage: 'hello' });
    actingIn(acme, () => run.apply(start, run.input, checkMessageText));
    run.apply(message, 'from the CLI');
    actingIn(globex, () => run.apply(requestRun));
    run.apply(record, { kind: 'message', source: 'agent', text: 'working' });
    actingIn(acme, () => run.apply(pause, {}));
    run.apply(requestRun);
    actingIn(acme, () => run.apply(close));
    assert.deepEqual(byOf(run.log.held()), [
      'message by acme/ci-bot',
      'message',
      'status by globex/3f9a0c1d2e4b',
      'message',
      'status by acme/ci-bot',
      'pause by acme/ci-bot',
      'resume',
      'status',
      'close by acme/ci-bot',
    ]);
  });

  test('a close by no one records nothing, as before; a second close records nothing either', () => {
    const { run } = runWith();
    run.apply(start, run.input, checkMessageText);
    run.apply(close);
    assert.equal(run.log.count, 0);
    const other = runWith().run;
    actingIn(acme, () => other.apply(close));
    actingIn(acme, () => other.apply(close));
    assert.deepEqual(byOf(other.log.held()), ['close by acme/ci-bot']);
  });

  test('a rejection names who rejected on the decision the loop reads', () => {
    const { run } = runWith();
    const answers: unknown[] = [];
    actingIn(acme, () => run.apply(decide, { approved: false, reason: 'no' }));
    answers.push(run.confirmation?.decision);
    run.apply(decide, { approved: false });
    answers.push(run.confirmation?.decision);
    assert.deepEqual(answers, [{ approved: false, reason: 'no', by: acme }, { approved: false }]);
  });

  test("the Web UI's details say who made the last change, and it survives continue-as-new", () => {
    const { run, details } = runWith({ firstMessage: 'hello', run: true });
    run.apply(start, run.input, checkMessageText);
    assert.doesNotMatch(details.at(-1)!, /Last change/);
    actingIn(acme, () => run.apply(pause, { reason: 'lunch' }));
    assert.match(details.at(-1)!, /\*\*Last change:\*\* pause \(event #3\) by `acme\/ci-bot`/);
    const next = runWith({ carried: run.toCarried() });
    next.run.apply(requestRun);
    assert.match(next.details.at(-1)!, /\*\*Last change:\*\* pause \(event #3\) by `acme\/ci-bot`/);
  });

  test('lastChangeOf: the first event that is not a status, else the first; none without `by`', () => {
    const at = (index: number, kind: string, by?: typeof acme) => ({ index, kind, by, timestamp: '', source: 'user' }) as ConversationEvent;
    assert.deepEqual(lastChangeOf([at(1, 'status', acme), at(2, 'pause', acme)]), { by: acme, kind: 'pause', index: 2 });
    assert.deepEqual(lastChangeOf([at(1, 'status', acme)]), { by: acme, kind: 'status', index: 1 });
    assert.equal(lastChangeOf([at(1, 'message')]), undefined);
  });
});

describe('who, as people see it', () => {
  const event = (over: Partial<ConversationEvent>): ConversationEvent =>
    ({ index: 4, timestamp: '2026-01-01T10:00:00.000Z', kind: 'pause', source: 'user', now: false, ...over }) as ConversationEvent;

  test('faheem events prints `· by tenant/key` after the text, and nothing for others', () => {
    assert.match(plain(formatEvent(event({ by: acme }))), /⏸ paused · by acme\/ci-bot$/);
    assert.doesNotMatch(plain(formatEvent(event({}))), /by/);
    assert.match(plain(formatEvent(event({ kind: 'close', by: globex }))), /■ closed · by globex\/3f9a0c1d2e4b$/);
    const msg = event({ kind: 'message', text: 'two\nlines', by: acme } as Partial<ConversationEvent>);
    assert.match(plain(formatEvent(msg)), /user: two\nlines · by acme\/ci-bot$/);
  });

  test("the console's blocks carry `by` as text on the blocks of the event that has it", () => {
    let state = emptyTranscript();
    const items = [
      event({ index: 0, kind: 'message', source: 'user', text: '<b>hi</b>', by: { tenant: 'acme', key: '<img src=x>' } } as never),
      event({ index: 1, kind: 'pause', by: acme }),
      event({ index: 2, kind: 'action', source: 'agent', tool: 'terminal', toolCallId: 't1', arguments: { command: 'ls' } } as never),
      event({
        index: 3,
        kind: 'observation',
        source: 'environment',
        tool: 'terminal',
        toolCallId: 't1',
        content: 'rejected',
        isError: true,
        by: globex,
      } as never),
      event({ index: 4, kind: 'close', by: acme }),
      event({ index: 5, kind: 'resume' }),
    ];
    for (const item of items) state = applyItem(state, item);
    const blocks = buildBlocks(state).map((b) => ('by' in b ? b.by : undefined));
    assert.deepEqual(blocks, ['acme/<img src=x>', 'acme/ci-bot', 'globex/3f9a0c1d2e4b', 'acme/ci-bot', undefined]);
  });

  test('the details leave the line out when no one made a change through the API', () => {
    const view = {
      status: 'idle' as const,
      lastError: null,
      iterations: 0,
      maxIterations: 5,
      runNumber: 0,
      lastAction: undefined,
      waitingForHost: null,
      pendingMessages: 0,
      children: [],
      parentId: undefined,
      metrics: emptyMetrics(),
    };
    assert.doesNotMatch(detailsText(view), /Last change/);
    assert.match(
      detailsText({ ...view, lastChange: { by: acme, kind: 'message', index: 0 } }),
      /\*\*Last change:\*\* message \(event #0\) by `acme\/ci-bot`/,
    );
  });
});
