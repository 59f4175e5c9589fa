// Conversations on a schedule: created, listed, triggered (its conversation runs), paused,
// unpaused and deleted with the CLI, on a real Temporal server's Schedules.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Conversation } from '../../src/client.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'schedule', script: countdownScript({ delayMs: 20 }) });
  await h.startWorker();
});
after(async () => h?.close());

interface Row {
  name: string;
  paused: boolean;
  cron: string[];
  message: string;
  nextRuns: string[];
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
  const listed = await waitFor('the schedule listed', async () => (await schedules()).find((s) => s.name === 'nightly-countdown'));
  assert.deepEqual(listed.cron, ['0 3 1 1 *']);
  assert.equal(listed.message, 'Write countdown.txt');
  assert.equal(listed.paused, false);
  assert.match(listed.nextRuns[0] ?? '', /-01-01T03:00:00/);

  await h.cli(['schedule', 'trigger', 'nightly-countdown']);
  // The CLI lists the triggered conversation; one wait on it until it finishes (a CLI process every
  // 250 ms meanwhile would cost a busy machine more than the conversation does); then the CLI lists it finished.
  const triggeredRow = async () =>
    (await h.cli(['list', '--schedule', 'nightly-countdown', '--json'])).stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; status: string })[0];
  const triggered = await waitFor('the triggered conversation listed', triggeredRow, 120_000, 1_000);
  const conversation = await Conversation.attach(h.client, triggered.id);
  assert.equal((await conversation.waitUntilStopped({ timeoutMs: 300_000 })).status, 'finished');
  const run = await waitFor(
    'listed as finished',
    async () => {
      const row = await triggeredRow();
      return row?.status === 'finished' ? row : undefined;
    },
    120_000,
    1_000,
  );
  assert.match(run.id, /^nightly-countdown-/);
  const status = JSON.parse((await h.cli(['status', run.id, '--json'])).stdout) as { workspace?: string; iterations: number };
  assert.ok(status.iterations > 0);
  // Its memo has the title and workspace that listings (the console's) show.
  assert.deepEqual((await h.client.workflow.getHandle(run.id).describe()).memo, { workspace, title: 'Write countdown.txt' });

  await h.cli(['schedule', 'pause', 'nightly-countdown']);
  await waitFor('paused in the list', async () => (await schedules()).find((s) => s.name === 'nightly-countdown')?.paused === true);
  await h.cli(['schedule', 'unpause', 'nightly-countdown']);
  await waitFor('unpaused in the list', async () => (await schedules()).find((s) => s.name === 'nightly-countdown')?.paused === false);
  await h.cli(['schedule', 'delete', 'nightly-countdown']);
  await waitFor('gone from the list', async () => !(await schedules()).some((s) => s.name === 'nightly-countdown'));
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
