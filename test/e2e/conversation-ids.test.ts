// Conversation ids are checked at every entry: the CLI (every id argument, `start --id`, `fork
// --id`) and the SDK refuse an id with a path, `..` or other characters with the rule, and start
// nothing; ids of the forms we make (a schedule run's, with colons) still work. Real dev server,
// the real CLI; no worker is needed (nothing invalid gets that far).
import { execa } from 'execa';
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { InvalidRequestError } from '../../src/errors.js';
import { ROOT, startHarness, type Harness } from '../support/harness.js';

const RULE =
  /conversation id "[^"]*" is not valid: ids are 1–128 characters of letters, digits, '\.', '_', ':' and '-', start with a letter or digit, and never contain '\.\.'/;

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'conversation-ids', script: () => ({ content: 'done' }), record: false });
});
after(async () => {
  await h?.close();
});

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
