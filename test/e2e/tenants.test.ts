// Tenants on conversations, against a real server and a worker started with `--max-model-calls 1`:
// the FaheemTenant search attribute and fairness key at start, `list --tenant`, `status --json`, a
// sub-agent and a fork in their parent's tenant, and the worker answering two conversations' model
// calls one at a time.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { forkConversation } from '../../src/time-travel/fork.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { TenantKey } from '../../src/conversation/workflow/messages.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';
import { maxInFlight } from '../support/in-flight.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'tenants', script: () => ({ content: 'ok' }) });
  await h.startWorker({}, ['--max-model-calls', '1']);
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'delegate'] });
const firstUser = (req: RecordedRequest) => String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
const toolResults = (req: RecordedRequest) => req.body.messages.filter((m) => m.role === 'tool');

/** The tenant search attribute and the fairness key the server holds for a workflow. */
async function placement(id: string): Promise<{ tenant: unknown; fairnessKey: string | null | undefined }> {
  const d = await h.client.workflow.getHandle(id).describe();
  return { tenant: d.typedSearchAttributes.get(TenantKey), fairnessKey: d.raw.workflowExecutionInfo?.priority?.fairnessKey };
}

/** The ids `faheem list --tenant T --json` prints. */
async function listed(tenant: string): Promise<string[]> {
  const { stdout } = await h.cli(['list', '--tenant', tenant, '--json']);
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string; tenant?: string }).id);
}

test(
  'a conversation with a tenant: its attribute, fairness key, list --tenant, status, a sub-agent and a fork in the same tenant',
  { timeout: 300_000 },
  async () => {
    h.model.setScript((req): ScriptedReply => {
      if (firstUser(req) === 'split the work')
        return toolResults(req).length === 0
          ? { toolCalls: [{ name: 'delegate', arguments: { task: 'count to three' } }] }
          : { content: `the sub-agent said: ${String(toolResults(req)[0]?.content)}` };
      return { content: 'one two three' };
    });
    const workspace = await h.workspace();
    const parent = await Conversation.create(h.client, {
      agent: agent(),
      workspace,
      tenant: 'acme',
      firstMessage: 'split the work',
      run: true,
    });
    const other = await Conversation.create(h.client, { agent: agent(), workspace, tenant: 'globex', firstMessage: 'not run' });
    const none = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'not run either' });
    const stopped = await parent.waitUntilStopped({ timeoutMs: 120_000 });
    assert.equal(stopped.status, 'finished');
    assert.match(stopped.finalMessage ?? '', /one two three/);
    const childId = stopped.children[0]?.id;
    assert.ok(childId, 'a sub-agent ran');

    assert.deepEqual(await placement(parent.id), { tenant: 'acme', fairnessKey: 'acme' });
    assert.deepEqual(await placement(childId), { tenant: 'acme', fairnessKey: 'acme' }, 'the sub-agent is in its parent tenant');
    assert.deepEqual(await placement(other.id), { tenant: 'globex', fairnessKey: 'globex' });
    assert.equal((await placement(none.id)).tenant, undefined);

    // Visibility catches up on its own time: wait until the tenant's two conversations are listed.
    const acme = await waitFor('list --tenant acme to show the conversation and its sub-agent', async () => {
      const ids = await listed('acme');
      return ids.includes(parent.id) && ids.includes(childId) ? ids : undefined;
    });
    assert.ok(!acme.includes(other.id) && !acme.includes(none.id), `only acme's: ${acme.join(', ')}`);
    assert.deepEqual(await listed('globex'), [other.id]);

    const status = JSON.parse((await h.cli(['status', parent.id, '--json'])).stdout) as { tenant?: string };
    assert.equal(status.tenant, 'acme');
    const noTenant = JSON.parse((await h.cli(['status', none.id, '--json'])).stdout) as Record<string, unknown>;
    assert.ok(!('tenant' in noTenant));

    // A fork stays in its source's tenant.
    const fork = await forkConversation(h.client, parent.id, { at: 0, workspace: await h.workspace() });
    assert.deepEqual(await placement(fork.id), { tenant: 'acme', fairnessKey: 'acme' });
    assert.equal((await fork.state()).tenant, 'acme');

    const bad = await h.cli(['list', '--tenant', 'Not A Tenant'], { reject: false });
    assert.notEqual(bad.exitCode, 0);
    assert.match(bad.stderr, /tenant "Not A Tenant": 1 to 63 lowercase letters/);
    await Promise.all([parent, other, none, fork].map((c) => c.close()));
  },
);

test('a worker with --max-model-calls 1 answers two conversations one call at a time', { timeout: 300_000 }, async () => {
  // The first conversation's call is held at a gate; the second's must wait on the task queue
  // (scheduled, not started) until the first is answered. Without the cap both would be at the model.
  h.model.setScript((req): ScriptedReply =>
    firstUser(req) === 'first' ? { content: 'first done', gate: 'first' } : { content: 'second done' },
  );
  h.model.hold('first');
  const from = h.model.requests.length;
  const workspace = await h.workspace();
  const first = await Conversation.create(h.client, { agent: agent(), workspace, tenant: 'acme', firstMessage: 'first', run: true });
  await h.model.reached('first', 60_000);
  const second = await Conversation.create(h.client, { agent: agent(), workspace, tenant: 'globex', firstMessage: 'second', run: true });
  const waiting = await waitFor("the second conversation's model call to be scheduled", async () => {
    const d = await h.client.workflow.getHandle(second.id).describe();
    return d.raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel');
  });
  // 1: PENDING_ACTIVITY_STATE_SCHEDULED (no worker has started it).
  assert.equal(waiting.state, 1, 'the second call waits on the queue while the first holds the only slot');
  assert.ok(!h.model.requests.slice(from).some((r) => firstUser(r) === 'second'), 'the second call has not reached the model');
  const releasedAt = Date.now();
  h.model.release('first');
  const [a, b] = await Promise.all([first.waitUntilStopped({ timeoutMs: 60_000 }), second.waitUntilStopped({ timeoutMs: 60_000 })]);
  assert.equal(a.finalMessage, 'first done');
  assert.equal(b.finalMessage, 'second done');
  const mine = h.model.requests.slice(from);
  assert.equal(mine.length, 2);
  assert.ok(mine[1]!.startedAt >= releasedAt, 'the second call reached the model only once the first was answered');
  assert.equal(maxInFlight(mine), 1, 'the model server never saw two requests at once');
  await Promise.all([first, second].map((c) => c.close()));
});

test('--max-model-calls takes a positive whole number only', async () => {
  for (const bad of ['0', 'two', '1.5']) {
    const r = await h.cli(['worker', '--max-model-calls', bad], { reject: false });
    assert.notEqual(r.exitCode, 0, bad);
    assert.match(r.stderr, /--max-model-calls.*must be a positive whole number/, bad);
  }
});
