// The MCP client against real MCP servers (stdio and streamable HTTP), no Temporal.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type McpServers } from '../../src/mcp/config.js';
import { McpManager } from '../../src/mcp/manager.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const everythingJs = path.join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const memoryJs = path.join(root, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const sdk = (p: string) => pathToFileURL(path.join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href;

// A stdio server with the behaviours the reference servers lack. Imports by file URL so it runs from any cwd.
const FIXTURE = `
import { Server } from ${JSON.stringify(sdk('server/index.js'))};
import { StdioServerTransport } from ${JSON.stringify(sdk('server/stdio.js'))};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(sdk('types.js'))};
const obj = { type: 'object', properties: {} };
const tools = [
  { name: 'pid', description: 'Returns the process id', inputSchema: obj, annotations: { readOnlyHint: true } },
  { name: 'cwd', inputSchema: obj },
  { name: 'env', inputSchema: { type: 'object', properties: { name: { type: 'string' } } } },
  { name: 'crash', inputSchema: obj, annotations: { destructiveHint: true } },
  { name: 'sleep', inputSchema: { type: 'object', properties: { ms: { type: 'number' } } } },
  { name: 'mixed', inputSchema: obj },
  { name: 'structured', inputSchema: obj },
  { name: 'empty', inputSchema: obj },
  { name: 'fail', inputSchema: obj },
  { name: 'dotted.name', inputSchema: obj },
  { name: 'dotted_name', inputSchema: obj },
  { name: 'task-only', inputSchema: obj, execution: { taskSupport: 'required' } },
];
const server = new Server({ name: 'fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
// Three tools a page, so the client has to follow nextCursor.
server.setRequestHandler(ListToolsRequestSchema, async (req) => {
  const start = Number(req.params?.cursor ?? 0);
  const next = start + 3;
  return { tools: tools.slice(start, next), ...(next < tools.length ? { nextCursor: String(next) } : {}) };
});
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const text = (t) => ({ content: [{ type: 'text', text: t }] });
  const args = req.params.arguments ?? {};
  switch (req.params.name) {
    case 'pid': return text(String(process.pid));
    case 'cwd': return text(process.cwd());
    case 'env': return text(process.env[args.name] ?? '(unset)');
    case 'crash':
      console.error('fixture: crashing on purpose');
      process.exit(7);
    case 'sleep':
      await new Promise((resolve) => {
        const t = setTimeout(resolve, args.ms ?? 60000);
        extra.signal.addEventListener('abort', () => { clearTimeout(t); resolve(); });
      });
      return text('slept');
    case 'mixed': return { content: [
      { type: 'text', text: 'first' },
      { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///notes.txt', text: 'resource text' } },
      { type: 'resource', resource: { uri: 'file:///blob.bin', blob: 'AAAA' } },
      { type: 'resource_link', uri: 'file:///linked.txt', name: 'linked' },
    ] };
    case 'structured': return { content: [], structuredContent: { answer: 42 } };
    case 'empty': return { content: [] };
    case 'fail': return { isError: true, content: [{ type: 'text', text: 'it failed' }] };
    default: return text('called ' + req.params.name);
  }
});
console.error('fixture ready');
await server.connect(new StdioServerTransport());
`;

const fixture = (extra: { env?: Record<string, string>; cwd?: string } = {}) => ({
  command: process.execPath,
  args: ['--input-type=module', '-e', FIXTURE],
  ...extra,
});
const everything = (env?: Record<string, string>) => ({ command: process.execPath, args: [everythingJs], ...(env && { env }) });
const failing = { command: process.execPath, args: ['-e', "console.error('boom: no database'); process.exit(3)"] };

/** Polls `check` until it holds; fails after `timeoutMs`. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** server-everything over streamable HTTP on `port` (it reads PORT; the endpoint is /mcp). */
async function startHttpEverything(port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [everythingJs, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  await waitFor(`server-everything to listen on ${port}`, async () => {
    if (child.exitCode !== null) throw new Error(`server-everything exited: ${output}`);
    return canConnect(port);
  });
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

describe('MCP over stdio: server-everything', () => {
  const manager = new McpManager({
    env: { ...process.env, GREETING_NAME: 'world', FAHEEM_MCP_ENV: 'GREETING_NAME,MCP_TEST_LEVEL,MCP_TEST_MISSING_KEY' },
  });
  after(() => manager.closeAll());

  test('lists tools with schemas and annotations, and calls them', async () => {
    const servers: McpServers = { everything: everything() };
    const { tools, errors } = await manager.listTools('conv-1', servers);
    assert.deepEqual(errors, []);
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('mcp__everything__echo'), names.join(', '));
    const sum = tools.find((t) => t.name === 'mcp__everything__get-sum');
    assert.ok(sum);
    assert.equal(sum.server, 'everything');
    assert.equal(sum.tool, 'get-sum');
    assert.equal(sum.description, 'Returns the sum of two numbers');
    assert.equal(sum.inputSchema.type, 'object');
    assert.deepEqual(Object.keys(sum.inputSchema.properties as object), ['a', 'b']);
    assert.deepEqual(sum.annotations, {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
      title: 'Get Sum Tool',
    });
    // Its task-only tool cannot be called through tools/call, so the model never sees it.
    assert.ok(!names.includes('mcp__everything__simulate-research-query'));

    let r = await manager.callTool('conv-1', servers, 'everything', 'get-sum', { a: 20, b: 22 });
    assert.equal(r.isError, false);
    assert.match(r.content, /42/);
    r = await manager.callTool('conv-1', servers, 'everything', 'echo', { message: 'hello MCP' });
    assert.deepEqual(r, { content: 'Echo: hello MCP', isError: false });
    r = await manager.callTool('conv-1', servers, 'everything', 'get-tiny-image', {});
    assert.match(r.content, /\[image: image\/png, \d+ bytes base64\]/);
    r = await manager.callTool('conv-1', servers, 'everything', 'get-structured-content', { location: 'Chicago' });
    assert.match(r.content, /"temperature":36/);
    // A bad argument is the server's answer, not a failure of ours.
    r = await manager.callTool('conv-1', servers, 'everything', 'get-sum', { a: 'twenty' });
    assert.equal(r.isError, true);
    assert.match(r.content, /expected number/);
    r = await manager.callTool('conv-1', servers, 'nowhere', 'echo', {});
    assert.equal(r.isError, true);
    assert.match(r.content, /No MCP server named "nowhere" .*configured: everything/);
  });

  test("${VAR} in env reaches the child expanded; the worker's other variables do not", async () => {
    process.env.MCP_TEST_WORKER_SECRET = 'must-not-leak';
    try {
      const servers: McpServers = { everything: everything({ GREETING: 'hello ${GREETING_NAME}', LEVEL: '${MCP_TEST_LEVEL:-info}' }) };
      const r = await manager.callTool('conv-env', servers, 'everything', 'get-env', {});
      assert.equal(r.isError, false, r.content);
      const childEnv = JSON.parse(r.content) as Record<string, string>;
      assert.equal(childEnv.GREETING, 'hello world');
      assert.equal(childEnv.LEVEL, 'info');
      assert.equal(childEnv.PATH, process.env.PATH);
      assert.equal(childEnv.MCP_TEST_WORKER_SECRET, undefined);
    } finally {
      delete process.env.MCP_TEST_WORKER_SECRET;
    }
  });

  test('a missing ${VAR} is an error naming the server and the variable', async () => {
    const servers: McpServers = { needsKey: everything({ API_KEY: '${MCP_TEST_MISSING_KEY}' }) };
    const { tools, errors } = await manager.listTools('conv-missing', servers);
    assert.deepEqual(tools, []);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.server, 'needsKey');
    assert.match(
      errors[0]?.message ?? '',
      /could not start "needsKey" .*env API_KEY: \$\{MCP_TEST_MISSING_KEY\} is not set in the worker's environment/,
    );
    const r = await manager.callTool('conv-missing', servers, 'needsKey', 'echo', { message: 'x' });
    assert.equal(r.isError, true);
    assert.match(r.content, /MCP_TEST_MISSING_KEY/);
  });

  test('a server that cannot start is reported with its stderr; the others still answer', async () => {
    const servers: McpServers = { good: everything(), bad: failing, absent: { command: 'mcp-test-no-such-command' } };
    const { tools, errors } = await manager.listTools('conv-bad', servers);
    assert.ok(tools.some((t) => t.name === 'mcp__good__echo'));
    assert.ok(tools.every((t) => t.server === 'good'));
    const bad = errors.find((e) => e.server === 'bad');
    assert.match(bad?.message ?? '', /^could not start "bad" \(node …\): Connection closed\. Its stderr ended with:\nboom: no database/);
    assert.match(errors.find((e) => e.server === 'absent')?.message ?? '', /could not start "absent" .*ENOENT/);

    const r = await manager.callTool('conv-bad', servers, 'bad', 'anything', {});
    assert.equal(r.isError, true);
    assert.match(r.content, /boom: no database/);
  });
});

describe('MCP over stdio: fixture server', () => {
  const manager = new McpManager({ env: process.env });
  after(() => manager.closeAll());
  const servers: McpServers = { fixture: fixture() };
  const pidOf = async (conversationId: string, s: McpServers = servers, name = 'fixture') => {
    const r = await manager.callTool(conversationId, s, name, 'pid', {});
    assert.equal(r.isError, false, r.content);
    return Number(r.content);
  };

  test('follows nextCursor, sanitises names, reports name clashes, skips task-only tools', async () => {
    const { tools, errors } = await manager.listTools('conv-list', servers);
    assert.deepEqual(
      tools.map((t) => t.name),
      ['pid', 'cwd', 'env', 'crash', 'sleep', 'mixed', 'structured', 'empty', 'fail', 'dotted_name'].map((n) => `mcp__fixture__${n}`),
    );
    const dotted = tools.find((t) => t.name === 'mcp__fixture__dotted_name');
    assert.equal(dotted?.tool, 'dotted.name');
    assert.deepEqual(errors, [
      {
        server: 'fixture',
        message:
          'tool "dotted_name" was left out: its name mcp__fixture__dotted_name is already used by tool "dotted.name" of server "fixture"',
      },
    ]);
    const pid = tools.find((t) => t.tool === 'pid');
    assert.equal(pid?.description, 'Returns the process id');
    assert.deepEqual(pid?.annotations, { readOnlyHint: true });
    assert.deepEqual(tools.find((t) => t.tool === 'cwd')?.description, '');
    assert.deepEqual(tools.find((t) => t.tool === 'crash')?.annotations, { destructiveHint: true });
  });

  test('every kind of content becomes text', async () => {
    const call = (tool: string) => manager.callTool('conv-content', servers, 'fixture', tool, {});
    assert.deepEqual(await call('mixed'), {
      isError: false,
      content:
        'first\n[image: image/png, 8 bytes base64]\n[audio: audio/wav, 4 bytes base64]\nresource text\n[resource: file:///blob.bin]\n[resource link: file:///linked.txt]',
    });
    assert.deepEqual(await call('structured'), { isError: false, content: '{"answer":42}' });
    assert.deepEqual(await call('empty'), { isError: false, content: '(no output)' });
    assert.deepEqual(await call('fail'), { isError: true, content: 'it failed' });
  });

  test('one process per conversation, server and config; concurrent first uses share it', async () => {
    const pids = await Promise.all([pidOf('conv-a'), pidOf('conv-a'), pidOf('conv-a')]);
    assert.equal(new Set(pids).size, 1);
    const pidA = pids[0] as number;
    assert.equal(await pidOf('conv-a'), pidA);
    const pidB = await pidOf('conv-b');
    assert.notEqual(pidB, pidA);

    // A changed config starts a new process and ends the old one.
    const changed: McpServers = { fixture: fixture({ env: { MODE: 'changed' } }) };
    const pidA2 = await pidOf('conv-a', changed);
    assert.notEqual(pidA2, pidA);
    assert.equal((await manager.callTool('conv-a', changed, 'fixture', 'env', { name: 'MODE' })).content, 'changed');
    await waitFor('the old server to exit', () => !isAlive(pidA));

    await manager.closeConversation('conv-a');
    await waitFor("conv-a's server to exit", () => !isAlive(pidA2));
    assert.ok(isAlive(pidB));
  });

  test('the workspace is the cwd unless the config gives one (relative to the workspace)', async () => {
    const workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'mcp-ws-')));
    try {
      await mkdir(path.join(workspace, 'tools'));
      let r = await manager.callTool('conv-cwd', servers, 'fixture', 'cwd', {}, { cwd: workspace });
      assert.equal(r.content, workspace);
      r = await manager.callTool('conv-cwd', { fixture: fixture({ cwd: 'tools' }) }, 'fixture', 'cwd', {}, { cwd: workspace });
      assert.equal(r.content, path.join(workspace, 'tools'));
    } finally {
      await manager.closeConversation('conv-cwd');
      await rm(workspace, { recursive: true, force: true });
    }
  });

  test('a server that crashes during a call: error with its stderr, then a fresh start', async () => {
    const pid = await pidOf('conv-crash');
    const r = await manager.callTool('conv-crash', servers, 'fixture', 'crash', {});
    assert.equal(r.isError, true);
    assert.match(
      r.content,
      /^Calling tool "crash" on MCP server "fixture" failed: Connection closed \(the server has stopped; it will be started again on the next call\)\. Its stderr ended with:\n/,
    );
    assert.match(r.content, /fixture: crashing on purpose/);
    assert.ok(!isAlive(pid));
    const pid2 = await pidOf('conv-crash');
    assert.notEqual(pid2, pid);
  });

  test('a server killed from outside is started again on the next call', async () => {
    const pid = await pidOf('conv-kill');
    process.kill(pid, 'SIGKILL');
    await waitFor('the killed server to be gone', () => !isAlive(pid));
    const pid2 = await pidOf('conv-kill');
    assert.notEqual(pid2, pid);
    assert.ok(isAlive(pid2));
  });

  test('a timeout is an error result; the server stays usable', async () => {
    const pid = await pidOf('conv-timeout');
    const r = await manager.callTool('conv-timeout', servers, 'fixture', 'sleep', { ms: 30_000 }, { timeoutMs: 300 });
    assert.equal(r.isError, true);
    assert.match(r.content, /^Calling tool "sleep" on MCP server "fixture" failed: no answer within 300 ms/);
    assert.equal(await pidOf('conv-timeout'), pid);
  });

  test('an abort rejects with AbortError; the server stays usable', async () => {
    const pid = await pidOf('conv-abort');
    const controller = new AbortController();
    const pending = manager.callTool('conv-abort', servers, 'fixture', 'sleep', { ms: 30_000 }, { signal: controller.signal });
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await assert.rejects(manager.callTool('conv-abort', servers, 'fixture', 'pid', {}, { signal: AbortSignal.abort() }), {
      name: 'AbortError',
    });
    await assert.rejects(manager.listTools('conv-abort', servers, { signal: AbortSignal.abort() }), { name: 'AbortError' });
    assert.equal(await pidOf('conv-abort'), pid);
  });

  test('an idle connection is closed, and started again when needed', async () => {
    const idle = new McpManager({ env: process.env, idleMs: 200 });
    try {
      const r = await idle.callTool('conv-idle', servers, 'fixture', 'pid', {});
      const pid = Number(r.content);
      await waitFor('the idle server to be closed', () => !isAlive(pid));
      const r2 = await idle.callTool('conv-idle', servers, 'fixture', 'pid', {});
      assert.equal(r2.isError, false);
      assert.notEqual(Number(r2.content), pid);
    } finally {
      await idle.closeAll();
    }
  });

  test('closeAll ends every server', async () => {
    const own = new McpManager({ env: process.env });
    const pids = [
      Number((await own.callTool('c1', servers, 'fixture', 'pid', {})).content),
      Number((await own.callTool('c2', servers, 'fixture', 'pid', {})).content),
    ];
    assert.ok(pids.every(isAlive));
    await own.closeAll();
    await waitFor('all servers to exit', () => pids.every((p) => !isAlive(p)));
  });
});

describe('MCP over stdio: server-memory', () => {
  const manager = new McpManager({ env: process.env });
  let dir = '';
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mcp-memory-'));
  });
  after(async () => {
    await manager.closeAll();
    await rm(dir, { recursive: true, force: true });
  });

  test('create_entities then search_nodes and read_graph round-trip, in a temp memory file', async () => {
    const memoryFile = path.join(dir, 'memory.jsonl');
    const servers: McpServers = { memory: { command: process.execPath, args: [memoryJs], env: { MEMORY_FILE_PATH: memoryFile } } };
    const { tools, errors } = await manager.listTools('conv-mem', servers);
    assert.deepEqual(errors, []);
    assert.ok(tools.some((t) => t.name === 'mcp__memory__create_entities'));
    assert.equal(tools.find((t) => t.tool === 'delete_entities')?.annotations.destructiveHint, true);

    let r = await manager.callTool('conv-mem', servers, 'memory', 'create_entities', {
      entities: [{ name: 'faheemcode', entityType: 'project', observations: ['runs agents as durable Temporal workflows'] }],
    });
    assert.equal(r.isError, false, r.content);
    r = await manager.callTool('conv-mem', servers, 'memory', 'search_nodes', { query: 'durable' });
    assert.equal(r.isError, false, r.content);
    assert.equal((JSON.parse(r.content) as { entities: { name: string }[] }).entities[0]?.name, 'faheemcode');
    r = await manager.callTool('conv-mem', servers, 'memory', 'read_graph', {});
    assert.match(r.content, /runs agents as durable Temporal workflows/);
    assert.match(await readFile(memoryFile, 'utf8'), /"name":"faheemcode"/);
  });
});

describe('MCP over streamable HTTP', () => {
  const manager = new McpManager({ env: { ...process.env, MCP_TEST_TOKEN: 's3cret', FAHEEM_MCP_ENV: 'MCP_TEST_TOKEN,MCP_TEST_NO_TOKEN' } });
  let port = 0;
  let server: { child: ChildProcess; output: () => string } | undefined;
  before(async () => {
    port = await freePort();
    server = await startHttpEverything(port);
  });
  after(async () => {
    await manager.closeAll();
    if (server) await stop(server.child);
  });

  test('lists tools and calls echo through { url }', async () => {
    const servers: McpServers = { remote: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } } };
    const { tools, errors } = await manager.listTools('conv-http', servers);
    assert.deepEqual(errors, []);
    assert.ok(tools.some((t) => t.name === 'mcp__remote__echo'));
    const r = await manager.callTool('conv-http', servers, 'remote', 'echo', { message: 'over http' });
    assert.deepEqual(r, { content: 'Echo: over http', isError: false });
    assert.match(server?.output() ?? '', /Session initialized with ID/);
  });

  test('after the server restarts, one call fails and the next reconnects', async () => {
    const servers: McpServers = { remote: { url: `http://127.0.0.1:${port}/mcp` } };
    assert.equal((await manager.callTool('conv-restart', servers, 'remote', 'echo', { message: 'one' })).isError, false);
    if (server) await stop(server.child);
    server = await startHttpEverything(port);
    // The old session is unknown to the new process: that call fails and drops the connection.
    const failed = await manager.callTool('conv-restart', servers, 'remote', 'echo', { message: 'two' });
    assert.equal(failed.isError, true);
    assert.match(failed.content, /connection was dropped/);
    assert.deepEqual(await manager.callTool('conv-restart', servers, 'remote', 'echo', { message: 'three' }), {
      content: 'Echo: three',
      isError: false,
    });
  });

  test("header values are expanded from the worker's environment", async () => {
    // A stand-in server that records what it receives and refuses everything.
    const seen: (string | undefined)[] = [];
    const recorder = (await import('node:http')).createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(503).end('not today');
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    const recPort = (recorder.address() as AddressInfo).port;
    try {
      const url = `http://127.0.0.1:${recPort}/mcp`;
      let result = await manager.listTools('conv-headers', { rec: { url, headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } } });
      assert.equal(seen[0], 'Bearer s3cret');
      assert.match(
        result.errors[0]?.message ?? '',
        new RegExp(`^could not connect to "rec" \\(http://127\\.0\\.0\\.1:${recPort}/mcp\\): .*503`),
      );
      result = await manager.listTools('conv-headers', { rec: { url, headers: { Authorization: 'Bearer ${MCP_TEST_NO_TOKEN}' } } });
      assert.match(
        result.errors[0]?.message ?? '',
        /could not connect to "rec" .*header Authorization: \$\{MCP_TEST_NO_TOKEN\} is not set/,
      );
      // A variable the worker has but does not offer (FAHEEM_MCP_ENV) is never sent, whoever wrote the config.
      result = await manager.listTools('conv-headers', { rec: { url, headers: { Authorization: 'Bearer ${HOME}' } } });
      assert.match(
        result.errors[0]?.message ?? '',
        /header Authorization: \$\{HOME\} is not offered to MCP servers on this worker: list it in the worker's FAHEEM_MCP_ENV/,
      );
      assert.equal(seen.length, 1);
    } finally {
      await manager.closeConversation('conv-headers');
      await new Promise((resolve) => recorder.close(resolve));
    }
  });
});
