// Agent parity with the seed SDK: confirmation mode, stuck detection, secrets, big output, provider
// configuration. Real server, real worker processes, scripted model. (The budget, the risky policy and
// the condenser are workflow rules: test/workflow/.)
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import { samePromptSameReply, type Script } from '../../src/testing/scripted-model.js';
import type { ObservationEvent } from '../../src/core/types.js';
import { historyText, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

const SECRET = 'hunter2-very-secret-value';
const WORKER_ENV = { FAHEEM_SECRET_DEPLOY_TOKEN: SECRET, FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '2' };
let h: Harness;
let worker: WorkerProcess;
before(async () => {
  h = await startHarness({ name: 'parity', script: () => ({ content: 'ok' }) });
  worker = await h.startWorker(WORKER_ENV);
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor'] });

/** A model that makes one terminal call, then finishes, quoting the last observation. */
function oneCommand(command: string, risk?: string): Script {
  return (req) => {
    const tools = req.body.messages.filter((m) => m.role === 'tool');
    if (tools.length === 0) return { toolCalls: [{ name: 'terminal', arguments: { command, ...(risk ? { security_risk: risk } : {}) } }] };
    return { content: `Result: ${String(tools[tools.length - 1]?.content).slice(0, 300)}` };
  };
}

async function start(script: Script, options: Partial<CreateOptions> = {}) {
  h.model.setScript(samePromptSameReply(script));
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'go', ...options });
  return { conversation, workspace };
}

describe('confirmation mode', () => {
  test('always: waits, approve runs the action', async () => {
    const { conversation, workspace } = await start(oneCommand('echo approved > out.txt'), { confirmationPolicy: 'always' });
    const waiting = await conversation.run().then(() => conversation.state());
    assert.equal(waiting.status, 'waiting_for_confirmation');
    assert.equal(waiting.pendingActions.length, 1);
    await assert.rejects(readFile(path.join(workspace, 'out.txt')), 'nothing ran before approval');
    // The CLI approves, as a user would.
    await h.cli(['approve', conversation.id]);
    const final = await conversation.waitUntil((s) => s.status !== 'running' && s.status !== 'waiting_for_confirmation');
    assert.equal(final.status, 'finished');
    assert.equal(await readFile(path.join(workspace, 'out.txt'), 'utf8'), 'approved\n');
  });

  test('reject records the reason, the model sees it and goes on', async () => {
    const { conversation, workspace } = await start(oneCommand('rm -rf data'), { confirmationPolicy: 'always' });
    await conversation.run();
    await h.cli(['reject', conversation.id, '--reason', 'do not delete data']);
    const final = await conversation.waitUntil((s) => s.status === 'finished');
    const obs = (await conversation.events()).find((e): e is ObservationEvent => e.kind === 'observation');
    assert.match(obs?.content ?? '', /rejected this action: do not delete data/);
    assert.equal(obs?.isError, true);
    assert.match(JSON.stringify(h.model.requests[h.model.requests.length - 1]!.body.messages), /do not delete data/);
    assert.equal(final.pendingActions.length, 0);
    assert.ok(workspace);
  });

  // The risky policy (LOW runs at once, HIGH and unlabelled ask, the prompt asks for a rating) is a
  // workflow rule: test/workflow/conversation.test.ts ("risky: LOW runs at once, …").

  test('waiting survives a worker crash, can be paused, and resume returns to waiting', async () => {
    const { conversation, workspace } = await start(oneCommand('echo survived > s.txt'), { confirmationPolicy: 'always' });
    await conversation.run();
    await worker.kill('SIGKILL');
    worker = await h.startWorker(WORKER_ENV);
    await conversation.pause();
    await waitFor('paused', async () => (await conversation.state()).status === 'paused');
    const refused = await h.cli(['approve', conversation.id], { reject: false });
    assert.notEqual(refused.exitCode, 0);
    assert.match(refused.stderr, /resume it first/);
    await conversation.resume();
    const again = await conversation.waitUntil((s) => s.status === 'waiting_for_confirmation');
    assert.equal(again.pendingActions.length, 1);
    await conversation.approve();
    await conversation.waitUntil((s) => s.status === 'finished');
    assert.equal(await readFile(path.join(workspace, 's.txt'), 'utf8'), 'survived\n');
  });

  // An unanswered confirmation timing out as a rejection is a workflow rule: test/workflow/conversation.test.ts
  // ("an unanswered confirmation times out as a rejection; …") holds this test's assertion and more.

  test('approve with nothing pending is a clear error', async () => {
    const { conversation } = await start(() => ({ content: 'hi' }));
    await conversation.run();
    const r = await h.cli(['approve', conversation.id], { reject: false });
    assert.notEqual(r.exitCode, 0);
    assert.match(r.stderr, /nothing is waiting for confirmation/);
  });
});

describe('limits', () => {
  // Stuck on the same action with the same result 4 times and the per-run budget (with each call's
  // metrics) are workflow rules, tested with these tests' assertions in test/workflow/conversation.test.ts.
  // The failing action below stays here: its failure comes from the real file editor. (The condenser's
  // bounded prompt is test/workflow/long-conversation.test.ts's.)
  test('the same failing action 3 times → stuck', async () => {
    const { conversation } = await start(() => ({
      toolCalls: [{ name: 'file_editor', arguments: { command: 'view', path: 'nope.txt' } }],
    }));
    const final = await conversation.run().then(() => conversation.state());
    assert.equal(final.status, 'stuck');
    assert.match(final.lastError ?? '', /failed 3 times/);
  });
});

describe('interactive terminal', () => {
  test('a command waiting for input comes back still running; the model answers it with is_input', async () => {
    const script: Script = (req) => {
      const tools = req.body.messages.filter((m) => m.role === 'tool');
      if (tools.length === 0)
        return { toolCalls: [{ name: 'terminal', arguments: { command: 'read -p "name? " n; echo "hi $n" > greeting.txt' } }] };
      if (tools.length === 1) return { toolCalls: [{ name: 'terminal', arguments: { command: 'bob', is_input: true } }] };
      return { content: 'Answered the prompt.' };
    };
    const { conversation, workspace } = await start(script);
    const final = await conversation.run().then(() => conversation.state());
    assert.equal(final.status, 'finished');
    const obs = (await conversation.events()).filter((e): e is ObservationEvent => e.kind === 'observation');
    assert.match(obs[0]!.content, /still running/);
    assert.equal(obs[0]!.exitCode, -1);
    assert.equal(obs[1]!.exitCode, 0);
    assert.equal(await readFile(path.join(workspace, 'greeting.txt'), 'utf8'), 'hi bob\n');
    assert.equal(final.terminal.running, undefined);
  });
});

describe('secrets, big output, providers', () => {
  test('a named secret is exported to commands that use it and hidden everywhere', async () => {
    const { conversation } = await start(oneCommand('echo "token=$DEPLOY_TOKEN"; export COPY=$DEPLOY_TOKEN'));
    const final = await conversation.run().then(() => conversation.state());
    assert.equal(final.status, 'finished');
    const obs = (await conversation.events()).find((e): e is ObservationEvent => e.kind === 'observation');
    assert.match(obs?.content ?? '', /token=<secret-hidden>/);
    assert.equal(final.terminal.env.COPY, undefined, 'a variable holding the secret is not kept');
    const history = historyText(await h.client.workflow.getHandle(conversation.id).fetchHistory());
    assert.ok(history.includes('DEPLOY_TOKEN'), 'the search sees payload contents');
    assert.ok(!history.includes(SECRET));
    assert.ok(!history.includes('sk-faheem-test-secret'), 'the worker API key stays out of history');
    const unused = await start(oneCommand('echo "[$DEPLOY]" "[${FAHEEM_SECRET_DEPLOY_TOKEN:-none}]"'));
    await unused.conversation.run();
    const obs2 = (await unused.conversation.events()).find((e): e is ObservationEvent => e.kind === 'observation');
    assert.match(obs2?.content ?? '', /\[\] \[none\]/, 'not exported when not mentioned');
  });

  test('a command printing 15 MB gives a truncated observation and the conversation goes on', async () => {
    const { conversation } = await start(oneCommand('head -c 15000000 /dev/zero | tr "\\0" "z"'));
    const final = await conversation.run();
    assert.equal(final.status, 'finished');
    const obs = (await conversation.events()).find((e): e is ObservationEvent => e.kind === 'observation');
    assert.ok((obs?.content.length ?? 0) < 31_000);
    assert.match(obs?.content ?? '', /characters omitted/);
  });
});
