import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { conversationStart, Agent, LLM, Conversation } from '../../../src/client/client.js';
import {
  CONVERSATION_ID_PATTERN,
  checkConversationId,
  conversationFolder,
  conversationIdProblem,
} from '../../../src/conversation/conversation-id.js';
import { InvalidRequestError } from '../../../src/core/errors.js';
import { conversationId as consoleId, parseOr400, HttpError } from '../../../src/console-server/requests.js';
import { fileEditorTool, terminalTool } from '../../../src/tools/builtin.js';
import type { ToolContext } from '../../../src/tools/define.js';

const RULE =
  /is not valid: ids are 1–128 characters of letters, digits, '\.', '_', ':' and '-', start with a letter or digit, and never contain '\.\.'/;

test('the ids we make and the ids people choose within the rule pass', () => {
  for (const id of [
    'conv-0a1b2c3d-4e5f',
    'conv-1.sub-1',
    'conv-1.sub-1.sub-12',
    // A schedule's run: `<name>-<time>`, the time in RFC 3339 (colons).
    'nightly-2026-12-01T03:00:00Z',
    'a',
    'A.b_c:d-e',
    'x'.repeat(128),
  ]) {
    assert.equal(conversationIdProblem(id, 'new'), undefined, id);
    assert.equal(checkConversationId(id), id);
  }
});

test('ids with a path, `..`, NUL, spaces or a bad start are refused with the rule', () => {
  for (const id of [
    '../x',
    '..',
    'a..b',
    'a/b',
    '/abs',
    'x/../y',
    'a\0b',
    'a b',
    '',
    '.hidden',
    '-x',
    ':x',
    'é',
    'a\nb',
    'x'.repeat(129),
  ]) {
    assert.match(conversationIdProblem(id, 'new') ?? '', RULE, JSON.stringify(id));
    assert.throws(
      () => checkConversationId(id, 'new'),
      (err: unknown) => err instanceof InvalidRequestError && RULE.test(err.message),
    );
  }
  // An existing id (made before ids were checked) needs only to be safe as one file name.
  for (const id of ['../x', '..', 'a..b', 'a/b', '/abs', 'x/../y', 'a\0b', '', '.hidden', 'a\nb', 'x'.repeat(256)])
    assert.match(conversationIdProblem(id) ?? '', RULE, JSON.stringify(id));
  for (const id of ['a b', '-x', ':x', 'é', 'x'.repeat(129), 'fix bug', 'a@b']) assert.equal(conversationIdProblem(id), undefined, id);
  for (const notText of [undefined, null, 3, {}]) assert.match(conversationIdProblem(notText) ?? '', RULE);
  assert.equal(CONVERSATION_ID_PATTERN.test('x'.repeat(128)), true);
});

test("a sub-agent's longer id is an existing id, never a new one", () => {
  const parent = 'p'.repeat(128);
  assert.equal(conversationIdProblem(`${parent}.sub-1`), undefined);
  assert.equal(conversationIdProblem(`${parent}.sub-1.sub-2`), undefined);
  assert.match(conversationIdProblem(`${parent}.sub-1`, 'new') ?? '', RULE);
  assert.match(conversationIdProblem(`${parent}.sub-x`, 'new') ?? '', RULE);
  assert.match(conversationIdProblem('.sub-1') ?? '', RULE);
  assert.match(conversationIdProblem(`${'p'.repeat(129)}.sub-1`, 'new') ?? '', RULE);
  assert.match(conversationIdProblem(`${parent}${'.sub-1'.repeat(30)}`) ?? '', RULE, 'over 255 characters');
});

test('the message is the rule, shown once, with a long id shortened', () => {
  assert.equal(
    conversationIdProblem('x/../y'),
    `conversation id "x/../y" is not valid: ids are 1–128 characters of letters, digits, '.', '_', ':' and '-', start with a letter or digit, and never contain '..'`,
  );
  assert.ok((conversationIdProblem('/'.repeat(10_000)) ?? '').length < 400);
});

test('the SDK refuses an invalid id before it talks to Temporal', async () => {
  const agent = new Agent({ llm: new LLM({ model: 'scripted/demo' }) });
  assert.throws(() => conversationStart({ agent, workspace: '/tmp', id: '../x' }), RULE);
  assert.equal(conversationStart({ agent, workspace: '/tmp', id: 'mine-1' }).id, 'mine-1');
  assert.match(conversationStart({ agent, workspace: '/tmp' }).id, CONVERSATION_ID_PATTERN);
  // The memo a listing reads: the workspace, and the first message on one line as the title.
  assert.deepEqual(conversationStart({ agent, workspace: '/tmp/w/', firstMessage: '  Fix\n the   bug ' }).workflow.memo, {
    workspace: '/tmp/w',
    title: 'Fix the bug',
  });
  assert.deepEqual(conversationStart({ agent, workspace: '/tmp' }).workflow.memo, { workspace: '/tmp' });
  // No client is used: the id is refused first.
  await assert.rejects(Conversation.attach(undefined as never, '../x'), RULE);
  await assert.rejects(Conversation.create(undefined as never, { agent, workspace: '/tmp', id: 'a/b' }), RULE);
});

test('the console answers 400 with the rule for an id in a path', () => {
  assert.equal(parseOr400(consoleId, 'conv-1.sub-1'), 'conv-1.sub-1');
  assert.throws(
    () => parseOr400(consoleId, '..'),
    (err: unknown) => err instanceof HttpError && err.status === 400 && RULE.test(err.message),
  );
});

test('conversationFolder: a folder under root for a valid id, a refusal otherwise', () => {
  assert.deepEqual(conversationFolder('/h/outputs', 'conv-1'), { dir: '/h/outputs/conv-1' });
  const refused = conversationFolder('/h/outputs', '../../etc');
  assert.ok('refused' in refused && RULE.test(refused.refused) && /did not run/.test(refused.refused));
});

test('the worker refuses a tool call whose conversation id would leave its folders, and writes nothing', async () => {
  const home = await mkdtemp(path.join(tmpdir(), 'faheem-id-'));
  const workspace = path.join(home, 'ws');
  try {
    const env = { FAHEEM_HOME: path.join(home, 'faheem'), PATH: process.env.PATH ?? '' };
    const ctx = (conversationId: string) =>
      ({
        conversationId,
        toolCallId: 't1',
        workspace,
        signal: new AbortController().signal,
        heartbeat() {},
        secrets: {},
        state: undefined,
        attempt: 1,
      }) as unknown as ToolContext<never>;
    const editor = fileEditorTool({ env });
    const edit = await editor.execute({ command: 'create', path: 'f.txt', file_text: 'x' } as never, ctx('../../escape'));
    assert.ok(typeof edit === 'object' && edit.isError === true && RULE.test(edit.content), JSON.stringify(edit));
    const terminal = terminalTool({ env, spawnHelper: false });
    const run = await terminal.execute({ command: 'echo hi' } as never, ctx('x/../../escape'));
    assert.ok(typeof run === 'object' && run.isError === true && RULE.test(run.content), JSON.stringify(run));
    // Nothing was made: no workspace file, no folder under the worker's home or beside it.
    assert.deepEqual((await readdir(home)).sort(), []);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test('ACP: session/load and prompt with an invalid session id answer -32602 with the rule', async () => {
  const { AcpSessions } = await import('../../../src/acp/sessions.js');
  const { toRequestError } = await import('../../../src/acp/agent.js');
  // No client: the id is refused before any use of it.
  const sessions = new AcpSessions({ client: undefined as never, defaultMode: 'never', keepSecret: (v) => v, log: () => {} });
  for (const call of [
    () => sessions.loadSession({ sessionId: '../x', cwd: '/tmp', mcpServers: [] }, undefined as never),
    () => sessions.prompt({ sessionId: 'a/../b', prompt: [] }, undefined as never, new AbortController().signal),
  ]) {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof InvalidRequestError && RULE.test(err.message), String(err));
    assert.equal(toRequestError(err).code, -32602);
  }
});
