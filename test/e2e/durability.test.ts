// Every process can die: the Temporal server (restarted on its SQLite file), the client waiting in
// run(). (Pauses at awkward moments, during a retry backoff or twice in a row, are workflow rules:
// test/workflow/conversation.test.ts.)
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { countdownScript } from '../../src/testing/scripted-model.js';
import { ROOT, startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  const db = path.join(await mkdtemp(path.join(tmpdir(), 'faheem-db-')), 'temporal.db');
  h = await startHarness({ name: 'durability', script: countdownScript({ delayMs: 0 }), db });
  await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor'] });
const countdown = Array.from({ length: 100 }, (_, i) => String(100 - i));

test('the Temporal server killed mid-conversation and restarted on its SQLite file: the conversation finishes', async () => {
  // The reply after three steps is held at the gate 'restart' while the server is down and back.
  h.model.setScript(countdownScript({ delayMs: 0, gates: { 3: 'restart' } }));
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'Write countdown.txt', run: true });
  await h.model.reached('restart');
  await h.restartServer();
  h.model.release('restart');
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished');
  const events = await conversation.events();
  // On failure, say what each step observed (a lost step shows as an error observation).
  const observed = events.flatMap((e) =>
    e.kind === 'observation' ? [`${e.index}: ${e.isError ? 'ERROR ' : ''}${e.content.slice(0, 160)}`] : [],
  );
  assert.deepEqual((await readFile(path.join(workspace, 'countdown.txt'), 'utf8')).trim().split('\n'), countdown, observed.join('\n'));
  events.forEach((e, i) => assert.equal(e.index, i));
  assert.equal(events.filter((e) => e.kind === 'action').length, events.filter((e) => e.kind === 'observation').length);
});

test('the client waiting in run() is killed; a new client attaches and sees the same conversation finish', async () => {
  // The reply after two steps is held at the gate 'client-dies' until the waiting client is gone.
  h.model.setScript(countdownScript({ delayMs: 0, gates: { 2: 'client-dies' } }));
  const workspace = await h.workspace();
  const waiting = execa(
    'node',
    [path.join(ROOT, 'bin/faheem.js'), 'start', 'Write countdown.txt', '--workspace', workspace, '--id', 'client-dies', '--wait'],
    {
      cwd: ROOT,
      env: h.env,
      reject: false,
    },
  );
  const conversation = await waitFor('the conversation exists', () => Conversation.attach(h.client, 'client-dies'));
  await h.model.reached('client-dies');
  assert.ok((await conversation.state()).iterations >= 2);
  waiting.kill('SIGKILL');
  const killed = await waiting;
  assert.equal(killed.signal, 'SIGKILL', 'the client was still waiting when it was killed');
  h.model.release('client-dies');
  const again = await Conversation.attach(h.client, 'client-dies');
  const final = await again.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished');
  assert.deepEqual((await readFile(path.join(workspace, 'countdown.txt'), 'utf8')).trim().split('\n'), countdown);
});
