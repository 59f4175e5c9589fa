// MCP servers in real conversations: real servers from npm (server-everything over stdio and
// streamable HTTP, server-memory), a real Temporal dev server and worker processes. The model sees
// mcp__<server>__<tool>; calls are activities on the workspace host; a server that fails is an error
// event and the conversation goes on; annotations choose approval; a worker crash restarts servers.
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import { samePromptSameReply, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ConversationEvent, ErrorEvent, McpServersSpec, ObservationEvent } from '../../src/core/types.js';
import { freePort, historyText, ROOT, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

const everythingJs = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const memoryJs = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const TOKEN = 'mcp-token-5d0c7f1e9a-secret';

let h: Harness;
let worker: WorkerProcess;
let dir: string;
let http: ChildProcess | undefined;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'faheem-mcp-'));
  h = await startHarness({ name: 'mcp', script: () => ({ content: 'ok' }) });
  worker = await h.startWorker({ MEMORY_FILE: path.join(dir, 'memory.jsonl'), MCP_TOKEN: TOKEN, FAHEEM_MCP_ENV: 'MEMORY_FILE,MCP_TOKEN' });
});
after(async () => {
  if (http && http.exitCode === null) {
    http.kill('SIGTERM');
    await once(http, 'exit');
  }
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

function turns(...replies: ScriptedReply[]) {
  let i = 0;
  // A prompt asked again (a retried call) gets the same reply, not the next one.
  return samePromptSameReply((_req: RecordedRequest): ScriptedReply => replies[i++] ?? { content: 'Done.' });
}
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
const observations = (events: ConversationEvent[]) => events.filter((e): e is ObservationEvent => e.kind === 'observation');

/**
 * Each server carries a unique argument so the test can find its process (server-memory ignores extra arguments).
 * It writes MEMORY_FILE, in `dir`: the conversations that use it work there, because a stdio server runs in
 * the conversation's sandbox, where its workspace is the one writable directory.
 */
function memoryServer(tag: string): McpServersSpec[string] {
  return { command: process.execPath, args: [memoryJs, `--faheem-test=${tag}`], env: { MEMORY_FILE_PATH: '${MEMORY_FILE}' } };
}

async function running(tag: string): Promise<boolean> {
  const r = await execa('pgrep', ['-f', '--', `--faheem-test=${tag}`], { reject: false });
  return r.exitCode === 0;
}

async function start(replies: ScriptedReply[], mcpServers: McpServersSpec, options: Partial<CreateOptions> = {}) {
  h.model.setScript(turns(...replies));
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    mcpServers,
    ...options,
  });
  return conversation;
}

test('stdio servers: the model sees mcp__<server>__<tool>; calls work; a server that cannot start is an error event, the rest go on', async () => {
  const first = h.model.requests.length;
  const tag = `a${Date.now()}`;
  const conversation = await start(
    [
      call('mcp__everything__get-sum', { a: 20, b: 22 }),
      call('mcp__memory__create_entities', {
        entities: [{ name: 'faheem', entityType: 'project', observations: ['runs agents on Temporal'] }],
      }),
      call('mcp__memory__search_nodes', { query: 'faheem' }),
    ],
    {
      everything: { command: process.execPath, args: [everythingJs, 'stdio'] },
      memory: memoryServer(tag),
      broken: { command: process.execPath, args: ['-e', "console.error('boom: no database at db.internal:5432'); process.exit(3)"] },
    },
    { workspace: dir },
  );
  const final = await conversation.run();
  assert.equal(final.status, 'finished');
  const events = await conversation.events();
  const broken = events.find((e): e is ErrorEvent => e.kind === 'error' && e.message.includes('"broken"'));
  assert.ok(broken, 'an error event for the server that would not start');
  assert.match(broken.message, /boom: no database at db\.internal:5432/, 'with the tail of its stderr');
  const obs = observations(events);
  assert.deepEqual(
    obs.map((o) => o.isError),
    [false, false, false],
    obs.map((o) => o.content).join('\n'),
  );
  assert.match(obs[0]!.content, /42/);
  assert.match(obs[2]!.content, /runs agents on Temporal/);

  const tools = (h.model.requests[first]!.body.tools ?? []) as {
    function: { name: string; parameters: { properties?: Record<string, unknown> } };
  }[];
  const names = tools.map((t) => t.function.name);
  for (const n of ['terminal', 'mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__memory__read_graph'])
    assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
  assert.ok(!names.some((n) => n.startsWith('mcp__broken__')));
  assert.deepEqual(
    Object.keys(tools.find((t) => t.function.name === 'mcp__everything__get-sum')!.function.parameters.properties ?? {}).sort(),
    ['a', 'b'],
  );

  // Closing the conversation stops its servers on the host.
  assert.equal(await running(tag), true, 'the memory server runs while the conversation is open');
  await conversation.close();
  await waitFor('the memory server to stop after close', async () => !(await running(tag)), 30_000);
});

test('streamable HTTP with a ${VAR} header; the token stays on the worker', async () => {
  const port = await freePort();
  http = spawn(process.execPath, [everythingJs, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  await waitFor(
    'server-everything on HTTP',
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.end();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      }),
  );
  const conversation = await start([call('mcp__remote__echo', { message: 'hello over http' })], {
    remote: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer ${MCP_TOKEN}' } },
  });
  const final = await conversation.run();
  assert.equal(final.status, 'finished');
  const [obs] = observations(await conversation.events());
  assert.equal(obs!.isError, false, obs!.content);
  assert.match(obs!.content, /Echo: hello over http/);
  const history = historyText(await h.client.workflow.getHandle(conversation.id).fetchHistory());
  assert.ok(history.includes('${MCP_TOKEN}') && !history.includes(TOKEN), 'history holds the placeholder, never the token');
  await conversation.close();
});

test('annotations choose approval under risky: read-only runs, destructive waits', async () => {
  const tag = `b${Date.now()}`;
  const conversation = await start(
    [call('mcp__memory__read_graph', {}), call('mcp__memory__delete_entities', { entityNames: ['nobody'] })],
    { memory: memoryServer(tag) },
    { confirmationPolicy: 'risky', workspace: dir },
  );
  const waiting = await conversation.run().then(() => conversation.state());
  assert.equal(waiting.status, 'waiting_for_confirmation');
  assert.deepEqual(
    waiting.pendingActions.map((a) => a.tool),
    ['mcp__memory__delete_entities'],
  );
  assert.equal(observations(await conversation.events())[0]!.isError, false, 'read_graph ran without asking');
  await conversation.reject('keep them');
  assert.equal((await conversation.waitUntil((s) => s.status === 'finished')).status, 'finished');
  await conversation.close();
});

test('a worker killed mid-conversation: the new worker starts the MCP server again on the next call', async () => {
  const tag = `c${Date.now()}`;
  const conversation = await start(
    [
      call('mcp__memory__create_entities', {
        entities: [{ name: 'survivor', entityType: 'test', observations: ['written before the crash'] }],
      }),
      { content: 'written' },
      call('mcp__memory__open_nodes', { names: ['survivor'] }),
    ],
    { memory: memoryServer(tag) },
    { workspace: dir },
  );
  assert.equal((await conversation.run()).status, 'finished');
  await worker.kill('SIGKILL');
  await waitFor('the server to go with its worker', async () => !(await running(tag)), 30_000);
  worker = await h.startWorker({ MEMORY_FILE: path.join(dir, 'memory.jsonl'), MCP_TOKEN: TOKEN, FAHEEM_MCP_ENV: 'MEMORY_FILE,MCP_TOKEN' });
  await conversation.sendMessage('read it back');
  const final = await conversation.run();
  assert.equal(final.status, 'finished');
  const obs = observations(await conversation.events());
  assert.equal(obs[1]!.isError, false, obs[1]!.content);
  assert.match(obs[1]!.content, /written before the crash/);
  assert.equal(await running(tag), true, 'started again on the new worker');
  await conversation.close();
});

test("`faheem start --mcp-config file.json` takes the editors' format; a bad file is refused with the reason", async () => {
  const file = path.join(dir, 'mcp.json');
  await writeFile(
    file,
    JSON.stringify({
      mcpServers: {
        everything: { type: 'stdio', command: process.execPath, args: [everythingJs, 'stdio'] },
        off: { command: 'nope', disabled: true },
      },
    }),
  );
  h.model.setScript(turns(call('mcp__everything__echo', { message: 'from the cli' })));
  const { stdout } = await h.cli(['start', 'echo something', '--workspace', await h.workspace(), '--mcp-config', file, '--wait']);
  const conversation = await Conversation.attach(h.client, stdout.trim());
  const events = await conversation.events();
  assert.match(observations(events)[0]!.content, /Echo: from the cli/);
  assert.ok(!events.some((e) => e.kind === 'error'), 'the disabled server is not started');
  await conversation.close();

  await writeFile(file, JSON.stringify({ mcpServers: { 'bad name!': { command: 'x' }, both: { command: 'x', url: 'http://x' } } }));
  const refused = await h.cli(['start', 'x', '--mcp-config', file], { reject: false });
  assert.notEqual(refused.exitCode, 0);
  assert.match(refused.stderr, /server name "bad name!"/);
  assert.match(refused.stderr, /both "command" and "url"/);
});
