// Time travel against a real dev server: ten steps of shell commands appending to a file; rewind to
// step 4 puts 40 lines back and the model's next prompt holds steps 1–4 and the new message; a fork
// at step 2 works in its own copy; the user's own git repository is never written; a worker killed
// mid-rewind. (A rewind across continue-as-new and a condensation is a workflow rule:
// test/workflow/time-travel.test.ts.)
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { forkConversation } from '../../src/time-travel/fork.js';
import { samePromptSameReply, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, type Harness, type WorkerProcess } from '../support/harness.js';

/**
 * Step n appends ten lines "n.1" … "n.10" to log.txt, for `steps` steps (a user message "N more
 * steps" allows N more; "stop" ends at once). Counted here, not from the prompt: a condensation
 * or a rewind changes what the prompt shows. A prompt asked again (a retried call) gets the same
 * step, not the next one.
 */
function appendScript(steps: number) {
  let taken = 0;
  let budget = steps;
  return samePromptSameReply((request: RecordedRequest): ScriptedReply => {
    const messages = request.body.messages;
    const last = messages[messages.length - 1];
    if (last?.role === 'user') {
      const more = /^(\d+) more steps?$/.exec(String(last.content));
      if (more) budget = taken + Number(more[1]);
      if (last.content === 'stop') return { content: 'done' };
    }
    if (taken >= budget) return { content: 'done' };
    const n = ++taken;
    return { toolCalls: [{ name: 'terminal', arguments: { command: `for i in $(seq 1 10); do echo "${n}.$i" >> log.txt; done` } }] };
  });
}

let h: Harness;
let worker: WorkerProcess;
before(async () => {
  h = await startHarness({ name: 'time-travel', script: appendScript(10) });
  worker = await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });
const git = async (cwd: string, ...args: string[]) => (await execa('git', args, { cwd })).stdout;
const lines = async (dir: string) => (await readFile(path.join(dir, 'log.txt'), 'utf8')).trim().split('\n');

/** What a user's repository looks like to them: HEAD, refs, index and status. */
async function repoView(dir: string): Promise<string> {
  return [
    await git(dir, 'rev-parse', 'HEAD'),
    await git(dir, 'for-each-ref'),
    await git(dir, 'ls-files', '-s'),
    await git(dir, 'status', '--porcelain', '--', 'README.md'),
  ].join('\n---\n');
}

async function gitWorkspace(): Promise<string> {
  const dir = await h.workspace();
  await git(dir, 'init', '-q', '-b', 'main');
  await writeFile(path.join(dir, 'README.md'), "the user's own file\n");
  await git(dir, 'add', 'README.md');
  await git(dir, '-c', 'user.name=u', '-c', 'user.email=u@example.com', 'commit', '-qm', 'init');
  return dir;
}

test('ten steps, rewind to step 4: 40 lines, the next prompt holds steps 1–4 and the new message; a fork at step 2; the user repository untouched', async () => {
  h.model.setScript(appendScript(10));
  const workspace = await gitWorkspace();
  const repoBefore = await repoView(workspace);
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'append ten steps', run: true });
  const done = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(done.status, 'finished');
  assert.equal((await lines(workspace)).length, 100);

  const checkpoints = await conversation.checkpoints();
  assert.deepEqual(
    checkpoints.map((c) => c.step),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
  );
  assert.ok(
    checkpoints.slice(1, 11).every((c) => c.commit && c.changed + c.added === 1),
    JSON.stringify(checkpoints),
  );
  const listed = await h.cli(['checkpoints', conversation.id, '--json']);
  assert.equal(listed.stdout.trim().split('\n').length, 12);

  const answer = await conversation.rewind(4);
  assert.equal(answer.toStep, 4);
  assert.deepEqual(
    await lines(workspace),
    Array.from({ length: 40 }, (_, i) => `${Math.floor(i / 10) + 1}.${(i % 10) + 1}`),
  );
  const state = await conversation.state();
  assert.equal(state.status, 'paused');
  assert.equal(state.steps, 4);
  const events = await conversation.events();
  assert.ok(events.some((e) => e.kind === 'rewind'));
  assert.ok(events.filter((e) => e.rewound).length > 0, 'later steps stay readable, marked rewound');

  const before = h.model.requests.length;
  await conversation.sendMessage('stop');
  await conversation.run();
  const prompt = h.model.requests[before];
  assert.ok(prompt);
  const tools = prompt.body.messages.filter((m) => m.role === 'tool');
  assert.equal(tools.length, 4, 'steps 1–4 only');
  const users = prompt.body.messages.filter((m) => m.role === 'user').map((m) => m.content);
  assert.deepEqual(users, ['append ten steps', 'stop']);
  assert.equal(await repoView(workspace), repoBefore, "the user's repository (HEAD, refs, index, status) is unchanged");

  // A fork at step 2 in its own copy; the original stays as it is.
  const fork = await forkConversation(h.client, conversation.id, { at: 2 });
  const forkState = await fork.state();
  assert.equal(forkState.status, 'paused');
  assert.deepEqual(forkState.forkedFrom && { id: forkState.forkedFrom.id, step: forkState.forkedFrom.step }, {
    id: conversation.id,
    step: 2,
  });
  assert.notEqual(forkState.workspace, workspace);
  assert.equal((await lines(forkState.workspace)).length, 20);
  await fork.sendMessage('1 more step');
  const forkDone = await fork.run();
  assert.equal(forkDone.status, 'finished');
  assert.equal((await lines(forkState.workspace)).length, 30);
  assert.equal((await lines(workspace)).length, 40, 'the original is untouched by the fork');
  const status = JSON.parse((await h.cli(['status', fork.id, '--json'])).stdout) as { forkedFrom?: { id: string } };
  assert.equal(status.forkedFrom?.id, conversation.id);
});

test('a worker killed mid-rewind: the rewind completes on the next worker, the workspace as after the step', async () => {
  h.model.setScript(appendScript(6));
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'append six steps', run: true });
  await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  const rewinding = conversation.rewind(1);
  await worker.kill('SIGKILL');
  worker = await h.startWorker();
  const answer = await rewinding;
  assert.equal(answer.toStep, 1);
  assert.equal((await lines(workspace)).length, 10);
  assert.equal((await conversation.state()).status, 'paused');
});
