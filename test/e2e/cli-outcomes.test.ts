// Every command says what happened and exits with it (CONTRACT, "CLI outcomes"): the changing
// commands' lines, the exit codes of --wait and --follow, a follow through pause and resume, the
// warning when no worker is there, the offline scripted model from the CLI, a bad flag's hint; and
// the SDK's run(), which is under way before it returns control and resolves with a small result.
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import { ROOT, startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'cli-outcomes', script: countdownScript({ delayMs: 0 }), record: false });
  await h.startWorker();
});
// A command a failed test left running would keep this file's process alive.
const spawned: ReturnType<typeof execa>[] = [];
after(async () => {
  for (const child of spawned) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.allSettled(spawned);
  await h?.close();
});

/** `faheem <args>` as a process of its own, its output collected as it comes. */
function spawnCli(args: string[], env: Record<string, string> = {}) {
  const child = execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], { cwd: ROOT, env: { ...h.env, ...env }, reject: false });
  spawned.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out.stderr += d.toString()));
  return { child, out };
}

test('pause, send, resume and close each say what happened; --quiet says nothing; events --follow goes through it all', async () => {
  h.model.setScript(countdownScript({ delayMs: 0, gates: { 2: 'held' } }));
  const workspace = await h.workspace();
  const id = (await h.cli(['start', 'Create countdown.txt with 100 down to 1', '--workspace', workspace])).stdout.trim();
  // One follower for the whole conversation: through the pause, the message and the resume, until the close.
  const follower = spawnCli(['events', id, '--follow']);
  await h.model.reached('held');

  const paused = await h.cli(['pause', id]);
  assert.equal(paused.stdout.trim(), `paused ${id} (was running)`);
  // Waited for with the SDK (a query, not a CLI process a poll).
  await (await Conversation.attach(h.client, id)).waitUntil((s) => s.status === 'paused', 100, 60_000);
  h.model.release('held');
  const again = await h.cli(['pause', id]);
  assert.equal(again.stdout.trim(), `${id} was already paused`);

  const quiet = await h.cli(['send', id, 'Keep it short.', '--quiet']);
  assert.equal(quiet.stdout, '');
  const sent = await h.cli(['send', id, "Actually, stop. Create hello.txt with 'Hello, World!' instead."]);
  assert.equal(sent.stdout.trim(), `message queued (2 waiting); \`faheem resume ${id}\` runs it`);

  const resumed = await h.cli(['resume', id, '--wait']);
  assert.equal(resumed.exitCode, 0);
  assert.match(resumed.stdout, new RegExp(`^resumed ${id} \\(run 2, was paused\\)$`, 'm'));
  assert.match(resumed.stderr, new RegExp(`${id} finished`));
  assert.equal(await readFile(path.join(workspace, 'hello.txt'), 'utf8'), 'Hello, World!\n');

  // The follower is still there after the run finished: it follows the conversation, not the run.
  assert.equal(follower.child.exitCode, null, 'events --follow ended before the close');
  const closed = await h.cli(['close', id]);
  assert.equal(closed.stdout.trim(), `closed ${id} (was finished)`);
  const { exitCode } = await follower.child;
  assert.equal(exitCode, 0, follower.out.stderr);
  const seen = follower.out.stdout;
  for (const line of [/⏸ paused/, /user: Actually, stop/, /▶ resumed/, /status → finished/]) assert.match(seen, line);
  assert.ok(seen.indexOf('⏸ paused') < seen.indexOf('▶ resumed') && seen.indexOf('▶ resumed') < seen.lastIndexOf('status → finished'));
  // Formatted lines only: no raw tool-call arguments as they formed.
  assert.doesNotMatch(seen, /←|\{"command"/);
  assert.match(follower.out.stderr, new RegExp(`${id} closed`));
});

test('--wait exits 1 on error and 2 on stuck, with the reason on stderr; 3 when someone else paused it', async () => {
  const workspace = await h.workspace();
  h.model.setScript(countdownScript({ delayMs: 0 }));
  const error = await h.cli(['start', 'Create countdown.txt', '--workspace', workspace, '--max-iterations', '1', '--wait'], {
    reject: false,
  });
  assert.equal(error.exitCode, 1, error.stderr);
  assert.match(error.stderr, /error: reached the maximum of 1 iterations/);
  assert.match(error.stdout, /^conv-/);

  h.model.setScript(() => ({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo same' } }] }));
  const stuck = await h.cli(['start', 'Echo', '--workspace', workspace, '--wait'], { reject: false });
  assert.equal(stuck.exitCode, 2, stuck.stderr);
  assert.match(stuck.stderr, /stuck: .*same action with the same result/);

  h.model.setScript(countdownScript({ delayMs: 0, gates: { 2: 'someone' } }));
  const waiter = spawnCli(['start', 'Create countdown.txt', '--workspace', workspace, '--wait']);
  await h.model.reached('someone');
  const id = waiter.out.stdout.trim();
  await h.cli(['pause', id, '--quiet']);
  h.model.release('someone');
  const { exitCode } = await waiter.child;
  assert.equal(exitCode, 3, waiter.out.stderr);
  assert.match(waiter.out.stderr, new RegExp(`${id} paused by someone else`));
  // Clean-up, not a claim: the SDK closes it (no CLI process).
  await (await Conversation.attach(h.client, id)).close();
});

test('with no worker, a waiting command warns while it waits and keeps waiting, or honours --timeout', async () => {
  // A task queue nobody polls: as if no worker ran.
  const nobody = { FAHEEM_TASK_QUEUE: 'cli-outcomes-nobody', FAHEEM_TOOL_TASK_QUEUE: 'cli-outcomes-nobody-tools' };
  const workspace = await h.workspace();
  const noWorker = /no worker polls the task queue cli-outcomes-nobody: start one with `npx faheem worker`/;
  // What a command that waited on a query until it gave up would print.
  const gaveUpOnAQuery = /no answer in time|Failed to query|gave up/;

  // start --follow has no time limit: the warning must come while it is still waiting, before it
  // ever gave up on anything (the deadline is generous for a loaded machine, not a speed claim).
  const starter = spawnCli(['start', 'Create countdown.txt', '--workspace', workspace, '--follow'], nobody);
  const started = await waitFor(
    'start --follow to start the conversation',
    () => /conversation (\S+)/.exec(starter.out.stderr),
    60_000,
    50,
  );
  const id = started[1]!;
  await waitFor('the no-worker warning of start --follow', () => noWorker.test(starter.out.stderr), 60_000, 50);
  assert.equal(starter.child.exitCode, null, 'it keeps waiting');
  assert.doesNotMatch(starter.out.stderr, gaveUpOnAQuery, 'warned before giving up on anything');

  // events --follow warns too, before its queries would give up (30 s), and keeps waiting.
  const follower = spawnCli(['events', id, '--follow'], nobody);
  await waitFor('the no-worker warning of events --follow', () => noWorker.test(follower.out.stderr), 60_000, 50);
  assert.equal(follower.child.exitCode, null, 'it keeps waiting');
  assert.doesNotMatch(follower.out.stderr, gaveUpOnAQuery, 'warned before a query gave up');
  for (const p of [starter, follower]) p.child.kill('SIGINT');
  await Promise.all([starter.child, follower.child]);

  const gaveUp = await h.cli(['resume', id, '--wait', '--timeout', '1'], { env: nobody, reject: false });
  assert.equal(gaveUp.exitCode, 124, gaveUp.stderr);
  assert.match(gaveUp.stderr, /gave up after 1 s \(--timeout\)/);
  for (const r of [gaveUp, follower.out, starter.out]) assert.doesNotMatch(r.stderr, /Failed to query|ServiceError/);
  await h.client.workflow.getHandle(id).terminate('test done');
});

test('LLM_MODEL=scripted/demo from the CLI: the worker says so at start, and runs the offline script', async () => {
  const queues = { FAHEEM_TASK_QUEUE: 'cli-outcomes-scripted', FAHEEM_TOOL_TASK_QUEUE: 'cli-outcomes-scripted-tools' };
  const worker = await h.startWorker({ ...queues, LLM_BASE_URL: '', LLM_API_KEY: '' }, ['--model', 'scripted/demo']);
  assert.match(worker.output(), /model scripted\/demo: the OFFLINE SCRIPTED MODEL/);
  const workspace = await h.workspace();
  const run = await h.cli(['start', 'Create countdown.txt with 100 down to 1', '--workspace', workspace, '--wait'], { env: queues });
  assert.equal(run.exitCode, 0, run.stderr);
  assert.match(await readFile(path.join(workspace, 'countdown.txt'), 'utf8'), /^100\n99\n/);
  const status = JSON.parse((await h.cli(['status', run.stdout.trim(), '--json'], { env: queues })).stdout) as Record<string, unknown>;
  assert.equal(status.model, 'scripted/demo');
  assert.equal((status.metrics as { accumulatedCost: number }).accumulatedCost, 0);
  // No price warning for it, and doctor reads the model from the worker, not from this environment.
  assert.doesNotMatch(worker.output(), /no price known/);
  const doctor = await h.cli(['doctor'], { env: { ...queues, LLM_MODEL: 'openai/not-the-workers' }, reject: false });
  assert.match(doctor.stdout, /model +the worker reports scripted\/demo/);
  await worker.kill();
});

test("settings are checked where they are read: doctor names a bad one, a client does not stop for a worker's", async () => {
  const bad = { FAHEEM_METRICS_PORT: 'http' };
  const listed = await h.cli(['list', '--json'], { env: bad, reject: false });
  assert.equal(listed.exitCode, 0, listed.stderr);
  const doctor = await h.cli(['doctor'], { env: bad, reject: false });
  assert.notEqual(doctor.exitCode, 0);
  assert.match(doctor.stdout, /FAHEEM_METRICS_PORT +http \(not valid: must be a port number\)/);
  assert.match(doctor.stderr, /FAHEEM_METRICS_PORT must be a port number \(fix or unset it\)/);
});

test('a bad flag prints the error and one hint, not the whole help', async () => {
  const bad = await h.cli(['start', 'x', '--bogus'], { reject: false });
  assert.equal(bad.exitCode, 1);
  assert.match(bad.stderr, /unknown option '--bogus'/);
  assert.match(bad.stderr, /`faheem start --help` lists the options/);
  assert.doesNotMatch(bad.stderr, /Usage:|--workspace/);
});

test('SDK: run() is under way before it returns control, and resolves with {status, reason}', async () => {
  h.model.setScript(countdownScript({ delayMs: 0, gates: { 1: 'sdk' } }));
  const agent = new Agent({ llm: new LLM({}), tools: ['terminal', 'file_editor'] });
  const conversation = await Conversation.create(h.client, { agent, workspace: await h.workspace() });
  await conversation.sendMessage('Create countdown.txt');
  const running = conversation.run();
  assert.equal((await conversation.state()).status, 'running');
  await conversation.pause();
  h.model.release('sdk');
  const stopped = await running;
  assert.deepEqual(stopped, { status: 'paused', reason: 'a pause request' });
  await conversation.close();
});

test('status says what a running conversation waits for: a tool queue nobody polls, since when, what next', async () => {
  // The worker runs the conversation; nobody polls the tool queue it names (no worker by the workspace).
  const noHost = { FAHEEM_TOOL_TASK_QUEUE: 'cli-outcomes-no-host' };
  const workspace = await h.workspace();
  const id = (await h.cli(['start', 'Create countdown.txt with 3 down to 1', '--workspace', workspace], { env: noHost })).stdout.trim();
  const before = Date.now();
  type Waiting = { for: string; since: string; next: string } | null;
  // The call scheduled on that queue (seen with the SDK: a describe, not a CLI process a poll); then
  // `status --json` must say what it waits for.
  await waitFor('a call scheduled on the queue nobody polls', async () => {
    const { raw } = await h.client.workflow.getHandle(id).describe();
    return (raw.pendingActivities ?? []).some(
      (a) => a.state === 1 /* SCHEDULED */ && a.activityOptions?.taskQueue?.name === noHost.FAHEEM_TOOL_TASK_QUEUE,
    );
  });
  const json = JSON.parse((await h.cli(['status', id, '--json'])).stdout) as { status: string; waiting: Waiting };
  assert.ok(json.waiting, JSON.stringify(json));
  assert.equal(json.status, 'running');
  assert.match(json.waiting!.for, /^a worker on the task queue cli-outcomes-no-host \(no worker polls it; \w+ waits\)$/);
  assert.ok(Date.parse(json.waiting!.since) <= Date.now(), json.waiting!.since);
  assert.ok(Date.parse(json.waiting!.since) >= before - 60_000, json.waiting!.since);
  assert.equal(json.waiting!.next, 'it goes on once `faheem worker` runs on the machine with the workspace');
  const human = (await h.cli(['status', id])).stdout;
  assert.match(
    human,
    /\n {2}waiting for a worker on the task queue cli-outcomes-no-host \(no worker polls it; \w+ waits\), for \d+ s \(since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); it goes on once `faheem worker` runs on the machine with the workspace/,
  );
  // A conversation that waits for nothing says so: `waiting` is null.
  await (await Conversation.attach(h.client, id)).close();
  const finished = (
    await h.cli(['start', 'Create countdown.txt with 3 down to 1', '--workspace', await h.workspace(), '--wait'])
  ).stdout.trim();
  const done = JSON.parse((await h.cli(['status', finished, '--json'])).stdout) as { waiting: Waiting };
  assert.equal(done.waiting, null);
});
