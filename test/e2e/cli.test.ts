// The `faheem` CLI as separate processes, on one real dev server and one real worker process (a
// scripted model, set per section): the seed scenario and its error messages; schedules; conversation
// ids checked at every entry. The sections share the worker (their worker settings are the same).
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { InvalidRequestError } from '../../src/errors.js';
import { listSchedules, scheduleRunsQuery } from '../../src/schedules.js';
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
