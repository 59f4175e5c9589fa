// Clear answers when a part is missing: no worker (status answers at once with the last known status,
// start and resume warn), a workspace that is not there, no server at all (every command names the
// address), and `faheem doctor` line by line. Real dev server, real worker processes.
import { WorkflowNotFoundError } from '@temporalio/client';
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Conversation } from '../../src/client/client.js';
import { ConversationClosedError, ConversationNotFoundError, FaheemError, InvalidRequestError } from '../../src/core/errors.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model.js';
import { ConversationStatusKey } from '../../src/conversation/workflow/messages.js';
import { FAKE_KEY, freePort, ROOT, startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
let rejecting: ScriptedModel;
before(async () => {
  [h, rejecting] = await Promise.all([
    startHarness({ name: 'clear-answers', script: () => ({ content: 'done' }), record: false }),
    // A model that refuses the key, quoting it the way providers do.
    startScriptedModel((req) => ({
      status: 401,
      error: `Incorrect API key provided: ${(req.authorization ?? '').replace(/^Bearer /, '')}`,
    })),
  ]);
});
after(async () => {
  await rejecting?.close();
  await h?.close();
});

/**
 * The CLI with the harness environment plus `extra`. A command that hangs is killed at a deadline
 * generous enough for a loaded machine (its answer's speed is measured in bench/answers.ts, not here).
 */
async function faheem(args: string[], extra: Record<string, string> = {}) {
  const r = await execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], {
    cwd: ROOT,
    env: { ...h.env, ...extra },
    reject: false,
    timeout: 60_000,
  });
  assert.ok(!r.timedOut, `faheem ${args.join(' ')} did not answer within 60 s`);
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode ?? -1 };
}

const json = (s: string) => JSON.parse(s) as Record<string, unknown>;

test('no worker: start warns, status answers at once with the last known status, resume warns, doctor names the queue', async () => {
  const workspace = await h.workspace();
  const start = await faheem(['start', 'Say done', '--workspace', workspace, '--id', 'ca-first']);
  assert.equal(start.exitCode, 0, start.stderr);
  assert.equal(start.stdout.trim(), 'ca-first', 'stdout stays the id alone');
  assert.match(start.stderr, /no worker polls the task queue faheem\b/);
  assert.match(start.stderr, /no worker polls the tool queue faheem-tools@/);

  // Never picked up: the status it was started with, marked as last known, and why.
  // It answers (it does not wait for the query, which nobody would answer) and says why.
  const human = await faheem(['status', 'ca-first']);
  assert.equal(human.exitCode, 0, human.stderr);
  assert.match(human.stdout, /running.*last known status: no worker answered/);
  assert.match(human.stdout, /no worker polls the task queue faheem\b/);
  const first = json((await faheem(['status', 'ca-first', '--json'])).stdout);
  assert.deepEqual(
    { id: first.id, status: first.status, lastKnown: first.lastKnown, workerPolling: first.workerPolling, taskQueue: first.taskQueue },
    { id: 'ca-first', status: 'running', lastKnown: true, workerPolling: false, taskQueue: 'faheem' },
  );

  // A conversation that recorded a status, on a queue nobody polls: that status, marked as last known.
  const input = {
    options: {
      workspace,
      agent: { llm: { usageId: 'agent' }, tools: ['terminal'] },
      toolTaskQueue: 'ca-nobody-tools',
      maxIterations: 5,
      confirmationPolicy: 'never',
      idleTimeoutMs: 600_000,
    },
  };
  await h.client.workflow.start('conversation', {
    workflowId: 'ca-paused',
    taskQueue: 'ca-nobody',
    args: [input],
    typedSearchAttributes: [{ key: ConversationStatusKey, value: 'paused' }],
  });
  const paused = await faheem(['status', 'ca-paused']);
  assert.equal(paused.exitCode, 0, paused.stderr);
  assert.match(paused.stdout, /paused.*last known status: no worker answered/);
  assert.match(paused.stdout, /no worker polls the task queue ca-nobody\b/);
  const pausedJson = json((await faheem(['status', 'ca-paused', '--json'])).stdout);
  assert.equal(pausedJson.status, 'paused');
  assert.equal(pausedJson.lastKnown, true);
  assert.equal(pausedJson.workerPolling, false);

  // resume warns about both queues (read from the conversation's own start input) while it waits.
  const resume = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'resume', 'ca-paused'], { cwd: ROOT, env: h.env, reject: false });
  let stderr = '';
  resume.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    await waitFor(
      'the resume warnings',
      () => /task queue ca-nobody\b/.test(stderr) && /tool queue ca-nobody-tools\b/.test(stderr),
      60_000,
    );
  } finally {
    resume.kill('SIGKILL');
    await resume;
  }

  const doctor = await faheem(['doctor']);
  assert.notEqual(doctor.exitCode, 0);
  assert.match(doctor.stdout, /^✗ workers .*no worker polls the task queue faheem\b/m);
  assert.match(doctor.stdout, /^✗ tool worker .*faheem-tools@/m);
  assert.match(doctor.stdout, /^✓ server .*Temporal/m);
  assert.match(doctor.stderr, /problems? found/);
});

test('a missing or unusable workspace is refused before anything starts', async () => {
  const missing = await faheem(['start', 'hi', '--workspace', '/no/such/dir', '--id', 'ca-nowhere']);
  assert.notEqual(missing.exitCode, 0);
  assert.match(missing.stderr, /workspace \/no\/such\/dir does not exist/);
  const file = path.join(await h.workspace(), 'a-file');
  await writeFile(file, 'x');
  const notDir = await faheem(['start', 'hi', '--workspace', file, '--id', 'ca-file']);
  assert.notEqual(notDir.exitCode, 0);
  assert.match(notDir.stderr, /is not a directory/);
  for (const id of ['ca-nowhere', 'ca-file']) {
    await assert.rejects(h.client.workflow.getHandle(id).describe(), WorkflowNotFoundError);
  }
});

test('with a worker: status answers from the workflow, doctor passes, --model makes one call', async () => {
  await h.startWorker();
  // Waited for with the test's client (a query, no CLI process per poll); then the CLI asked once.
  const first = await Conversation.attach(h.client, 'ca-first');
  await waitFor('ca-first finished', async () => (await first.state()).status === 'finished');
  const done = json((await faheem(['status', 'ca-first', '--json'])).stdout);
  assert.equal(done.status, 'finished');
  assert.equal(done.lastKnown, undefined);
  assert.equal(typeof done.iterations, 'number');
  const human = await faheem(['status', 'ca-first']);
  assert.doesNotMatch(human.stdout, /last known|no worker/);

  // A start with the worker up says nothing on stderr.
  const quiet = await faheem(['start', 'Say done', '--workspace', await h.workspace(), '--id', 'ca-second']);
  assert.equal(quiet.exitCode, 0, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /no worker/);

  const doctor = await faheem(['doctor']);
  console.log(doctor.stdout);
  assert.equal(doctor.exitCode, 0, doctor.stdout + doctor.stderr);
  for (const name of ['server', 'namespace', 'search attributes', 'workers', 'tool worker', 'model']) {
    assert.match(doctor.stdout, new RegExp(`^✓ ${name} `, 'm'), name);
  }
  assert.match(doctor.stdout, /^! encryption .*no encryption key configured/m);
  // Where bubblewrap works (here, and on CI), the default sandbox.
  assert.match(doctor.stdout, /^✓ sandbox +bubblewrap .*: a trial command runs confined, network internet/m);
  assert.match(doctor.stdout, /ConversationStatus, ConversationModel and FaheemTenant registered/);

  const call = await faheem(['doctor', '--model', 'openai/gpt-4o-mini']);
  assert.equal(call.exitCode, 0, call.stdout + call.stderr);
  assert.match(call.stdout, /^✓ model call .*openai\/gpt-4o-mini answered in \d+ ms/m);

  // `--model` with no name and no LLM_MODEL in this shell: the workers' model is called, not "no
  // model configured" under a worker that reports one.
  const theirs = await faheem(['doctor', '--model'], { LLM_MODEL: '' });
  assert.equal(theirs.exitCode, 0, theirs.stdout + theirs.stderr);
  assert.match(theirs.stdout, /^✓ model +openai\/gpt-4o-mini → .*the workers' model\)$/m);
  assert.match(theirs.stdout, /^✓ model call .*openai\/gpt-4o-mini answered in \d+ ms/m);
  assert.doesNotMatch(theirs.stdout, /no model configured/);

  const refused = await faheem(['doctor', '--model', 'openai/gpt-4o-mini'], { LLM_BASE_URL: rejecting.baseUrl });
  assert.notEqual(refused.exitCode, 0);
  assert.match(refused.stdout, /^✗ model call .*HTTP 401/m);
  assert.ok(rejecting.requests.length >= 1, 'the call reached the model');
  assert.ok(!(refused.stdout + refused.stderr).includes(FAKE_KEY), 'the key is masked');
  assert.match(refused.stdout, /<secret-hidden>/);
});

test('the SDK and the CLI tell errors apart by class: not found, refused, closed', async () => {
  await assert.rejects(
    Conversation.attach(h.client, 'ca-no-such'),
    (err: unknown) => err instanceof ConversationNotFoundError && err.id === 'ca-no-such',
  );
  const conversation = await Conversation.attach(h.client, 'ca-first');
  // Nothing waits for confirmation: the workflow's validator refuses, and says why.
  await assert.rejects(
    conversation.approve(),
    (err: unknown) => err instanceof InvalidRequestError && /nothing is waiting for confirmation/.test(err.message),
  );
  await assert.rejects(
    conversation.sendMessage(' '),
    (err: unknown) => err instanceof InvalidRequestError && err.message === 'message not sent: the message is empty',
  );
  const refused = await faheem(['reject', 'ca-first']);
  assert.equal(refused.exitCode, 1);
  assert.match(refused.stderr, /faheem: nothing is waiting for confirmation/);

  await conversation.close();
  await waitFor('ca-first closed', () => conversation.isClosed());
  await assert.rejects(
    conversation.sendMessage('more'),
    (err: unknown) => err instanceof ConversationClosedError && err instanceof FaheemError && err.code === 'conversation_closed',
  );
  await assert.rejects(conversation.pause(), ConversationClosedError);
  const closed = await faheem(['pause', 'ca-first']);
  assert.equal(closed.exitCode, 1);
  assert.match(closed.stderr, /cannot pause: conversation ca-first is closed/);
});

test('no server at all: every command exits non-zero naming the address (it does not hang)', async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const results = await Promise.all(
    [['worker'], ['status', 'x'], ['list'], ['start', 'hi', '--workspace', ROOT]].map(async (args) => ({
      args,
      ...(await faheem(args, { TEMPORAL_ADDRESS: address })),
    })),
  );
  for (const r of results) {
    assert.notEqual(r.exitCode, 0, r.args.join(' '));
    assert.match(r.stderr, new RegExp(`cannot reach Temporal at ${address.replace(/\./g, '\\.')} \\(connection refused\\)`), r.stderr);
    assert.match(r.stderr, /npx faheem server/);
  }
  const doctor = await faheem(['doctor'], { TEMPORAL_ADDRESS: address });
  assert.notEqual(doctor.exitCode, 0);
  assert.match(doctor.stdout, new RegExp(`^✗ server .*${address.replace(/\./g, '\\.')}`, 'm'));
});
