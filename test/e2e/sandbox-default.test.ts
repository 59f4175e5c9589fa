// The default box, with real workers: a worker started with no sandbox flags runs commands under
// bubblewrap with the internet network (nothing of this host's loopback or addresses reachable), and
// commands, their /proc, and the MCP stdio servers a conversation names see none of the worker's
// variables; `--sandbox none` still starts commands from the allowlist; a command left running past
// its soft timeout ends, with the kept network, at `pause --now` and at `close` (both workers).
//
// What this can and cannot show: the machine has no route to the internet, so the internet network is
// shown by its parts (the command's default route goes through slirp4netns's tap device, names are
// resolved by its forwarder) and by what it refuses: TCP listeners this test opens on 127.0.0.1 and on
// this host's own non-loopback address, which an unsandboxed command reaches.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import { execa } from 'execa';
import { lastUserMessage, samePromptSameReply, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ConversationEvent, ObservationEvent } from '../../src/core/types.js';
import { ROOT, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

const marker = `leak${process.pid}x${Date.now()}`;
// Variables a worker commonly has that are none of a command's business; the old denylist let them through.
const WORKER_SECRETS = {
  AWS_SECRET_ACCESS_KEY: `aws-${marker}`,
  GITHUB_TOKEN: `ghp-${marker}`,
  DATABASE_URL: `postgres://u:db-${marker}@db/x`,
  SSH_AUTH_SOCK: `/tmp/ssh-${marker}.sock`,
  STRIPE_SECRET_KEY: `sk-${marker}`,
  OTEL_EXPORTER_OTLP_HEADERS: `authorization=otel-${marker}`,
};
const sdk = (p: string) => pathToFileURL(path.join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href;
// A stdio MCP server whose one tool tells what its process sees and may do.
const PROBE_SERVER = `
import { Server } from ${JSON.stringify(sdk('server/index.js'))};
import { StdioServerTransport } from ${JSON.stringify(sdk('server/stdio.js'))};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(sdk('types.js'))};
import { readFileSync, writeFileSync } from 'node:fs';
const server = new Server({ name: 'probe', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'probe', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }] }));
const attempt = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };
server.setRequestHandler(CallToolRequestSchema, async () => {
  const seen = {
    env: Buffer.from(JSON.stringify(process.env)).toString('base64'),
    pid1: readFileSync('/proc/1/comm', 'utf8').trim(),
    usr: attempt(() => writeFileSync('/usr/local/${marker}-mcp', 'x')),
    workspace: attempt(() => writeFileSync('mcp-wrote.txt', 'x')),
  };
  return { content: [{ type: 'text', text: JSON.stringify(seen) }] };
});
await server.connect(new StdioServerTransport());
`;

describe('the default box', () => {
  const OPEN_QUEUE = `sandbox-none-${process.pid}`;
  let h: Harness;
  let boxed: WorkerProcess;
  let open: WorkerProcess;
  const listeners: net.Server[] = [];
  let hostAddress: string | undefined;

  before(async () => {
    h = await startHarness({ name: 'sandbox-default', script: () => ({ content: 'ok' }), env: WORKER_SECRETS });
    // A quiet command comes back still running after 2 s (the writers below; the other commands here print at once).
    const soft = { FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '2' };
    [boxed, open] = await Promise.all([
      h.startWorker(soft),
      // Unsandboxed on purpose, with its own tool queue (its main queue unused).
      h.startWorker({ ...soft, FAHEEM_TASK_QUEUE: `unused-${OPEN_QUEUE}`, FAHEEM_TOOL_TASK_QUEUE: OPEN_QUEUE }, ['--sandbox', 'none']),
    ]);
    hostAddress = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  });
  after(async () => {
    for (const l of listeners) l.close();
    await h?.close();
  });

  const agent = (tools: string[] = ['terminal']) => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools });
  const sh = (command: string) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
  const observations = (events: ConversationEvent[]) => events.filter((e): e is ObservationEvent => e.kind === 'observation');
  async function run(replies: ScriptedReply[], options: Partial<CreateOptions> = {}, tools?: string[]) {
    let i = 0;
    h.model.setScript(samePromptSameReply((_req: RecordedRequest): ScriptedReply => replies[i++] ?? { content: 'Done.' }));
    const workspace = options.workspace ?? (await h.workspace());
    const conversation = await Conversation.create(h.client, { agent: agent(tools), workspace, firstMessage: 'go', ...options });
    const final = await conversation.run();
    const events = await conversation.events();
    return { final, workspace, events, obs: observations(events) };
  }
  /** A command's output, base64 in the observation (so masking cannot hide what it printed), decoded. */
  const decoded = (content: string) => Buffer.from(content.split('\n')[0]!.trim(), 'base64').toString('utf8');
  const leaked = (text: string) => Object.entries(WORKER_SECRETS).filter(([k, v]) => text.includes(v) || text.includes(`${k}=`));

  async function listen(host: string): Promise<number> {
    const server = net.createServer((s) => s.end('hello\n'));
    listeners.push(server);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return (server.address() as AddressInfo).port;
  }
  const connect = (host: string, port: number) =>
    `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port} && head -1 <&3' 2>/dev/null | grep -q hello && echo "${host} connected" || echo "${host} refused"`;

  test('a worker with no flags runs commands under bubblewrap with the internet network, and says so', async () => {
    assert.match(boxed.output(), /faheem worker: commands run under bubblewrap \(.*network internet: public addresses only/);
    assert.match(open.output(), /faheem worker: commands run unsandboxed, with this user's rights \(--sandbox none\)/);
    const { final, obs } = await run([sh(`touch /usr/local/${marker}`), sh('cat /proc/1/comm')]);
    assert.equal(final.status, 'finished');
    assert.match(obs[0]!.content, /Read-only file system/);
    assert.ok(!existsSync(`/usr/local/${marker}`));
    assert.match(obs[1]!.content, /^bwrap\n/, 'PID 1 of its namespace is the sandbox');
  });

  test("internet: no way to this host's loopback or its own address, where an unsandboxed command connects; out through slirp4netns", async () => {
    assert.ok(hostAddress, 'this host has a non-loopback IPv4 address');
    const [loopPort, hostPort] = await Promise.all([listen('127.0.0.1'), listen(hostAddress)]);
    const probe = `${connect('127.0.0.1', loopPort)}; ${connect(hostAddress, hostPort)}`;
    const control = await run([sh(probe)], { toolTaskQueue: OPEN_QUEUE });
    assert.match(control.obs[0]!.content, /^127\.0\.0\.1 connected\n.* connected\n/, 'the listeners answer an unsandboxed command');
    const boxedRun = await run([sh(probe), sh('ip route get 1.1.1.1; cat /etc/resolv.conf')]);
    assert.equal(boxedRun.final.status, 'finished');
    assert.match(boxedRun.obs[0]!.content, new RegExp(`^127\\.0\\.0\\.1 refused\n${hostAddress.replace(/\./g, '\\.')} refused\n`));
    assert.match(boxedRun.obs[1]!.content, /^1\.1\.1\.1 via 10\.0\.2\.2 dev tap0/m, 'public addresses go out through the tap device');
    assert.match(boxedRun.obs[1]!.content, /^nameserver 10\.0\.2\.3$/m);
  });

  test("commands start from the allowlist: env, /proc/$PPID/environ and every /proc/*/environ hold none of the worker's variables", async () => {
    const probes = [
      sh('env 2>&1 | base64 -w0; echo'),
      // What is refused (a process that is not dumpable) says so in the decoded text instead.
      sh("{ tr '\\0' '\\n' < /proc/$PPID/environ; } 2>&1 | base64 -w0; echo"),
      sh("for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>&1 | base64 -w0; echo"),
    ];
    const boxedRun = await run(probes);
    assert.equal(boxedRun.final.status, 'finished');
    for (const [i, o] of boxedRun.obs.entries()) {
      const text = decoded(o.content);
      if (i === 0) assert.match(text, /^PATH=/m, 'env printed the environment');
      assert.match(text, /PATH=|Permission denied/, 'the probe read something');
      assert.deepEqual(leaked(text), [], text);
    }
    // Unsandboxed (the opt-out): the command and its parent, the spawn helper, start from the allowlist too.
    const openRun = await run(probes.slice(0, 2), { toolTaskQueue: OPEN_QUEUE });
    for (const o of openRun.obs) {
      const text = decoded(o.content);
      assert.match(text, /^PATH=/m, 'readable, so what it holds is seen');
      assert.deepEqual(leaked(text), [], text);
    }
  });

  test('an MCP stdio server the conversation names runs in the same sandbox, from the allowlist, its workspace writable', async () => {
    const workspace = await h.workspace();
    const server = path.join(workspace, 'probe-server.mjs');
    await writeFile(server, PROBE_SERVER);
    const { final, obs } = await run(
      [{ toolCalls: [{ name: 'mcp__probe__probe', arguments: {} }] }],
      { workspace, mcpServers: { probe: { command: process.execPath, args: [server], env: { GIVEN: 'by-config' } } } },
      ['terminal', 'mcp__probe__probe'],
    );
    assert.equal(final.status, 'finished');
    const seen = JSON.parse(obs[0]!.content) as { env: string; pid1: string; usr: string; workspace: string };
    const env = JSON.parse(Buffer.from(seen.env, 'base64').toString('utf8')) as Record<string, string>;
    assert.equal(env.GIVEN, 'by-config');
    assert.deepEqual(leaked(JSON.stringify(env)), []);
    assert.equal(seen.pid1, 'bwrap');
    assert.equal(seen.usr, 'EROFS');
    assert.equal(seen.workspace, 'ok');
    assert.ok(existsSync(path.join(workspace, 'mcp-wrote.txt')));
  });

  describe('nothing outlives its conversation', () => {
    // A writer that never prints: past the soft timeout the model is told it still runs, and it goes on
    // in the background of the conversation's terminal. Its command line names the conversation's tag
    // (pgrep finds it on the host); net.txt names its network namespace (the kept network, sandboxed).
    const writer = (tag: string) =>
      `readlink /proc/self/ns/net > net.txt; bash -c 'while true; do date +%s%N >> out.txt; sleep 0.05; done' ${tag}`;
    /** Each conversation's first message is its tag: the writer's command, then `Done.` (held at the tag's gate when `hold`). */
    function writers(hold: boolean) {
      h.model.setScript(
        samePromptSameReply((req: RecordedRequest): ScriptedReply => {
          const tag = lastUserMessage(req);
          if (!req.body.messages.some((m) => m.role === 'tool')) return sh(writer(tag));
          return { content: 'Done.', ...(hold ? { gate: tag } : {}) };
        }),
      );
    }
    const running = async (tag: string) => (await execa('pgrep', ['-f', tag], { reject: false })).stdout.trim();
    // A writer that outlived its test (the code under test failed) is stopped here, by its own tag.
    const tags: string[] = [];
    after(async () => {
      for (const tag of tags) await execa('pkill', ['-KILL', '-f', tag], { reject: false });
    });
    const sizeOf = (file: string) => {
      try {
        return statSync(file).size;
      } catch {
        return 0;
      }
    };
    /** The host's processes in a network namespace (`net:[…]`). */
    function inNamespace(ns: string): string[] {
      const pids: string[] = [];
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        try {
          if (readlinkSync(`/proc/${pid}/ns/net`) === ns) pids.push(pid);
        } catch {
          // gone meanwhile
        }
      }
      return pids;
    }
    /** Waits until `file` has grown, then stopped growing (unchanged over 10 samples a tenth of a second apart); when it last grew. */
    async function lastGrowth(file: string): Promise<number> {
      let size = sizeOf(file);
      let changedAt = Date.now();
      let same = 0;
      await waitFor(
        `${file} to stop growing`,
        () => {
          const now = sizeOf(file);
          if (now !== size) [size, changedAt, same] = [now, Date.now(), 0];
          else same++;
          return same >= 10;
        },
        30_000,
        100,
      );
      return changedAt;
    }

    /** A conversation on `queue` whose writer runs on after its command came back still running. */
    async function startWriter(queue: string | undefined, name: string) {
      const tag = `faheem-writer-${name}-${process.pid}-${Date.now()}`;
      tags.push(tag);
      const workspace = await h.workspace();
      const conversation = await Conversation.create(h.client, {
        agent: agent(),
        workspace,
        firstMessage: tag,
        ...(queue ? { toolTaskQueue: queue } : {}),
      });
      const out = path.join(workspace, 'out.txt');
      const run = conversation.run();
      await waitFor('the writer to write', () => sizeOf(out) > 0);
      assert.ok(await running(tag), 'the writer runs on the host');
      const net = await readFile(path.join(workspace, 'net.txt'), 'utf8').then((t) => t.trim());
      return { tag, conversation, run, out, net };
    }

    /**
     * Asks for the stop (`request`) while watching the writer's file: the writer stops within 2 s of the
     * request (the bound), and neither it nor its kept network runs on.
     */
    async function assertStops(w: Awaited<ReturnType<typeof startWriter>>, sandboxed: boolean, request: () => Promise<unknown>) {
      const before = sizeOf(w.out);
      await waitFor('the writer to be writing now', () => sizeOf(w.out) > before, 10_000, 20);
      const sentAt = Date.now();
      const growth = lastGrowth(w.out);
      await request();
      const stoppedAt = await growth;
      console.log(`# ${w.tag}: the writer's last write ${stoppedAt - sentAt} ms after the request`);
      assert.equal(await running(w.tag), '', 'the writer is gone');
      assert.ok(stoppedAt - sentAt <= 2_000, `the writer stopped ${stoppedAt - sentAt} ms after the request (at most 2 s)`);
      if (sandboxed) {
        assert.notEqual(w.net, readlinkSync('/proc/self/ns/net'), 'the writer ran in a network of its own');
        await waitFor('its kept network to go', () => inNamespace(w.net).length === 0, 10_000);
      }
    }

    test('pause --now ends a command left running past its soft timeout, and its kept network (sandboxed and not)', async () => {
      writers(true);
      const [inBox, unboxed] = await Promise.all([startWriter(undefined, 'pause-boxed'), startWriter(OPEN_QUEUE, 'pause-open')]);
      for (const w of [inBox, unboxed]) {
        // The model was told it still runs, and is thinking: the conversation runs, the writer writes.
        await h.model.reached(w.tag);
        const obs = observations(await w.conversation.events());
        assert.match(obs[0]!.content, /still running/);
        if (w === inBox) assert.ok(inNamespace(w.net).length > 0, 'the kept network is up');
        await assertStops(w, w === inBox, async () => {
          await w.conversation.pause({ now: true });
          assert.equal((await w.run).status, 'paused');
        });
        h.model.release(w.tag);
        await w.conversation.close();
      }
    });

    test('close ends a command left running past its soft timeout, and its kept network (sandboxed and not)', async () => {
      writers(false);
      const [inBox, unboxed] = await Promise.all([startWriter(undefined, 'close-boxed'), startWriter(OPEN_QUEUE, 'close-open')]);
      for (const w of [inBox, unboxed]) {
        // Finished, with the writer still writing in the background of its terminal.
        assert.equal((await w.run).status, 'finished');
        assert.ok((await w.conversation.state()).terminal.running, 'the terminal says a command runs');
        await assertStops(w, w === inBox, () => w.conversation.close());
      }
    });
  });
});
