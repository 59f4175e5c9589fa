// Who did what, on a real dev server and a real worker: a client made by connectClient, inside
// actingAs (as the team API runs its callers' calls), starts a conversation, pauses it, sends a
// message, resumes and closes it; a plain client sends a message too. Exactly the events those
// calls recorded carry `by`, `faheem events` prints it, the history carries the header (never a
// key), and the Web UI's current details name the last change.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { actingAs } from '../../src/acting.js';
import { actorFromHeaders } from '../../src/actor-header.js';
import { Agent, Conversation, FileEditorTool, LLM, TerminalTool } from '../../src/client.js';
import { connectClient } from '../../src/connection.js';
import { readSettings } from '../../src/environment.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import type { ConversationEvent } from '../../src/types.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
let apiClient: Client;
before(async () => {
  // The first model call is held until the test lets it go: the pause lands while it is under way.
  h = await startHarness({ name: 'actor', script: countdownScript({ delayMs: 0, gates: { 0: 'first-call' } }) });
  await h.startWorker();
  // As the API process makes its client: connectClient (the actor interceptor is always installed).
  process.env.TEMPORAL_ADDRESS = h.env.TEMPORAL_ADDRESS;
  process.env.TEMPORAL_NAMESPACE = h.env.TEMPORAL_NAMESPACE;
  apiClient = await connectClient(readSettings(h.env, 'client'));
});
after(async () => {
  await apiClient?.connection.close();
  await h?.close();
});

const acme = { tenant: 'acme', key: 'ci-bot' };
const agent = () => new Agent({ llm: new LLM({ usageId: 'agent', model: 'openai/gpt-4o-mini' }), tools: [TerminalTool, FileEditorTool] });
const by = (e: ConversationEvent) => (e.by ? `${e.by.tenant}/${e.by.key}` : '-');
const line = (e: ConversationEvent) =>
  `${e.kind}${e.kind === 'status' ? `:${e.status}` : ''}${e.kind === 'message' ? `:${e.source}` : ''} ${by(e)}`;

test('events made inside actingAs carry `by`; events of the loop and of a plain client do not', async () => {
  const workspace = await h.workspace();
  const asAcme = <T>(fn: () => Promise<T>) => actingAs(acme, fn);

  const id = await asAcme(async () => {
    const c = await Conversation.create(apiClient, { agent: agent(), workspace, firstMessage: 'Create countdown.txt with 100 down to 1.' });
    return c.id;
  });
  const mine = await Conversation.attach(apiClient, id);
  const plain = await Conversation.attach(h.client, id);

  await plain.sendMessage('A note from the CLI: keep it short.');
  // run() resolves when the run stops: here, at the pause below.
  const running = asAcme(() => mine.run());
  const held = await h.model.reached('first-call');
  await asAcme(() => mine.pause());
  assert.equal((await running).status, 'paused');
  await waitFor('the held call cancelled', () => held.aborted);
  h.model.release('first-call');

  await asAcme(() => mine.sendMessage("Actually, create hello.txt with 'Hello, World!' instead."));
  await asAcme(async () => void (await mine.resume()));
  const stopped = await plain.waitUntilStopped();
  assert.equal(stopped.status, 'finished', JSON.stringify(await plain.events()));
  await asAcme(() => mine.close());
  await waitFor('closed', async () => (await h.client.workflow.getHandle(id).describe()).status.name === 'COMPLETED');

  const events = await plain.events();
  const stamped = events.filter((e) => e.by);
  assert.deepEqual(
    stamped.map(line),
    [
      'message:user acme/ci-bot', // the first message, with the start
      'status:running acme/ci-bot', // run()
      'status:paused acme/ci-bot', // pause()
      'pause acme/ci-bot',
      'message:user acme/ci-bot', // sendMessage()
      'resume acme/ci-bot', // resume()
      'status:running acme/ci-bot',
      'close acme/ci-bot', // close()
    ],
    events.map(line).join('\n'),
  );
  for (const e of stamped) assert.deepEqual(e.by, acme, 'the tenant and the key name, nothing else');
  // The plain client's message, and everything the agent and the loop recorded, name no one.
  const note = events.find((e) => e.kind === 'message' && e.text.startsWith('A note from the CLI'));
  assert.ok(note && note.by === undefined);
  const unstamped = events.filter((e) => !e.by);
  assert.ok(unstamped.some((e) => e.kind === 'action'));
  assert.ok(unstamped.some((e) => e.kind === 'status' && e.status === 'finished'));
  assert.ok(!unstamped.some((e) => e.kind === 'close' || e.kind === 'pause' || e.kind === 'resume'));

  // faheem events: `· by acme/ci-bot` after the text of exactly those events.
  const printed = (await h.cli(['events', id])).stdout.split('\n');
  const printedBy = printed.filter((l) => l.endsWith(' · by acme/ci-bot'));
  assert.equal(printedBy.length, stamped.length, printed.join('\n'));
  assert.ok(printedBy.some((l) => /paused/.test(l) && !/status/.test(l)));
  assert.ok(printedBy.some((l) => /■ closed/.test(l)));
  assert.ok(printed.some((l) => l.includes('A note from the CLI') && !l.includes(' · by ')));
  // --json lines carry it as a field.
  const json = (await h.cli(['events', id, '--json'])).stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ConversationEvent);
  assert.deepEqual(json.filter((e) => e.by).map(line), stamped.map(line));

  // The history: the start, the pause and close signals and the updates carry the header (the
  // Temporal UI shows it on each event); nothing else does.
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const carried: string[] = [];
  for (const e of history.events ?? []) {
    const started = e.workflowExecutionStartedEventAttributes;
    const signaled = e.workflowExecutionSignaledEventAttributes;
    const accepted = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    const [name, fields] = started
      ? ['start', started.header?.fields]
      : signaled
        ? [signaled.signalName, signaled.header?.fields]
        : accepted
          ? [accepted.name, accepted.header?.fields]
          : [undefined, undefined];
    if (!name) continue;
    const actor = actorFromHeaders((fields ?? {}) as Parameters<typeof actorFromHeaders>[0]);
    carried.push(`${name} ${actor ? `${actor.tenant}/${actor.key}` : '-'}`);
  }
  // The plain client's addMessage and the waits (waitForChange) of the plain client name no one.
  assert.ok(carried.includes('start acme/ci-bot'), carried.join('\n'));
  assert.ok(carried.includes('pause acme/ci-bot'), carried.join('\n'));
  assert.ok(carried.includes('close acme/ci-bot'), carried.join('\n'));
  assert.equal(carried.filter((c) => c === 'addMessage acme/ci-bot').length, 1, carried.join('\n'));
  assert.equal(carried.filter((c) => c === 'addMessage -').length, 1, carried.join('\n'));
  assert.ok(carried.filter((c) => c === 'run acme/ci-bot').length >= 2, carried.join('\n'));
});

test("the Web UI's current details name who made the last change", async () => {
  const workspace = await h.workspace();
  const conversation = await actingAs(acme, () =>
    Conversation.create(apiClient, { agent: agent(), workspace, firstMessage: 'hello.txt please' }),
  );
  // The workflow's metadata query is what the Web UI shows as "Current Details".
  const details = await waitFor('the details', async () => {
    const meta = (await h.client.workflow.getHandle(conversation.id).query('__temporal_workflow_metadata')) as {
      currentDetails?: string;
    };
    return meta.currentDetails?.includes('Last change') ? meta.currentDetails : undefined;
  });
  assert.match(details, /\*\*Last change:\*\* message \(event #0\) by `acme\/ci-bot`/);
  await conversation.close();
});
