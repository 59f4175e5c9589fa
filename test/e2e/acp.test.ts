// `faheem acp` driven by the ACP SDK's own client, as an editor would: a real dev server, a real
// worker process, the agent as a child process, every message it sends checked against ACP's schema.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { methods, type SessionUpdate } from '@agentclientprotocol/sdk';
import { Conversation } from '../../src/client/client.js';
import { lastUserMessage, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import { chunkText, startAcp, type AcpProcess } from '../support/acp.js';
import { Client, Connection } from '@temporalio/client';
import { chromium } from 'playwright-core';
import { startConsole } from '../../src/console-server/server.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import { ROOT, freePort, historyText, startHarness, waitFor, type Harness } from '../support/harness.js';
import { storeSettings } from '../../src/settings/store.js';

const HELLO = 'Hello from a durable conversation, streamed word by word.';

/** The tool results since the last user message. */
function since(request: RecordedRequest) {
  const m = request.body.messages;
  return m.slice(m.map((x) => x.role).lastIndexOf('user') + 1).filter((x) => x.role === 'tool');
}

/** Replies chosen by what the user asked (so that sessions side by side each get their own). */
function script(request: RecordedRequest): ScriptedReply {
  const ask = lastUserMessage(request);
  const done = since(request);
  if (ask.startsWith('hello')) return { content: `${HELLO} (${ask})`, wordByWord: true, chunkDelayMs: ask === 'hello there' ? 100 : 0 };
  if (ask.startsWith('work')) {
    if (done.length === 0)
      return {
        content: 'First the plan.',
        toolCalls: [
          {
            name: 'task_tracker',
            arguments: { command: 'plan', task_list: [{ title: 'Say hi', status: 'in_progress' }, { title: 'Finish' }] },
          },
        ],
      };
    if (done.length === 1) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo hi-from-the-terminal' } }] };
    return { content: 'All done.' };
  }
  if (ask.startsWith('edit')) {
    if (done.length === 0)
      return { toolCalls: [{ name: 'file_editor', arguments: { command: 'create', path: 'notes.txt', file_text: 'one\ntwo\n' } }] };
    if (done.length === 1)
      return {
        toolCalls: [{ name: 'file_editor', arguments: { command: 'str_replace', path: 'notes.txt', old_str: 'two', new_str: 'TWO' } }],
      };
    return { content: 'Edited.' };
  }
  if (ask.startsWith('sleep'))
    return done.length === 0 ? { toolCalls: [{ name: 'terminal', arguments: { command: 'sleep 600' } }] } : { content: 'woke' };
  if (ask.startsWith('touch')) {
    const file = ask.split(' ')[1]!;
    return done.length === 0
      ? { toolCalls: [{ name: 'terminal', arguments: { command: `touch ${file}` } }] }
      : { content: `tool said: ${String(done[0]?.content).slice(0, 200)}` };
  }
  if (ask.startsWith('gate')) {
    return done.length === 0
      ? {
          toolCalls: [
            {
              name: 'terminal',
              arguments: { command: 'echo before-the-gate; while [ ! -f go ]; do sleep 0.05; done; echo after-the-gate' },
            },
          ],
        }
      : { content: 'Finished while the editor was away.' };
  }
  // (The next prompt tells the model its reply was cut: the conversation's first message says what to do.)
  if (request.body.messages.some((m) => m.role === 'user' && String(m.content).startsWith('cut')))
    return { content: 'This reply runs into the output cap and', truncated: true };
  if (ask.startsWith('loop')) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo again' } }] };
  return { content: `ok: ${ask}` };
}

let h: Harness;
let acp: AcpProcess;
before(async () => {
  h = await startHarness({ name: 'acp', script });
  await h.startWorker();
  acp = await startAcp(h.env);
  const init = await acp.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities?.loadSession, true);
});
after(async () => {
  assert.deepEqual(acp?.problems ?? [], [], 'every message the agent sent fits ACP’s schema');
  await acp?.kill();
  await h?.close();
});

async function newSession(p: AcpProcess = acp, cwd?: string): Promise<string> {
  const { sessionId, modes } = await p.connection.agent.request(methods.agent.session.new, {
    cwd: cwd ?? (await h.workspace()),
    mcpServers: [],
  });
  assert.equal(modes?.currentModeId, 'never');
  assert.deepEqual(
    modes?.availableModes.map((m) => m.id),
    ['never', 'risky', 'always'],
  );
  return sessionId;
}

const prompt = (sessionId: string, text: string, p: AcpProcess = acp) =>
  p.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

const ofKind = <K extends SessionUpdate['sessionUpdate']>(updates: SessionUpdate[], kind: K) =>
  updates.filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);

type ToolCall = Extract<SessionUpdate, { sessionUpdate: 'tool_call' }>;
/**
 * Each tool call as a client holds it: the `tool_call` with every later `tool_call_update` folded in.
 * A command's first output can announce the call before its action event does (title 'Run a command');
 * the action's update then gives the title and input, as ACP allows.
 */
function toolCalls(updates: SessionUpdate[]): ToolCall[] {
  const calls = new Map<string, ToolCall>();
  for (const u of updates) {
    if (u.sessionUpdate === 'tool_call') calls.set(u.toolCallId, { ...u });
    else if (u.sessionUpdate === 'tool_call_update') {
      const known = calls.get(u.toolCallId);
      if (!known) continue;
      const { sessionUpdate: _kind, ...fields } = u;
      const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
      calls.set(u.toolCallId, { ...known, ...defined } as ToolCall);
    }
  }
  return [...calls.values()];
}

test('a prompt turn: the reply streams as message chunks, then usage and end_turn; the session is the conversation', async () => {
  const id = await newSession();
  const answer = await prompt(id, 'hello there');
  assert.equal(answer.stopReason, 'end_turn');
  const updates = acp.updates(id);
  const chunks = ofKind(updates, 'agent_message_chunk');
  assert.ok(chunks.length >= 2, `the reply came in pieces (${chunks.length})`);
  assert.equal(chunkText(updates, 'agent_message_chunk'), `${HELLO} (hello there)`, 'each word once');
  assert.equal(chunkText(updates, 'user_message_chunk'), '', 'the prompt is not echoed back');
  const usage = ofKind(updates, 'usage_update');
  assert.ok(usage.length >= 1 && usage.at(-1)!.used === 120 && usage.at(-1)!.cost?.currency === 'USD');
  // The session id is the conversation's: the SDK sees the same conversation.
  const conversation = await Conversation.attach(h.client, id);
  const events = await conversation.events();
  assert.ok(events.some((e) => e.kind === 'message' && e.source === 'user' && e.text === 'hello there'));
});

test('tool calls: a plan, a command with its output, kinds, titles, rawInput and rawOutput', async () => {
  const id = await newSession();
  const answer = await prompt(id, 'work please');
  assert.equal(answer.stopReason, 'end_turn');
  const updates = acp.updates(id);
  const plan = ofKind(updates, 'plan');
  assert.deepEqual(plan.at(-1)?.entries, [
    { content: 'Say hi', priority: 'medium', status: 'in_progress' },
    { content: 'Finish', priority: 'medium', status: 'pending' },
  ]);
  const run = toolCalls(updates).find((c) => c.kind === 'execute');
  assert.ok(run, 'the command is an execute tool call');
  assert.match(run.title, /echo hi-from-the-terminal/);
  assert.deepEqual(run.rawInput, { command: 'echo hi-from-the-terminal' });
  const finished = ofKind(updates, 'tool_call_update').filter((u) => u.toolCallId === run.toolCallId && u.status === 'completed');
  assert.equal(finished.length, 1);
  assert.match(JSON.stringify(finished[0]!.content), /hi-from-the-terminal/);
  assert.equal((finished[0]!.rawOutput as { exitCode?: number }).exitCode, 0);
  assert.equal(chunkText(updates, 'agent_message_chunk'), 'First the plan.All done.');
});

test('an edit is seen as a diff with its path, old and new text', async () => {
  const cwd = await h.workspace();
  const id = await newSession(acp, cwd);
  assert.equal((await prompt(id, 'edit the notes')).stopReason, 'end_turn');
  const updates = acp.updates(id);
  const edits = toolCalls(updates).filter((c) => c.kind === 'edit');
  assert.equal(edits.length, 2);
  assert.deepEqual(edits[0]!.locations, [{ path: path.join(cwd, 'notes.txt') }]);
  const diffs = ofKind(updates, 'tool_call_update')
    .filter((u) => u.status === 'completed')
    .flatMap((u) => u.content ?? [])
    .filter((c) => c.type === 'diff');
  assert.deepEqual(diffs, [
    { type: 'diff', path: path.join(cwd, 'notes.txt'), oldText: null, newText: 'one\ntwo\n' },
    { type: 'diff', path: path.join(cwd, 'notes.txt'), oldText: 'two', newText: 'TWO' },
  ]);
  assert.equal(await readFile(path.join(cwd, 'notes.txt'), 'utf8'), 'one\nTWO\n');
});

test('session/cancel during `sleep 600` pauses now: the command is interrupted and the prompt answers cancelled', async () => {
  const id = await newSession();
  const turn = prompt(id, 'sleep a long time');
  await waitFor('the command to start', () => ofKind(acp.updates(id), 'tool_call').some((c) => c.kind === 'execute'), 60_000);
  await acp.connection.agent.notify(methods.agent.session.cancel, { sessionId: id });
  assert.equal((await turn).stopReason, 'cancelled');
  const state = await (await Conversation.attach(h.client, id)).state();
  assert.equal(state.status, 'paused');
  const updates = ofKind(acp.updates(id), 'tool_call_update');
  assert.ok(
    updates.some((u) => u.status === 'failed' || u.status === 'completed'),
    'the interrupted command has its final status',
  );
});

test('modes are the confirmation policies: a permission allowed runs the action, one rejected does not', async () => {
  const cwd = await h.workspace();
  const id = await newSession(acp, cwd);
  await acp.connection.agent.request(methods.agent.session.setMode, { sessionId: id, modeId: 'always' });
  assert.equal((await (await Conversation.attach(h.client, id)).state()).confirmationPolicy, 'always');
  const asked = acp.permissions.length;
  acp.answerPermissions(() => ({ outcome: { outcome: 'selected', optionId: 'allow' } }));
  assert.equal((await prompt(id, 'touch allowed.txt')).stopReason, 'end_turn');
  assert.equal(acp.permissions.length, asked + 1);
  const request = acp.permissions.at(-1)!;
  assert.equal(request.sessionId, id);
  assert.equal(request.toolCall.kind, 'execute');
  assert.deepEqual(
    request.options.map((o) => o.kind),
    ['allow_once', 'reject_once'],
  );
  assert.ok(existsSync(path.join(cwd, 'allowed.txt')), 'allowed: it ran');

  acp.answerPermissions(() => ({ outcome: { outcome: 'selected', optionId: 'reject' } }));
  assert.equal((await prompt(id, 'touch rejected.txt')).stopReason, 'end_turn');
  assert.equal(acp.permissions.length, asked + 2);
  assert.ok(!existsSync(path.join(cwd, 'rejected.txt')), 'rejected: it did not run');
  assert.match(chunkText(acp.updates(id), 'agent_message_chunk'), /rejected/i, 'the model was told');
  await assert.rejects(acp.connection.agent.request(methods.agent.session.setMode, { sessionId: id, modeId: 'sometimes' }), /unknown mode/);
  // The workflow itself refuses a policy it does not know (an SDK caller that skipped the check).
  await assert.rejects((await Conversation.attach(h.client, id)).setConfirmationPolicy('sometimes' as never), /never, risky or always/);
});

test('the acp process killed mid-turn: the conversation finishes on the worker, and a new process loads all of it', async () => {
  const cwd = await h.workspace();
  const first = await startAcp(h.env);
  await first.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const id = await newSession(first, cwd);
  const turn = prompt(id, 'gate then finish', first);
  turn.catch(() => undefined);
  await waitFor('the command output', () => JSON.stringify(first.updates(id)).includes('before-the-gate'), 60_000);
  await first.kill('SIGKILL');
  assert.deepEqual(first.problems, []);
  await writeFile(path.join(cwd, 'go'), '');
  const conversation = await Conversation.attach(h.client, id);
  await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);

  const second = await startAcp(h.env);
  try {
    await second.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    await second.connection.agent.request(methods.agent.session.load, { sessionId: id, cwd, mcpServers: [] });
    const updates = second.updates(id);
    assert.equal(chunkText(updates, 'user_message_chunk'), 'gate then finish');
    assert.equal(chunkText(updates, 'agent_message_chunk'), 'Finished while the editor was away.');
    const call = ofKind(updates, 'tool_call')[0]!;
    assert.equal(call.kind, 'execute');
    const done = ofKind(updates, 'tool_call_update').find((u) => u.toolCallId === call.toolCallId && u.status === 'completed');
    assert.match(JSON.stringify(done?.content), /before-the-gate[\s\S]*after-the-gate/);
    // And the loaded session takes a new prompt.
    assert.equal((await prompt(id, 'hello again', second)).stopReason, 'end_turn');
    assert.match(chunkText(second.updates(id), 'agent_message_chunk'), /hello again/);
    assert.deepEqual(second.problems, []);
  } finally {
    await second.kill();
  }
});

test('a conversation started by the CLI is loaded by id, and listed under its workspace', async () => {
  const cwd = await h.workspace();
  const { stdout } = await h.cli(['start', 'started from the CLI', '--workspace', cwd, '--wait']);
  const id = stdout.trim();
  const listed = await acp.connection.agent.request(methods.agent.session.list, { cwd });
  assert.deepEqual(
    listed.sessions.map((s) => [s.sessionId, s.cwd]),
    [[id, cwd]],
  );
  await acp.connection.agent.request(methods.agent.session.load, { sessionId: id, cwd, mcpServers: [] });
  const updates = acp.updates(id);
  assert.equal(chunkText(updates, 'user_message_chunk'), 'started from the CLI');
  assert.equal(chunkText(updates, 'agent_message_chunk'), 'ok: started from the CLI');
});

test('two sessions at once, each with its own conversation and updates', async () => {
  const [a, b] = await Promise.all([newSession(), newSession()]);
  const [ra, rb] = await Promise.all([prompt(a, 'hello A'), prompt(b, 'hello B')]);
  assert.equal(ra.stopReason, 'end_turn');
  assert.equal(rb.stopReason, 'end_turn');
  assert.equal(chunkText(acp.updates(a), 'agent_message_chunk'), `${HELLO} (hello A)`);
  assert.equal(chunkText(acp.updates(b), 'agent_message_chunk'), `${HELLO} (hello B)`);
});

test('the iteration limit ends a turn with max_turn_requests; replies cut by the output cap, with max_tokens', async () => {
  const limited = await startAcp(h.env, ['--max-iterations', '2']);
  try {
    await limited.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const id = await newSession(limited);
    assert.equal((await prompt(id, 'loop for ever', limited)).stopReason, 'max_turn_requests');
    const cut = await newSession(limited);
    assert.equal((await prompt(cut, 'cut it short', limited)).stopReason, 'max_tokens');
    assert.deepEqual(limited.problems, []);
  } finally {
    await limited.kill();
  }
});

test('careless input gets JSON-RPC errors and the process stays up', async () => {
  // An unknown session, a malformed prompt, an image, a closed conversation.
  await assert.rejects(
    prompt('conv-no-such-session', 'hi'),
    (err: { code?: number; message?: string }) => err.code === -32002 && /unknown session/.test(err.message ?? ''),
  );
  const id = await newSession();
  await assert.rejects(
    acp.connection.agent.request(methods.agent.session.prompt, { sessionId: id, prompt: 'not a list' as never }),
    (err: { code?: number }) => err.code === -32602,
  );
  await assert.rejects(
    acp.connection.agent.request(methods.agent.session.prompt, {
      sessionId: id,
      prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    }),
    /image content is not supported/,
  );
  await assert.rejects(
    acp.connection.agent.request(methods.agent.session.load, { sessionId: 'conv-missing', cwd: '/tmp', mcpServers: [] }),
    (err: { code?: number }) => err.code === -32002,
  );
  await (await Conversation.attach(h.client, id)).close();
  await waitFor('the conversation to close', async () => (await Conversation.attach(h.client, id)).isClosed());
  await assert.rejects(prompt(id, 'still there?'), /closed/);
  await assert.rejects(acp.connection.agent.request(methods.agent.session.load, { sessionId: id, cwd: '/tmp', mcpServers: [] }), /closed/);

  // Out of order and malformed, raw on a fresh process: before initialize, not JSON at all.
  const raw = await startAcp(h.env);
  try {
    const early = raw.connection.agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
    await assert.rejects(early, (err: { code?: number }) => err.code === -32600);
    raw.process.stdin!.write('this is not json\n');
    await waitFor('a parse error', () => raw.lines.some((l) => /-32700/.test(l)));
    const init = await raw.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    assert.equal(init.protocolVersion, 1, 'still up, and answering');
    assert.deepEqual(raw.problems, []);
  } finally {
    await raw.kill();
  }
  // This process too.
  assert.equal((await prompt(await newSession(), 'hello still')).stopReason, 'end_turn');
});

test('a UserPromptSubmit hook that refuses the prompt ends the turn with refusal', async () => {
  const hooksFile = path.join(await h.workspace(), 'hooks.json');
  const refuse = `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{if(/password/.test(JSON.parse(s).prompt)){console.error("no passwords in prompts");process.exit(2)}})'`;
  await writeFile(hooksFile, JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: refuse }] }] } }));
  const hooked = await startAcp(h.env, ['--hooks', hooksFile]);
  try {
    await hooked.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const id = await newSession(hooked);
    assert.equal((await prompt(id, 'my password is hunter2', hooked)).stopReason, 'refusal');
    assert.match(chunkText(hooked.updates(id), 'agent_message_chunk'), /no passwords in prompts/);
    assert.equal((await prompt(id, 'hello, politely', hooked)).stopReason, 'end_turn');
    assert.deepEqual(hooked.problems, []);
  } finally {
    await hooked.kill();
  }
});

test('a permission request whose editor has gone stays pending; the next process that loads the session asks again', async () => {
  const cwd = await h.workspace();
  const first = await startAcp(h.env, ['--confirm', 'always']);
  await first.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId: id } = await first.connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
  first.answerPermissions(() => new Promise(() => undefined)); // the editor never answers: it is closed
  prompt(id, 'touch later.txt', first).catch(() => undefined);
  await waitFor('the permission request', () => first.permissions.length === 1, 60_000);
  await first.kill('SIGKILL');
  const conversation = await Conversation.attach(h.client, id);
  assert.equal((await conversation.state()).status, 'waiting_for_confirmation', 'still waiting, like any approval');

  const second = await startAcp(h.env);
  try {
    await second.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const loaded = await second.connection.agent.request(methods.agent.session.load, { sessionId: id, cwd, mcpServers: [] });
    assert.equal(loaded.modes?.currentModeId, 'always');
    // After the replay, the load follows the conversation: it asks, the answer approves, the run goes on.
    await waitFor('the run to finish', () => /tool said/.test(chunkText(second.updates(id), 'agent_message_chunk')), 60_000);
    assert.equal(second.permissions.length, 1);
    assert.ok(existsSync(path.join(cwd, 'later.txt')));
    assert.deepEqual(second.problems, []);
  } finally {
    await second.kill();
  }
});

test('with nothing answering at the Temporal address, it starts the embedded server (database under FAHEEM_HOME) and a worker', async () => {
  const home = await h.workspace();
  const address = `127.0.0.1:${await freePort()}`;
  const env = { ...h.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default', FAHEEM_HOME: home };
  const embedded = await startAcp(env);
  try {
    const init = await embedded.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    assert.equal(init.protocolVersion, 1);
    const cwd = await h.workspace();
    const everything = path.join(ROOT, 'node_modules', '.bin', 'mcp-server-everything');
    const { sessionId } = await embedded.connection.agent.request(methods.agent.session.new, {
      cwd,
      mcpServers: [{ name: 'everything', command: everything, args: ['stdio'], env: [{ name: 'MY_TOKEN', value: 'tok-literal-5e1f9c' }] }],
    });
    assert.equal((await prompt(sessionId, 'hello embedded', embedded)).stopReason, 'end_turn');
    assert.match(chunkText(embedded.updates(sessionId), 'agent_message_chunk'), /hello embedded/);
    assert.ok(existsSync(path.join(home, 'temporal.db')), 'the database is under FAHEEM_HOME');
    // The MCP server's literal value stayed out of the conversation's history.
    const connection = await Connection.connect({ address });
    try {
      const own = new Client({ connection, namespace: 'default', dataConverter: dataConverter(storeSettings(env)) });
      const history = historyText(await own.workflow.getHandle(sessionId).fetchHistory());
      assert.ok(history.includes('mcp-server-everything'), 'the MCP server is the conversation’s');
      assert.ok(!history.includes('tok-literal-5e1f9c'), 'its literal env value is not in the history');
    } finally {
      await connection.close();
    }
    assert.deepEqual(embedded.problems, []);
  } finally {
    await embedded.kill();
  }
});

test('each client shows the others’ doing: started in the editor, watched in the console (Chromium), a message and a pause from the CLI seen in both', async () => {
  const cwd = await h.workspace();
  const id = await newSession(acp, cwd);
  const console = await startConsole({ client: h.client, port: 0, temporalUiUrl: 'http://127.0.0.1:9' });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  try {
    const turn = prompt(id, 'gate, then read what the CLI said');
    await waitFor('the command output', () => JSON.stringify(acp.updates(id)).includes('before-the-gate'), 60_000);
    // The console shows the editor's prompt and the command it started.
    const page = await browser.newPage();
    await page.goto(console.url);
    await page
      .getByRole('link', { name: new RegExp(id) })
      .first()
      .click({ timeout: 30_000 });
    await page.getByRole('heading', { name: id }).waitFor({ timeout: 30_000 });
    await page.getByText('gate, then read what the CLI said').first().waitFor({ timeout: 30_000 });
    await page.locator('pre.output').filter({ hasText: 'before-the-gate' }).first().waitFor({ timeout: 30_000 });

    await h.cli(['send', id, 'a note from the CLI']);
    await writeFile(path.join(cwd, 'go'), '');
    assert.equal((await turn).stopReason, 'end_turn');
    assert.equal(chunkText(acp.updates(id), 'user_message_chunk'), 'a note from the CLI');
    assert.match(chunkText(acp.updates(id), 'agent_message_chunk'), /ok: a note from the CLI/);
    await page.getByText('ok: a note from the CLI').first().waitFor({ timeout: 30_000 });

    const sleeping = prompt(id, 'sleep until paused');
    await waitFor(
      'the command to start',
      () => toolCalls(acp.updates(id)).filter((c) => c.title.includes('sleep 600')).length === 1,
      60_000,
    );
    await h.cli(['pause', id, '--now']);
    assert.equal((await sleeping).stopReason, 'cancelled');
    await page.locator('.conv-head .status').filter({ hasText: 'paused' }).waitFor({ timeout: 30_000 });
  } finally {
    await browser.close();
    await console.close();
  }
});

test('a prompt while an action waits for approval asks for it first (a run would approve it); the earlier request is withdrawn', async () => {
  const cwd = await h.workspace();
  const { stdout } = await h.cli(['start', 'touch first.txt', '--workspace', cwd, '--confirm', 'always']);
  const id = stdout.trim();
  const conversation = await Conversation.attach(h.client, id);
  await conversation.waitUntil((s) => s.status === 'waiting_for_confirmation', 100, 60_000);
  const editor = await startAcp(h.env);
  try {
    await editor.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    editor.answerPermissions(() => new Promise(() => undefined)); // the person has not answered yet
    await editor.connection.agent.request(methods.agent.session.load, { sessionId: id, cwd, mcpServers: [] });
    await waitFor('the permission request', () => editor.permissions.length === 1, 60_000);
    editor.answerPermissions(() => ({ outcome: { outcome: 'selected', optionId: 'reject' } }));
    assert.equal((await prompt(id, 'hello after the approval', editor)).stopReason, 'end_turn');
    assert.equal(editor.permissions.length, 2, 'asked again by the prompt');
    assert.ok(!existsSync(path.join(cwd, 'first.txt')), 'the prompt did not approve it');
    assert.match(chunkText(editor.updates(id), 'agent_message_chunk'), /hello after the approval/);
    assert.deepEqual(editor.problems, []);
  } finally {
    await editor.kill();
  }
});
