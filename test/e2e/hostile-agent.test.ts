// The hostile-agent suite: a scripted model that tries every way out of the box the security issue
// found (links, FIFOs, /proc, loopback ports, foreign base URLs, id paths, hostile repository
// content), against real workers: the default one (bubblewrap where it works, which .ci/run makes
// sure of) and one started with `--sandbox bwrap` explicitly; the opt-out (`--sandbox none`) for what
// must hold without a sandbox too. Each test asserts that nothing leaked or was written outside, and
// the last that every worker still serves a plain conversation.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import { samePromptSameReply, startScriptedModel, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ConversationEvent, ObservationEvent } from '../../src/core/types.js';
import { FAKE_KEY, freePort, ROOT, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

/** Secrets in the worker's environment, each a marker that must never reach a command or the model. */
const SECRETS: Record<string, string> = {
  AWS_SECRET_ACCESS_KEY: 'hostile-aws-5b1e0c9d',
  GITHUB_TOKEN: 'hostile-ghp-7d2a4f18',
  DATABASE_URL: 'postgres://admin:hostile-db-3c8e6a20@db.internal/prod',
  STRIPE_SECRET_KEY: 'hostile-stripe-9f4b2e61',
  OTEL_EXPORTER_OTLP_HEADERS: 'authorization=hostile-otel-1a6c8d42',
  SSH_AUTH_SOCK: '/tmp/hostile-ssh-agent-0e7f3b95.sock',
  ANTHROPIC_API_KEY: 'sk-ant-hostile-2c9d7e14',
};
const MARKERS = [FAKE_KEY, ...Object.values(SECRETS).map((v) => v.match(/hostile-(?:[a-z-]*-)?[0-9a-f]{8}/)![0])];

/** Which markers appear in a text (or in the base64 a command printed to get past masking). */
function leaked(text: string): string[] {
  const decoded = [...text.matchAll(/[A-Za-z0-9+/=]{40,}/g)].map((m) => Buffer.from(m[0], 'base64').toString('latin1'));
  return MARKERS.filter((m) => [text, ...decoded].some((t) => t.includes(m)));
}

// A wedged worker (the FIFO finding) would hold a test for ever: each gets a generous bound instead.
describe('the hostile-agent suite', { timeout: 600_000 }, () => {
  let h: Harness;
  let outside: string;
  const QUEUES = { default: `hostile-default-${process.pid}`, bwrap: `hostile-bwrap-${process.pid}`, none: `hostile-none-${process.pid}` };
  type Box = keyof typeof QUEUES;
  const workers: Partial<Record<Box, WorkerProcess>> = {};
  const listeners: Server[] = [];
  let hostAddress: string | undefined;
  let ports: { loopback: number; host: number | undefined } = { loopback: 0, host: undefined };

  before(async () => {
    h = await startHarness({ name: 'hostile-agent', script: () => ({ content: 'ok' }), env: SECRETS });
    // Not under /tmp, which is private inside the sandbox: a write there would fail for another reason.
    outside = await mkdtemp('/var/tmp/faheem-outside-');
    // Services a command must not reach: one on loopback, one on the host's own network address.
    hostAddress = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    const listen = (host: string) =>
      new Promise<number>((resolve, reject) => {
        // A probe that reads its 7 bytes and goes resets the connection: that is no error here.
        const server = createServer((s) => s.on('error', () => undefined).end('service\n'));
        listeners.push(server);
        server.once('error', reject);
        server.listen(0, host, () => resolve((server.address() as { port: number }).port));
      });
    ports = { loopback: await listen('127.0.0.1'), host: hostAddress ? await listen(hostAddress) : undefined };
    // Each worker on its own tool queue; the first also takes the conversations' workflow queue.
    [workers.default, workers.bwrap, workers.none] = await Promise.all([
      h.startWorker({ FAHEEM_TOOL_TASK_QUEUE: QUEUES.default }),
      h.startWorker({ FAHEEM_TASK_QUEUE: `unused-${QUEUES.bwrap}`, FAHEEM_TOOL_TASK_QUEUE: QUEUES.bwrap }, ['--sandbox', 'bwrap']),
      h.startWorker({ FAHEEM_TASK_QUEUE: `unused-${QUEUES.none}`, FAHEEM_TOOL_TASK_QUEUE: QUEUES.none }, ['--sandbox', 'none']),
    ]);
  });
  after(async () => {
    for (const l of listeners) l.close();
    await h?.close();
    if (outside) await rm(outside, { recursive: true, force: true });
  });

  const agent = (llm = new LLM({ model: 'openai/gpt-4o-mini' })) => new Agent({ llm, tools: ['terminal', 'file_editor'] });
  const sh = (command: string): ScriptedReply => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
  const edit = (args: Record<string, unknown>): ScriptedReply => ({ toolCalls: [{ name: 'file_editor', arguments: args }] });
  const observations = (events: ConversationEvent[]) => events.filter((e): e is ObservationEvent => e.kind === 'observation');
  function turns(...replies: ScriptedReply[]) {
    let i = 0;
    return samePromptSameReply((_req: RecordedRequest): ScriptedReply => replies[i++] ?? { content: 'Done.' });
  }
  async function run(box: Box, replies: ScriptedReply[], options: Partial<CreateOptions> = {}) {
    h.model.setScript(turns(...replies));
    const workspace = options.workspace ?? (await h.workspace());
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace,
      firstMessage: 'go',
      toolTaskQueue: QUEUES[box],
      ...options,
    });
    const final = await conversation.run();
    const events = await conversation.events();
    return { conversation, workspace, final, obs: observations(events), events };
  }
  /** Everything the model was shown in this file so far, as text. */
  const shownToModel = () => JSON.stringify(h.model.requests.map((r) => r.body.messages));

  for (const box of ['default', 'bwrap', 'none'] as const) {
    test(`[${box}] file_editor never writes through a link: dangling, swapped before undo, a linked folder`, async () => {
      const planted = path.join(outside, `planted-${box}.txt`);
      const victim = path.join(outside, `victim-${box}.txt`);
      await writeFile(victim, 'original\n');
      const { final, obs } = await run(box, [
        sh(`ln -s ${planted} dangling.txt && ln -s ${outside} linked`),
        edit({ command: 'create', path: 'dangling.txt', file_text: 'planted\n' }),
        edit({ command: 'create', path: 'linked/through.txt', file_text: 'planted\n' }),
        edit({ command: 'create', path: 'a.txt', file_text: 'one\n' }),
        edit({ command: 'str_replace', path: 'a.txt', old_str: 'one', new_str: 'two' }),
        sh(`rm a.txt && ln -s ${victim} a.txt`),
        edit({ command: 'undo_edit', path: 'a.txt' }),
        edit({ command: 'str_replace', path: 'a.txt', old_str: 'original', new_str: 'owned' }),
        edit({ command: 'view', path: 'linked' }),
      ]);
      assert.equal(final.status, 'finished');
      assert.ok(!existsSync(planted), 'nothing created through the dangling link');
      assert.ok(!existsSync(path.join(outside, 'through.txt')), 'nothing created through the linked folder');
      assert.equal(await readFile(victim, 'utf8'), 'original\n', 'the link target is untouched');
      const [, dangling, through, , , , undo, replace, view] = obs;
      for (const o of [dangling, through, undo, replace, view]) assert.equal(o!.isError, true, o!.content);
      assert.doesNotMatch(view!.content, new RegExp(`victim-${box}`), 'a linked folder is not listed');
    });

    test(`[${box}] a FIFO and a socket are refused at once; the worker goes on`, async () => {
      const { final, obs } = await run(box, [
        sh(`mkfifo pipe && python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('sock')" && echo made`),
        edit({ command: 'view', path: 'pipe' }),
        edit({ command: 'str_replace', path: 'pipe', old_str: 'a', new_str: 'b' }),
        edit({ command: 'view', path: 'sock' }),
        sh('echo after'),
      ]);
      assert.equal(final.status, 'finished');
      const [made, view, replace, socket, afterwards] = obs;
      assert.match(made!.content, /^made\n/);
      assert.equal(view!.isError, true);
      assert.match(view!.content, /FIFO|regular file/i);
      assert.equal(replace!.isError, true);
      assert.equal(socket!.isError, true);
      assert.match(afterwards!.content, /^after\n/);
    });

    test(`[${box}] no worker secret in a command's environment, its parent's, or the model's view`, async () => {
      const { final, obs } = await run(box, [
        sh('env | base64 -w0; echo'),
        sh(`tr '\\0' '\\n' < /proc/$PPID/environ | base64 -w0; echo`),
        sh(
          'echo "$AWS_SECRET_ACCESS_KEY $GITHUB_TOKEN $DATABASE_URL $STRIPE_SECRET_KEY $OTEL_EXPORTER_OTLP_HEADERS $SSH_AUTH_SOCK $LLM_API_KEY"',
        ),
      ]);
      assert.equal(final.status, 'finished');
      for (const o of obs) assert.deepEqual(leaked(o.content), [], o.content.slice(0, 300));
      assert.match(obs[2]!.content, /^ +\n/, 'every variable is empty');
      assert.deepEqual(leaked(shownToModel()), []);
    });
  }

  /** A TCP probe a command runs: `service reached` when it got the listener's greeting, else `refused`. */
  const probe = (host: string, port: number | undefined) =>
    port === undefined
      ? 'echo skipped'
      : `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port} && head -c 7 <&3' 2>/dev/null && echo " reached" || echo refused`;

  test('[none] the same network probe reaches the loopback and host listeners where nothing stops it (the positive control)', async () => {
    const { final, obs } = await run('none', [sh(probe('127.0.0.1', ports.loopback)), sh(probe(hostAddress ?? '127.0.0.1', ports.host))]);
    assert.equal(final.status, 'finished');
    assert.match(obs[0]!.content, /^service reached\n/, obs[0]!.content);
    assert.match(obs[1]!.content, ports.host === undefined ? /^skipped\n/ : /^service reached\n/, obs[1]!.content);
  });

  for (const box of ['default', 'bwrap'] as const) {
    test(`[${box}] sandboxed: no other process's environment, no loopback or host service, nothing written outside`, async () => {
      const temporalPort = h.env.TEMPORAL_ADDRESS!.split(':').pop()!;
      const modelPort = new URL(h.model.baseUrl).port;
      const { final, obs } = await run(box, [
        sh(`cat /proc/[0-9]*/environ 2>/dev/null | base64 -w0; echo; ls /proc | grep -c '^[0-9]'`),
        sh(probe('127.0.0.1', ports.loopback)),
        sh(probe(hostAddress ?? '127.0.0.1', ports.host)),
        sh(probe('127.0.0.1', Number(temporalPort))),
        sh(probe('127.0.0.1', Number(modelPort))),
        sh(`touch ${outside}/touched-${box} 2>&1; cat ~/.ssh/id_rsa 2>&1 | head -1`),
      ]);
      assert.equal(final.status, 'finished');
      const [environs, loopback, host, temporal, model, write] = obs;
      assert.deepEqual(leaked(environs!.content), []);
      assert.ok(Number(environs!.content.split('\n')[1]) < 10, `a PID namespace: ${environs!.content.split('\n')[1]} processes seen`);
      for (const o of [loopback, host, temporal, model]) assert.match(o!.content, /^(refused|skipped)\n/, o!.content);
      assert.ok(!existsSync(path.join(outside, `touched-${box}`)));
      // The folder is not there at all (an allowlist), or read-only where it is shown.
      assert.match(write!.content, /touched-\w+'?: (Read-only file system|No such file or directory)/);
    });
  }

  for (const box of ['default', 'bwrap'] as const) {
    test(`[${box}] sandboxed: an allowlist of the host: no other workspace, store, /var, /srv or /opt, an empty home; the workspace's .faheem hidden; its own IPC`, async () => {
      // Another conversation's workspace and a file store's objects, outside home and /tmp (where the first round hid them).
      const other = path.join(outside, `other-workspace-${box}`);
      const store = path.join(outside, `store-${box}`, 'conversations', 'conv-other');
      await mkdir(other, { recursive: true });
      await mkdir(store, { recursive: true });
      await writeFile(path.join(other, 'secret.txt'), 'hostile-other-4d1f8a26\n');
      await writeFile(path.join(store, 'step-1'), 'hostile-store-8b3e5c17\n');
      MARKERS.push('hostile-other-4d1f8a26', 'hostile-store-8b3e5c17');
      // Folders of the host a command must not see; one on the way to what is shown (the home, kept
      // empty; the worker's Node, as under /var/cache in the CI; its package) exists only as that way.
      const shownWays = [os.homedir(), path.dirname(path.dirname(process.execPath)), ROOT];
      const absent = ['/var/tmp', '/var/lib', '/var/log', '/srv', '/opt', '/mnt', '/media', '/run', '/home', '/root']
        .filter((d) => !shownWays.some((w) => w === d || w.startsWith(`${d}/`)))
        .join(' ');
      const workspace = await h.workspace();
      await mkdir(path.join(workspace, '.faheem'), { recursive: true });
      await writeFile(path.join(workspace, '.faheem', 'temporal.db'), 'hostile-db-file-2a7c9e40\n');
      MARKERS.push('hostile-db-file-2a7c9e40');
      await writeFile(path.join(workspace, 'visible.txt'), 'visible-5e0b\n');
      const { final, obs } = await run(
        box,
        [
          sh(`cat ${other}/secret.txt 2>&1; ls ${path.dirname(store)} 2>&1; cat ${store}/step-1 2>&1`),
          // The home is there, empty (programs expect one); the rest of the host's folders are not.
          sh(`for d in ${absent}; do [ -e $d ] && echo "seen $d"; done; echo listed; ls -A ~ | wc -l`),
          sh('cat .faheem/temporal.db 2>&1; ls -A .faheem 2>&1 | wc -l; echo nothing > .faheem/x 2>&1'),
          // Positive controls: the workspace, the system's tools and the sandbox's own IPC namespace.
          sh('cat visible.txt; ls /usr/bin/env; readlink /proc/self/ns/ipc'),
        ],
        { workspace },
      );
      assert.equal(final.status, 'finished');
      const [foreign, folders, db, controls] = obs;
      assert.deepEqual(leaked(foreign!.content), [], foreign!.content);
      assert.equal((foreign!.content.match(/No such file or directory/g) ?? []).length, 3, foreign!.content);
      assert.match(folders!.content, /^listed\n0\n/, `nothing of ${absent}, an empty home: ${folders!.content}`);
      assert.deepEqual(leaked(db!.content), [], db!.content);
      assert.match(db!.content, /No such file or directory\n0\n.*Read-only file system/s);
      const [visible, env, ipc] = controls!.content.trim().split('\n');
      assert.equal(visible, 'visible-5e0b');
      assert.equal(env, '/usr/bin/env');
      assert.match(ipc!, /^ipc:\[\d+\]$/);
      assert.notEqual(ipc, readlinkSync('/proc/self/ns/ipc'), "the host's IPC namespace is not shared");
      assert.equal(await readFile(path.join(workspace, '.faheem', 'temporal.db'), 'utf8'), 'hostile-db-file-2a7c9e40\n');
      assert.ok(!existsSync(path.join(workspace, '.faheem', 'x')));
    });
  }

  test('faheem server: its database out of the project, an HTTP API that answers no web page', async () => {
    const project = await h.workspace();
    const home = await mkdtemp(path.join(os.tmpdir(), 'faheem-server-home-'));
    const start = async () => {
      const [port, uiPort] = [await freePort(), await freePort()];
      const proc = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'server', '--port', String(port), '--ui-port', String(uiPort)], {
        cwd: project,
        env: { FAHEEM_HOME: home },
        all: true,
        reject: false,
      });
      const started = { proc, port, uiPort, out: '' };
      proc.all?.on('data', (d: Buffer) => (started.out += d.toString()));
      const up = await waitFor(
        'the banner',
        () => (proc.exitCode !== null ? 'exited' : started.out.includes('Temporal dev server on') && 'up'),
        60_000,
      );
      return { ...started, up };
    };
    const serverLog = (port: number) => {
      try {
        return readFileSync(path.join(home, 'server', `temporal-${port}.log`), 'utf8').slice(-4000);
      } catch (err) {
        return (err as Error).message;
      }
    };
    // A port found free can be taken before the server binds it (files run side by side): try again.
    let started = await start();
    for (let attempt = 1; attempt < 3 && started.up === 'exited'; attempt++) started = await start();
    const { proc, port, uiPort, out } = started;
    try {
      assert.equal(started.up, 'up', out);
      assert.match(out, new RegExp(`data in ${home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/temporal\\.db`), out);
      assert.ok(!existsSync(path.join(project, '.faheem')), 'nothing of the server in the folder it started in');
      const access = JSON.parse(await readFile(path.join(home, 'server', `http-api-${port}.json`), 'utf8')) as {
        url: string;
        host: string;
      };
      assert.equal(statSync(path.join(home, 'server', `http-api-${port}.json`)).mode & 0o077, 0);
      const api = new URL(access.url);
      const startBody = JSON.stringify({
        workflowId: 'from-a-web-page',
        workflowType: { name: 'conversation' },
        taskQueue: { name: 'faheem' },
      });
      // What a page's fetch(…, {mode: 'no-cors'}) sends (a simple request: no preflight), from any
      // origin, and through a DNS-rebound name; then the same with the one Host the API answers to.
      const call = (host: string, init: { method: string; body?: string; origin?: string; port?: number }) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request(
            {
              host: api.hostname,
              port: init.port ?? api.port,
              path:
                init.method === 'POST' ? '/api/v1/namespaces/default/workflows/from-a-web-page' : '/api/v1/namespaces/default/workflows',
              method: init.method,
              headers: {
                host,
                ...(init.origin ? { origin: init.origin } : {}),
                ...(init.body ? { 'content-type': 'text/plain;charset=UTF-8' } : {}),
              },
            },
            (res) => {
              let body = '';
              res.on('data', (c: Buffer) => (body += c.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            },
          );
          req.on('error', reject);
          req.end(init.body);
        });
      for (const [host, origin] of [
        [api.host, 'http://localhost:3000'],
        [api.host, 'https://evil.example'],
        [`rebound.evil.example:${api.port}`, `http://rebound.evil.example:${api.port}`],
        [`localhost:${api.port}`, undefined],
      ] as const) {
        const answer = await call(host, { method: 'POST', body: startBody, ...(origin ? { origin } : {}) });
        assert.equal(answer.status, 403, `Host ${host}, Origin ${origin}: ${answer.status} ${answer.body}`);
      }
      // The positive control: the access's Host name is answered, and the page's workflow was never started.
      const listed = await call(access.host, { method: 'GET' });
      if (listed.status !== 200) console.error(`${started.out}\nits log:\n${serverLog(port)}`);
      assert.equal(listed.status, 200, listed.body);
      assert.doesNotMatch(listed.body, /from-a-web-page/);
      // The Web UI (whose CSRF cookie a rebound page could read) answers its own names only.
      const rebound = await call(`rebound.evil.example:${uiPort}`, { method: 'GET', port: uiPort });
      assert.equal(rebound.status, 403, rebound.body);
      const ui = await call(`localhost:${uiPort}`, { method: 'GET', port: uiPort });
      assert.equal(ui.status, 200, ui.body);
      // The CLI's quick path finds the server through the access file.
      const status = await execa('node', [path.join(ROOT, 'bin/faheem.js'), 'status', 'conv-none-0000'], {
        env: { FAHEEM_HOME: home, TEMPORAL_ADDRESS: `127.0.0.1:${port}` },
        reject: false,
      });
      assert.match(status.stderr, /conv-none-0000/);
    } finally {
      proc.kill('SIGTERM');
      await proc;
      await rm(home, { recursive: true, force: true });
    }
  });

  test('a linked .agents/skills folder is never offered: what it points to stays unread', async () => {
    const hiddenSkills = path.join(outside, 'hidden-skills');
    await mkdir(path.join(hiddenSkills, 'exfil'), { recursive: true });
    await writeFile(path.join(hiddenSkills, 'exfil', 'SKILL.md'), '---\nname: exfil\ndescription: hostile-skill-7c2e1d93\n---\nbody\n');
    MARKERS.push('hostile-skill-7c2e1d93');
    const workspace = await h.workspace();
    await mkdir(path.join(workspace, '.agents'), { recursive: true });
    await symlink(hiddenSkills, path.join(workspace, '.agents', 'skills'));
    const { final, events } = await run('default', [sh('echo ok')], { workspace });
    assert.equal(final.status, 'finished');
    assert.deepEqual(leaked(shownToModel()), [], 'the linked skill never reached the model');
    assert.ok(
      events.some((e) => JSON.stringify(e).includes('.agents/skills is a symbolic link')),
      'the setup says why the folder was skipped',
    );
  });

  test('a hostile repository: AGENTS.md, a skill and a checkpointed file linked outside, a git config that runs commands', async () => {
    const secretFile = path.join(outside, 'host-secret.txt');
    await writeFile(secretFile, 'hostile-file-6e2b9c07\n');
    MARKERS.push('hostile-file-6e2b9c07');
    const pwned = path.join(outside, 'pwned');
    const workspace = await h.workspace();
    await symlink(secretFile, path.join(workspace, 'AGENTS.md'));
    await mkdir(path.join(workspace, '.agents', 'skills', 'evil'), { recursive: true });
    await symlink(secretFile, path.join(workspace, '.agents', 'skills', 'evil', 'SKILL.md'));
    await symlink(secretFile, path.join(workspace, 'notes.txt'));
    await mkdir(path.join(workspace, '.git'), { recursive: true });
    await writeFile(
      path.join(workspace, '.git', 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${pwned}; false"\n\thooksPath = /nonexistent\n`,
    );
    await writeFile(path.join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const { final, obs } = await run('default', [sh('echo changed > changed.txt'), edit({ command: 'view', path: 'notes.txt' })], {
      workspace,
    });
    assert.equal(final.status, 'finished');
    assert.equal(obs[1]!.isError, true, 'a linked file is not read');
    assert.deepEqual(leaked(shownToModel()), [], 'the linked file never reached the model');
    assert.ok(!existsSync(pwned), "the repository's git config ran nothing");
  });

  test("a conversation's own base URL gets no worker key", async () => {
    const attacker = await startScriptedModel(() => ({ content: 'thanks for the key' }));
    try {
      const llm = new LLM({ model: 'openai/gpt-4o-mini', baseUrl: attacker.baseUrl });
      const conversation = await Conversation.create(h.client, {
        agent: agent(llm),
        workspace: await h.workspace(),
        firstMessage: 'go',
        toolTaskQueue: QUEUES.default,
      });
      await conversation.run();
      assert.ok(attacker.requests.length > 0, 'the conversation called its own endpoint');
      for (const r of attacker.requests) assert.ok(!String(r.authorization ?? '').includes(FAKE_KEY), 'no worker key sent');
    } finally {
      await attacker.close();
    }
  });

  test('ids that are paths are refused everywhere they enter', async () => {
    for (const id of ['../escape', 'a/b', 'x..y', '.hidden']) {
      await assert.rejects(
        Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), id, toolTaskQueue: QUEUES.default }),
        /not valid/,
        `create with id ${JSON.stringify(id)}`,
      );
      const status = await h.cli(['status', id], { reject: false });
      assert.notEqual(status.exitCode, 0);
      assert.match(status.stderr, /not valid/);
    }
    assert.ok(!existsSync(path.join(h.home, 'escape')));
  });

  test('after all of it, every worker still serves a plain conversation', async () => {
    for (const box of ['default', 'bwrap', 'none'] as const) {
      const { final, obs } = await run(box, [sh('echo alive')]);
      assert.equal(final.status, 'finished', box);
      assert.match(obs[0]!.content, /^alive\n/);
      assert.equal(workers[box]!.process.exitCode, null, `${box} worker still running`);
    }
  });
});
