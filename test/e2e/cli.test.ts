// The `faheem` CLI as separate processes, on one real dev server and one real worker process (a
// scripted model, set per section): the seed scenario and its error messages; what each command
// says and exits with; schedules; conversation ids checked at every entry. The sections share the
// worker (their worker settings are the same); the tests that need no worker, or another, use task
// queues of their own.
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { InvalidRequestError } from '../../src/core/errors.js';
import { listSchedules, scheduleRunsQuery } from '../../src/client/schedules.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import { ROOT, startHarness, waitFor, waitUntilListed, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'cli', script: countdownScript({ delayMs: 0 }) });
  await h.startWorker();
});
after(async () => h?.close());

// The seed scenario through the `faheem` CLI, as separate processes, plus its error messages.
describe('the seed scenario through the CLI, and its error messages', () => {
  before(() => h.model.setScript(countdownScript({ delayMs: 0 })));

  const status = async (id: string) => JSON.parse((await h.cli(['status', id, '--json'])).stdout) as Record<string, unknown>;

  test('start, pause, send while paused, resume, status --json, events --json, list, close', async () => {
    // The reply after the second step is held at the gate 'pause' (its stream open) until the pause has landed.
    h.model.setScript(countdownScript({ delayMs: 0, gates: { 2: 'pause' } }));
    const workspace = await h.workspace();
    const { stdout } = await h.cli(['start', 'Create countdown.txt with 100 down to 1', '--workspace', workspace, '--id', 'cli-seed']);
    assert.equal(stdout.trim(), 'cli-seed');

    const held = await h.model.reached('pause');
    assert.ok(((await status('cli-seed')).iterations as number) >= 2);
    await h.cli(['pause', 'cli-seed']);
    // Waited for with the SDK (a query, not a CLI process a poll); then `status` must say it.
    await (await Conversation.attach(h.client, 'cli-seed')).waitUntil((s) => s.status === 'paused', 100, 60_000);
    const paused = await status('cli-seed');
    assert.equal(paused.status, 'paused');
    for (const key of ['id', 'status', 'iterations', 'events', 'pendingMessages', 'metrics', 'lastError']) assert.ok(key in paused, key);
    for (const key of ['accumulatedCost', 'promptTokens', 'completionTokens', 'llmCalls'])
      assert.ok(key in (paused.metrics as object), key);

    await h.cli(['send', 'cli-seed', "Actually, stop. Create hello.txt with 'Hello, World!' instead."]);
    const afterSend = await status('cli-seed');
    assert.equal(afterSend.status, 'paused');
    assert.equal(afterSend.pendingMessages, 1);

    // Once the visibility store has it (waited for with the SDK), `list` shows it.
    await waitUntilListed(h, { status: 'paused' }, 'cli-seed');
    const listed = (await h.cli(['list', '--status', 'paused', '--json'])).stdout;
    assert.ok(listed.includes('"cli-seed"'), `list --status paused did not show it: ${listed}`);

    // The pause cancels the call under way (the server sends the cancellation to its worker).
    await waitFor('the held call cancelled', () => held.aborted);
    h.model.release('pause');
    await h.cli(['resume', 'cli-seed', '--wait']);
    const done = await status('cli-seed');
    assert.equal(done.status, 'finished');
    assert.equal(done.pendingMessages, 0);
    assert.equal(await readFile(path.join(workspace, 'hello.txt'), 'utf8'), 'Hello, World!\n');

    const lines = (await h.cli(['events', 'cli-seed', '--json'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    lines.forEach((e, i) => {
      assert.equal(e.index, i);
      assert.ok(typeof e.timestamp === 'string' && typeof e.kind === 'string' && typeof e.source === 'string');
    });
    const action = lines.find((e) => e.kind === 'action' && e.tool === 'terminal');
    assert.ok(action && typeof action.toolCallId === 'string' && typeof action.arguments === 'object');
    const obs = lines.find((e) => e.kind === 'observation' && e.tool === 'terminal');
    assert.ok(obs && obs.exitCode === 0 && obs.isError === false && typeof obs.content === 'string');
    for (const kind of ['message', 'pause', 'resume', 'status'])
      assert.ok(
        lines.some((e) => e.kind === kind),
        kind,
      );

    const human = (await h.cli(['events', 'cli-seed'])).stdout;
    assert.match(human, /paused/);
    assert.match(human, /terminal/);

    await waitUntilListed(h, { status: 'finished' }, 'cli-seed');
    assert.match((await h.cli(['list', '--status', 'finished'])).stdout, /^cli-seed {2}finished/m);
    await h.cli(['close', 'cli-seed']);
    const resumeClosed = await h.cli(['resume', 'cli-seed'], { reject: false });
    assert.notEqual(resumeClosed.exitCode, 0);
    assert.match(resumeClosed.stderr, /closed/);
  });

  test('careless input gets a clear error and a non-zero exit', async () => {
    const unknown = await h.cli(['status', 'no-such-conversation'], { reject: false });
    assert.notEqual(unknown.exitCode, 0);
    assert.match(unknown.stderr, /no conversation with id "no-such-conversation"/);

    const empty = await h.cli(['start', '   '], { reject: false });
    assert.notEqual(empty.exitCode, 0);
    assert.match(empty.stderr, /empty/);

    const badStatus = await h.cli(['list', '--status', 'sleeping'], { reject: false });
    assert.notEqual(badStatus.exitCode, 0);
    assert.match(badStatus.stderr, /Allowed choices/);

    const workspace = await h.workspace();
    await h.cli(['start', 'Create countdown.txt', '--workspace', workspace, '--id', 'cli-dup', '--wait']);
    const dup = await h.cli(['start', 'again', '--id', 'cli-dup'], { reject: false });
    assert.notEqual(dup.exitCode, 0);
    assert.match(dup.stderr, /already exists/);
    const big = await h.cli(['send', 'cli-dup', 'x'.repeat(100_001)], { reject: false });
    assert.notEqual(big.exitCode, 0);
    assert.match(big.stderr, /longer than/);
  });
});

// Every command says what happened and exits with it (CONTRACT, "CLI outcomes"): the changing
// commands' lines, the exit codes of --wait and --follow, a follow through pause and resume, the
// warning when no worker is there, the offline scripted model from the CLI, a bad flag's hint; and
// the SDK's run(), which is under way before it returns control and resolves with a small result.
describe('what each command says and exits with', () => {
  before(() => h.model.setScript(countdownScript({ delayMs: 0 })));
  // A command a failed test left running would keep this file's process alive.
  const spawned: ReturnType<typeof execa>[] = [];
  after(async () => {
    for (const child of spawned) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.allSettled(spawned);
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
});

// Conversations on a schedule: created, listed, triggered (its conversation runs), paused,
// unpaused and deleted with the CLI, on a real Temporal server's Schedules.
describe('schedules', () => {
  before(() => h.model.setScript(countdownScript({ delayMs: 20 })));

  interface Row {
    name: string;
    paused: boolean;
    cron: string[];
    message: string;
    nextRuns: string[];
  }

  /**
   * Waits until the test's client lists the schedule as `check` wants (the listing `faheem schedule
   * list` runs, listSchedules, on the same eventually consistent store: no CLI process per poll);
   * then the CLI is asked once, and what it prints is asserted.
   */
  async function untilListed(what: string, check: (row: Row | undefined) => boolean): Promise<Row | undefined> {
    await waitFor(what, async () => check((await listSchedules(h.client)).find((s) => s.name === 'nightly-countdown')));
    const row = (await schedules()).find((s) => s.name === 'nightly-countdown');
    assert.ok(check(row), `faheem schedule list: ${JSON.stringify(row)}`);
    return row;
  }

  const schedules = async (): Promise<Row[]> =>
    (await h.cli(['schedule', 'list', '--json'])).stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);

  test('a schedule is created, triggered (its conversation runs), listed, paused, unpaused and deleted', async () => {
    const workspace = await h.workspace();
    // Once a year: only the trigger runs it during the test. In the CONTRACT's order: --cron, then the message.
    const created = await h.cli([
      'schedule',
      'create',
      'nightly-countdown',
      '--cron',
      '0 3 1 1 *',
      'Write countdown.txt',
      '--workspace',
      workspace,
    ]);
    assert.equal(created.stdout.trim(), 'nightly-countdown');
    const listed = (await untilListed('the schedule listed', (s) => s !== undefined))!;
    assert.deepEqual(listed.cron, ['0 3 1 1 *']);
    assert.equal(listed.message, 'Write countdown.txt');
    assert.equal(listed.paused, false);
    assert.match(listed.nextRuns[0] ?? '', /-01-01T03:00:00/);

    await h.cli(['schedule', 'trigger', 'nightly-countdown']);
    // The triggered conversation is waited for with the test's client (the query `faheem list
    // --schedule` runs: no CLI process per poll), until it runs, finishes and is listed finished;
    // then the CLI lists it once.
    const runs = async (extra = '') => {
      for await (const w of h.client.workflow.list({ query: `${scheduleRunsQuery('nightly-countdown')}${extra}`, pageSize: 1 }))
        return w.workflowId;
      return undefined;
    };
    const triggered = await waitFor('the triggered conversation listed', () => runs(), 120_000, 1_000);
    const conversation = await Conversation.attach(h.client, triggered);
    assert.equal((await conversation.waitUntilStopped({ timeoutMs: 300_000 })).status, 'finished');
    await waitFor('listed as finished', () => runs(` AND ConversationStatus = 'finished'`), 120_000, 1_000);
    const rows = (await h.cli(['list', '--schedule', 'nightly-countdown', '--json'])).stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; status: string });
    assert.equal(rows.length, 1, JSON.stringify(rows));
    const run = rows[0]!;
    assert.equal(run.id, triggered);
    assert.equal(run.status, 'finished');
    assert.match(run.id, /^nightly-countdown-/);
    const status = JSON.parse((await h.cli(['status', run.id, '--json'])).stdout) as { workspace?: string; iterations: number };
    assert.ok(status.iterations > 0);
    // Its memo has the title and workspace that listings (the console's) show.
    assert.deepEqual((await h.client.workflow.getHandle(run.id).describe()).memo, { workspace, title: 'Write countdown.txt' });

    await h.cli(['schedule', 'pause', 'nightly-countdown']);
    await untilListed('paused in the list', (s) => s?.paused === true);
    await h.cli(['schedule', 'unpause', 'nightly-countdown']);
    await untilListed('unpaused in the list', (s) => s?.paused === false);
    await h.cli(['schedule', 'delete', 'nightly-countdown']);
    await untilListed('gone from the list', (s) => s === undefined);
    const gone = await h.cli(['schedule', 'trigger', 'nightly-countdown'], { reject: false });
    assert.notEqual(gone.exitCode, 0);
    assert.match(gone.stderr, /no schedule named "nightly-countdown"/);
  });

  test('a bad schedule name or a missing cron is refused with a clear message', async () => {
    const bad = await h.cli(['schedule', 'create', 'no spaces please', 'hi', '--cron', '* * * * *'], { reject: false });
    assert.notEqual(bad.exitCode, 0);
    assert.match(bad.stderr, /schedule name "no spaces please" is not valid/);
    const noCron = await h.cli(['schedule', 'create', 'x', 'hi'], { reject: false });
    assert.notEqual(noCron.exitCode, 0);
    assert.match(noCron.stderr, /--cron/);
  });
});

// Conversation ids are checked at every entry: the CLI (every id argument, `start --id`, `fork
// --id`) and the SDK refuse an id with a path, `..` or other characters with the rule, and start
// nothing; ids of the forms we make (a schedule run's, with colons) still work. Real dev server,
// the real CLI; no worker is needed (nothing invalid gets that far), and the valid one started
// here finishes at once.
describe('conversation ids', () => {
  const RULE =
    /conversation id "[^"]*" is not valid: ids are 1–128 characters of letters, digits, '\.', '_', ':' and '-', start with a letter or digit, and never contain '\.\.'/;

  before(() => h.model.setScript(() => ({ content: 'done' })));

  async function faheem(args: string[]) {
    const r = await execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], { cwd: ROOT, env: h.env, reject: false, timeout: 60_000 });
    assert.ok(!r.timedOut, `faheem ${args.join(' ')} did not answer within 60 s`);
    return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode ?? -1 };
  }

  /** Whether any workflow has this id on the server. */
  async function exists(id: string): Promise<boolean> {
    return h.client.workflow
      .getHandle(id)
      .describe()
      .then(
        () => true,
        () => false,
      );
  }

  test('the CLI refuses an id with a path with the rule and exit 1, and starts nothing', async () => {
    const workspace = await h.workspace();
    const start = await faheem(['start', 'hello', '--workspace', workspace, '--id', '../x']);
    assert.equal(start.exitCode, 1, start.stderr);
    assert.match(start.stderr, RULE);
    assert.equal(start.stdout, '');
    assert.equal(await exists('../x'), false);

    for (const args of [
      ['status', '../x'],
      ['events', 'a/../b'],
      ['send', '..', 'hi'],
      ['close', 'x/y'],
      ['list', '--parent', '../x'],
      ['fork', 'conv-1', '--at', '0', '--id', '../y'],
      ['rewind', '../x', '--to', '0'],
    ]) {
      const r = await faheem(args);
      assert.equal(r.exitCode, 1, `faheem ${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, RULE, args.join(' '));
    }
  });

  test("ids of the forms we make pass the CLI: a schedule run's (colons), a sub-agent's", async () => {
    const workspace = await h.workspace();
    const id = 'nightly-2026-12-01T03:00:00Z';
    const start = await faheem(['start', 'hello', '--workspace', workspace, '--id', id]);
    assert.equal(start.exitCode, 0, start.stderr);
    assert.equal(start.stdout.trim(), id);
    const status = await faheem(['status', id, '--json']);
    assert.equal(status.exitCode, 0, status.stderr);
    assert.equal((JSON.parse(status.stdout) as { id: string }).id, id);
    // A sub-agent's id passes the check and is simply not there.
    const child = await faheem(['status', `${id}.sub-1`]);
    assert.equal(child.exitCode, 1);
    assert.doesNotMatch(child.stderr, RULE);
    assert.match(child.stderr, /no conversation with id/);
    await h.client.workflow.getHandle(id).terminate('test done');
  });

  test('the SDK refuses an id with a path (create and attach) with an InvalidRequestError, and starts nothing', async () => {
    const workspace = await h.workspace();
    const agent = new Agent({ llm: new LLM({}) });
    const refused = (err: unknown) => err instanceof InvalidRequestError && RULE.test(err.message);
    await assert.rejects(Conversation.create(h.client, { agent, workspace, id: '../sdk-x' }), refused);
    await assert.rejects(Conversation.attach(h.client, 'sdk/../x'), refused);
    assert.equal(await exists('../sdk-x'), false);
  });
});
