// `faheem list --status S` is a visibility query on the ConversationStatus search attribute: check it
// for every status, and that `events --follow` streams a readable log.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import type { Script } from '../../src/testing/scripted-model.js';
import { CONVERSATION_STATUSES, type ConversationStatus } from '../../src/core/types.js';
import { startHarness, waitFor, waitUntilListed, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  // Each conversation says what it wants in its first message; the script acts on it.
  const script: Script = (req) => {
    const first = String(req.body.messages.find((m) => m.role === 'user')?.content);
    const tools = req.body.messages.filter((m) => m.role === 'tool').length;
    if (first === 'error') return { status: 401, error: 'bad key' };
    if (first === 'stuck') return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo loop' } }] };
    // Held at a gate nobody opens: these stay in their model call until paused or closed.
    if (first === 'running' || first === 'paused') return { gate: 'held', content: 'slow' };
    if (first === 'waiting_for_confirmation' && tools === 0)
      return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo hi' } }] };
    if (first === 'tasks' && tools === 0) {
      return {
        toolCalls: [{ name: 'task_tracker', arguments: { command: 'plan', task_list: [{ title: 'write tests', status: 'in_progress' }] } }],
      };
    }
    return { content: 'done' };
  };
  h = await startHarness({ name: 'list', script, record: false });
  await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'task_tracker'] });

test('list --status finds each conversation by its status', async () => {
  const ids = {} as Record<ConversationStatus, string>;
  for (const status of CONVERSATION_STATUSES) {
    const options: Partial<CreateOptions> = status === 'waiting_for_confirmation' ? { confirmationPolicy: 'always' } : {};
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      id: `list-${status}`,
      firstMessage: status,
      run: status !== 'idle',
      ...options,
    });
    ids[status] = conversation.id;
    if (status === 'paused') {
      await waitFor('running', async () => (await conversation.state()).status === 'running');
      await conversation.pause();
    }
    await conversation.waitUntil((s) => s.status === status, 50, 30_000);
  }
  for (const status of CONVERSATION_STATUSES) {
    // The visibility store catches up (waited for with the SDK); then the CLI lists it, and only it.
    await waitUntilListed(h, { status }, ids[status]);
    const out = (await h.cli(['list', '--status', status, '--json'])).stdout.trim();
    const rows = out ? out.split('\n').map((l) => JSON.parse(l) as { id: string; status: string }) : [];
    assert.deepEqual(
      rows.map((r) => r.id),
      [ids[status]],
      `only list-${status} is ${status}`,
    );
    assert.ok(rows.every((r) => r.status === status));
  }
});

test('events --follow --until-stop prints a readable log until the run stops; task_tracker keeps a plan', async () => {
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'tasks',
    run: true,
  });
  const { stdout } = await h.cli(['events', conversation.id, '--follow', '--until-stop']);
  assert.match(stdout, /user: tasks/);
  assert.match(stdout, /task_tracker/);
  assert.match(stdout, /\[~\] write tests/);
  assert.match(stdout, /agent: done/);
  assert.match(stdout, /status → finished/);
});

test('list is newest first by start time, closed ones included, and a closed one says closed', async () => {
  // The dev server's SQLite orders open ones first, then closed ones: the newest, closed, came last.
  const ids: string[] = [];
  for (const n of [1, 2, 3]) {
    const c = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      id: `order-${n}`,
      firstMessage: 'done',
      run: false,
      tenant: 'order-test',
    });
    ids.push(c.id);
    // Start times a visibility row keeps to the millisecond: the next start is a later one.
    const started = (await h.client.workflow.getHandle(c.id).describe()).startTime.getTime();
    await waitFor('a later millisecond', () => Date.now() > started + 1, 5_000, 1);
  }
  await h.client.workflow.getHandle('order-3').terminate('closed for the test');
  // All three in the visibility store, order-3 closed (waited for with the SDK); then the CLI's list.
  for (const id of ids) await waitUntilListed(h, { tenant: 'order-test' }, id, { closed: id === 'order-3' });
  const out = (await h.cli(['list', '--tenant', 'order-test', '--json'])).stdout.trim();
  const rows = out ? out.split('\n').map((l) => JSON.parse(l) as { id: string; closed: boolean; startTime: string }) : [];
  assert.equal(rows.find((r) => r.id === 'order-3')?.closed, true, out);
  assert.deepEqual(
    rows.map((r) => r.id),
    ['order-3', 'order-2', 'order-1'],
  );
  const limited = (await h.cli(['list', '--tenant', 'order-test', '--json', '--limit', '1'])).stdout.trim().split('\n');
  assert.equal(limited.length, 1);
  assert.equal((JSON.parse(limited[0]!) as { id: string }).id, 'order-3');
  const human = (await h.cli(['list', '--tenant', 'order-test'])).stdout.trim().split('\n');
  assert.match(human[0]!, /^order-3 {2}closed {2}started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}tenant order-test$/);
  assert.match(human[1]!, /^order-2 {2}idle {2}started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}tenant order-test$/);
});
