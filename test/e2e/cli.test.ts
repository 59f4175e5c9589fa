// The seed scenario through the `faheem` CLI, as separate processes, plus its error messages.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Conversation } from '../../src/client.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, waitUntilListed, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'cli', script: countdownScript({ delayMs: 0 }) });
  await h.startWorker();
});
after(async () => h?.close());

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
  for (const key of ['accumulatedCost', 'promptTokens', 'completionTokens', 'llmCalls']) assert.ok(key in (paused.metrics as object), key);

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
