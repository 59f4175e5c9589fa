// Your own tools and AGENTS.md against a real server and real worker processes: a worker started
// with `--tools` runs the tools a module exports; the model sees their schemas; arguments are
// validated on the worker; approval, interruption, durable state and secrets work as for built-ins.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import { samePromptSameReply, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ConversationEvent, ErrorEvent, ObservationEvent } from '../../src/core/types.js';
import { historyText, ROOT, startHarness, waitFor, type Harness } from '../support/harness.js';

const SECRET = 'hunter2-very-secret-value';
const TOOLS_MODULE = path.join(ROOT, 'test', 'fixtures', 'tools.mjs');
const CUSTOM = ['add_numbers', 'count_calls', 'refund', 'delete_everything', 'slow_wait', 'show_secret', 'failing_tool'];

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'custom-tools', script: () => ({ content: 'ok' }) });
  await h.startWorker({ FAHEEM_SECRET_DB_PASSWORD: SECRET }, ['--tools', TOOLS_MODULE]);
});
after(async () => h?.close());

const agent = (tools: string[] = CUSTOM) => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', ...tools] });

/** Replies in turn, one per model request; then says it is done. */
function turns(...replies: ScriptedReply[]) {
  let i = 0;
  // A prompt asked again (a retried call) gets the same reply, not the next one.
  return samePromptSameReply((_req: RecordedRequest): ScriptedReply => replies[i++] ?? { content: 'Done.' });
}

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

async function start(replies: ScriptedReply[], options: Partial<CreateOptions> = {}) {
  h.model.setScript(turns(...replies));
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'go', ...options });
  return { conversation, workspace };
}

const observations = (events: ConversationEvent[]) => events.filter((e): e is ObservationEvent => e.kind === 'observation');

test("`faheem worker --tools` runs a module's tools; `faheem start` offers them with their JSON Schema", async () => {
  const first = h.model.requests.length;
  h.model.setScript(
    turns(
      {
        toolCalls: [
          { name: 'add_numbers', arguments: { a: 2, b: 3 } },
          { name: 'count_calls', arguments: {} },
        ],
      },
      call('count_calls', {}),
    ),
  );
  const workspace = await h.workspace();
  const { stdout } = await h.cli(['start', 'Add 2 and 3', '--workspace', workspace, '--wait']);
  const conversation = await Conversation.attach(h.client, stdout.trim());
  const final = await conversation.state();
  assert.equal(final.status, 'finished');
  const obs = observations(await conversation.events());
  assert.deepEqual(
    obs.map((o) => [o.tool, o.content, o.isError]),
    [
      ['add_numbers', '5', false],
      ['count_calls', 'call 1', false],
      ['count_calls', 'call 2', false], // its state carried from the last call
    ],
  );
  const tools = (h.model.requests[first]!.body.tools ?? []) as {
    function: { name: string; parameters: { properties?: Record<string, unknown>; required?: string[] } };
  }[];
  const names = tools.map((t) => t.function.name);
  for (const n of ['terminal', 'file_editor', 'task_tracker', 'think', 'finish', ...CUSTOM])
    assert.ok(names.includes(n), `${n} offered: ${names.join(', ')}`);
  const add = tools.find((t) => t.function.name === 'add_numbers')!.function.parameters;
  assert.deepEqual(Object.keys(add.properties ?? {}), ['a', 'b']);
  assert.deepEqual(add.required, ['a', 'b']);
});

test('bad arguments and a failing tool become observations; the conversation goes on', async () => {
  const { conversation } = await start([
    call('add_numbers', { a: 'two', b: 3 }),
    call('failing_tool', {}),
    call('slow_wait', { seconds: 600 }),
  ]);
  const final = await conversation.run();
  assert.equal(final.status, 'finished');
  const [bad, failed, tooLong] = observations(await conversation.events());
  assert.equal(bad!.isError, true);
  assert.match(bad!.content, /Invalid arguments for add_numbers: a: .*number/i);
  assert.equal(failed!.isError, true);
  assert.match(failed!.content, /The tool failing_tool failed: the database is down/);
  assert.match(tooLong!.content, /Invalid arguments for slow_wait: seconds/);
});

test('needsApproval under the risky policy: a rule on the arguments, or always', async () => {
  const { conversation } = await start(
    [
      call('refund', { order: 'A-1', amount: 50 }),
      call('refund', { order: 'A-2', amount: 500 }),
      call('delete_everything', {}),
      call('add_numbers', { a: 1, b: 1 }),
    ],
    { confirmationPolicy: 'risky' },
  );
  const waiting = await conversation.run().then(() => conversation.state());
  assert.equal(waiting.status, 'waiting_for_confirmation', 'the small refund ran; the big one waits');
  assert.deepEqual(
    waiting.pendingActions.map((a) => [a.tool, (a.arguments as { amount: number }).amount]),
    [['refund', 500]],
  );
  await conversation.approve();
  const again = await conversation.waitUntil(
    (s) => s.status === 'waiting_for_confirmation' && s.pendingActions[0]?.tool === 'delete_everything',
  );
  assert.equal(again.pendingActions.length, 1);
  await conversation.reject('not today');
  const final = await conversation.waitUntil((s) => s.status === 'finished');
  assert.equal(final.status, 'finished');
  const obs = observations(await conversation.events());
  assert.deepEqual(
    obs.map((o) => o.content),
    ['refunded 50 on A-1', 'refunded 500 on A-2', 'The user rejected this action: not today', '2'],
    'add_numbers declares no approval, so it ran without asking',
  );
});

test("long tools stay alive on the worker's heartbeats; ctx.signal aborts them on pause --now", async () => {
  const { conversation, workspace } = await start([call('slow_wait', { seconds: 7 }), call('slow_wait', { seconds: 50 })]);
  const running = conversation.run();
  // The second call marks in the workspace that it is under way.
  await waitFor('the long wait to run', () => existsSync(path.join(workspace, 'slow_wait-50.started')));
  const first = observations(await conversation.events())[0]!;
  assert.equal(first.content, 'waited 7 s', 'longer than the 5 s heartbeat timeout, yet not timed out');
  await h.cli(['pause', conversation.id, '--now']);
  const paused = await conversation.waitUntil((s) => s.status === 'paused');
  assert.equal(paused.status, 'paused');
  assert.equal((await running).status, 'paused', 'run() returns with the pause');
  const second = await waitFor('the interrupted observation', async () => observations(await conversation.events())[1]);
  assert.equal(second.isError, true);
  assert.match(second.content, /interrupted by a pause/);
  assert.match(second.content, /stopped early by ctx\.signal/);
  await conversation.close();
});

test('ctx.secrets gives named secrets; their values never reach events or history', async () => {
  const { conversation } = await start([call('show_secret', {})]);
  const final = await conversation.run();
  assert.equal(final.status, 'finished');
  const [obs] = observations(await conversation.events());
  assert.equal(obs!.content, 'the secret is <secret-hidden>');
  const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
  assert.ok(!historyText(history).includes(SECRET), 'no secret in history');
});

test('a tool the workspace host lacks: named at the start, and an observation naming the queue if it vanishes later', async () => {
  // Asked for, but no worker has it: the conversation says so and goes on without it.
  const { conversation } = await start([call('add_numbers', { a: 1, b: 2 })], { agent: agent(['add_numbers', 'ghost_tool']) });
  const final = await conversation.run();
  assert.equal(final.status, 'finished');
  const events = await conversation.events();
  const missing = events.find((e): e is ErrorEvent => e.kind === 'error' && e.message.includes('ghost_tool'));
  assert.ok(missing, 'an error event names the missing tool');
  assert.match(missing.message, /task queue faheem-tools@/);
  assert.equal(observations(events)[0]!.content, '3');

  // A host whose worker comes back without the tool (redeployed without --tools): the call says which queue lacks it.
  const toolTaskQueue = `tools-vanish-${Date.now()}`;
  const withTools = await h.startWorker({ FAHEEM_TASK_QUEUE: `unused-${toolTaskQueue}`, FAHEEM_TOOL_TASK_QUEUE: toolTaskQueue }, [
    '--tools',
    TOOLS_MODULE,
  ]);
  h.model.setScript(turns(call('add_numbers', { a: 1, b: 1 }), { content: 'first done' }, call('add_numbers', { a: 2, b: 2 })));
  const second = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: 'go', toolTaskQueue });
  assert.equal((await second.run()).status, 'finished');
  await withTools.kill('SIGKILL');
  const without = await h.startWorker({ FAHEEM_TASK_QUEUE: `unused-${toolTaskQueue}`, FAHEEM_TOOL_TASK_QUEUE: toolTaskQueue });
  await second.sendMessage('again');
  assert.equal((await second.run()).status, 'finished');
  const obs = observations(await second.events());
  assert.equal(obs[0]!.content, '2');
  assert.equal(obs[1]!.isError, true);
  assert.match(obs[1]!.content, new RegExp(`"add_numbers" is not available: the worker on task queue ${toolTaskQueue} does not have it`));
  await without.kill();
});

test('AGENTS.md at the workspace root joins the system prompt and is shown as an event', async () => {
  const first = h.model.requests.length;
  h.model.setScript(turns({ content: 'Bonjour.' }));
  const workspace = await h.workspace();
  await writeFile(path.join(workspace, 'AGENTS.md'), '# Team rules\nAlways answer in French.\n');
  const conversation = await Conversation.create(h.client, { agent: agent([]), workspace, firstMessage: 'hi' });
  assert.equal((await conversation.run()).status, 'finished');
  const system = h.model.requests[first]!.body.messages[0]!;
  assert.equal(system.role, 'system');
  assert.match(String(system.content), /<repository_instructions>\n# Team rules\nAlways answer in French\.\n<\/repository_instructions>/);
  const events = await conversation.events();
  const shown = events.find((e) => e.kind === 'instructions');
  assert.ok(shown && shown.kind === 'instructions' && shown.path === 'AGENTS.md' && shown.text.includes('Always answer in French.'));
  const { stdout } = await h.cli(['events', conversation.id]);
  assert.match(stdout, /follows AGENTS\.md/);
});
