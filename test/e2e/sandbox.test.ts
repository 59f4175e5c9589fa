// Sandboxed commands: the bubblewrap argument list (unit), real bwrap on a plan, and real worker
// processes started with `--sandbox bwrap` running the scripted model's commands: writes outside the
// workspace fail, the worker's home and FAHEEM_HOME are hidden, `pause --now` ends background
// processes, cwd and exported variables still carry over (across workers too), `--sandbox-network
// none` cuts the network, and ctx.exec runs a custom tool's programs under the same sandbox.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execa } from 'execa';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import { samePromptSameReply, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ConversationEvent, ObservationEvent } from '../../src/core/types.js';
import { ROOT, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

describe('sandboxed workers', () => {
  const TOOLS = path.join(ROOT, 'test', 'fixtures', 'sandbox-tools.mjs');
  const NO_NET_QUEUE = `sandbox-no-net-${process.pid}`;
  let h: Harness;
  let sandboxed: WorkerProcess;
  let noNet: WorkerProcess;
  let modelPort: string;

  before(async () => {
    h = await startHarness({ name: 'sandbox', script: () => ({ content: 'ok' }) });
    modelPort = new URL(h.model.baseUrl).port;
    [sandboxed, noNet] = await Promise.all([
      h.startWorker({}, ['--sandbox', 'bwrap', '--sandbox-network', 'host', '--tools', TOOLS]),
      // Only a tools worker that matters here: its own tool queue, an unused main queue.
      h.startWorker(
        {
          FAHEEM_SANDBOX: 'bwrap',
          FAHEEM_SANDBOX_NETWORK: 'none',
          FAHEEM_TASK_QUEUE: `unused-${NO_NET_QUEUE}`,
          FAHEEM_TOOL_TASK_QUEUE: NO_NET_QUEUE,
        },
        ['--tools', TOOLS],
      ),
    ]);
  });
  after(async () => h?.close());

  const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor', 'run_program'] });
  const sh = (command: string) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] });
  const observations = (events: ConversationEvent[]) => events.filter((e): e is ObservationEvent => e.kind === 'observation');
  function turns(...replies: ScriptedReply[]) {
    let i = 0;
    // A prompt asked again (a retried call) gets the same reply, not the next one.
    return samePromptSameReply((_req: RecordedRequest): ScriptedReply => replies[i++] ?? { content: 'Done.' });
  }
  async function run(replies: ScriptedReply[], options: Partial<CreateOptions> = {}) {
    h.model.setScript(turns(...replies));
    const workspace = await h.workspace();
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'go', ...options });
    const final = await conversation.run();
    const events = await conversation.events();
    return { conversation, workspace, final, events, obs: observations(events) };
  }
  /** The host's processes whose command line starts with this (not the sandbox's, which holds it as an argument). */
  const processes = async (start: string) => (await execa('pgrep', ['-f', `^${start}`], { reject: false })).stdout.trim();

  test('the worker says how commands run; an unusable or inconsistent sandbox stops it at once', async () => {
    assert.match(
      sandboxed.output(),
      /faheem worker: commands run under bubblewrap \(workspace writable, system folders read-only, \/tmp private, nothing else of this host; network host: this host's network/,
    );
    assert.match(noNet.output(), /network none/);
    const bin = path.join(ROOT, 'bin', 'faheem.js');
    // A fresh machine without bubblewrap: node is there, bwrap is not.
    const nodeOnly = await mkdtemp(path.join(os.tmpdir(), 'faheem-node-only-'));
    await symlink(process.execPath, path.join(nodeOnly, 'node'));
    // A worker that waited instead of stopping at once would be killed at the deadline (exit code undefined).
    const [missing, alone, fresh] = await Promise.all([
      execa(process.execPath, [bin, 'worker', '--sandbox', 'bwrap'], {
        env: { ...h.env, PATH: '/nonexistent' },
        extendEnv: false,
        reject: false,
        timeout: 60_000,
      }),
      execa(process.execPath, [bin, 'worker', '--sandbox', 'none', '--sandbox-network', 'none'], {
        env: h.env,
        reject: false,
        timeout: 60_000,
      }),
      // The default where bubblewrap is missing: it starts, unsandboxed, and says so (its own queues, so it takes no work from the others).
      h.startWorker({ PATH: nodeOnly, FAHEEM_TASK_QUEUE: 'unused-plain', FAHEEM_TOOL_TASK_QUEUE: 'unused-plain-tools' }),
    ]);
    assert.equal(missing.exitCode, 1);
    assert.match(missing.stderr, /bubblewrap is not installed \(bwrap is not on PATH\): install it \(`apt-get install bubblewrap`\)/);
    assert.equal(alone.exitCode, 1);
    assert.match(alone.stderr, /needs a sandbox: drop --sandbox none/);
    assert.match(fresh.output(), /faheem worker: commands run UNSANDBOXED, with this user's rights: bubblewrap is not installed/);
    assert.doesNotMatch(fresh.output(), /commands run under bubblewrap/);
    // Each conversation whose tools it runs records it in its setup (for people: an environment error event).
    const { final, events } = await run([], { toolTaskQueue: 'unused-plain-tools' });
    assert.equal(final.status, 'finished');
    const setup = events.filter((e) => e.kind === 'error' && e.source === 'environment').map((e) => (e as { message: string }).message);
    assert.ok(
      setup.some((m) => /^On unused-plain-tools, commands run UNSANDBOXED, with this user's rights: bubblewrap is not installed/.test(m)),
      setup.join('\n'),
    );
    await fresh.kill();
    await rm(nodeOnly, { recursive: true, force: true });
  });

  test("a conversation's exported PATH does not choose the sandbox's own programs: a fake env in the workspace never runs on the host", async () => {
    const escaped = `/usr/local/faheem-escaped-${process.pid}`;
    const { final, obs } = await run([
      sh(
        `mkdir -p bin && printf '#!/bin/sh\\ntouch ${escaped}\\nexec /usr/bin/env "$@"\\n' > bin/env && chmod +x bin/env && printf '#!/bin/sh\\ntouch ${escaped}\\nexec /usr/bin/bwrap "$@"\\n' > bin/bwrap && chmod +x bin/bwrap && export PATH="$PWD/bin:$PATH"`,
      ),
      sh('echo next; command -v env'),
    ]);
    assert.equal(final.status, 'finished');
    assert.match(obs[1]!.content, /^next\n.*\/bin\/env\n/);
    assert.ok(!existsSync(escaped), `${escaped} was written: the command's PATH chose a program run outside the sandbox`);
  });

  test('writes outside the workspace fail with a readable observation; the home and FAHEEM_HOME are hidden; the workspace is writable', async () => {
    const marker = `faheem-sbx-${process.pid}-${Date.now()}`;
    await writeFile(path.join(h.home, 'worker-secret.txt'), 'the-worker-secret');
    const { final, workspace, obs } = await run([
      sh(`echo x > "$HOME/${marker}.txt"`),
      sh(`touch /usr/local/${marker}`),
      sh('echo inside > inside.txt && cat inside.txt'),
      sh('cat "$FAHEEM_HOME/worker-secret.txt"'),
      sh('ls -A ~ | wc -l'),
    ]);
    assert.equal(final.status, 'finished');
    const [home, usr, inside, secret, listing] = obs;
    assert.equal(home!.exitCode, 1);
    assert.match(home!.content, new RegExp(`${marker}\\.txt: Read-only file system`), 'the home is an empty read-only folder');
    assert.ok(!existsSync(path.join(os.homedir(), `${marker}.txt`)), 'nothing written in the home');
    assert.equal(usr!.exitCode, 1);
    assert.match(usr!.content, /cannot touch '\/usr\/local\/faheem-sbx-.*': Read-only file system/);
    assert.ok(!existsSync(`/usr/local/${marker}`), 'nothing written in /usr/local');
    assert.equal(inside!.exitCode, 0);
    assert.equal(await readFile(path.join(workspace, 'inside.txt'), 'utf8'), 'inside\n');
    assert.equal(secret!.exitCode, 1);
    assert.match(secret!.content, /worker-secret\.txt: No such file or directory/);
    assert.ok(!secret!.content.includes('the-worker-secret'));
    assert.match(listing!.content, /^0\n/, 'the home is empty inside');
  });

  test('cwd and exported variables carry over between commands and to another sandboxed worker; a cwd outside the workspace is read-only', async () => {
    const { conversation, workspace, final } = await run([sh('mkdir -p sub && cd sub && export GREETING=hello-sandbox')]);
    assert.equal(final.status, 'finished');
    // The worker that ran it goes; another sandboxed worker takes the conversation over.
    await sandboxed.kill();
    sandboxed = await h.startWorker({}, ['--sandbox', 'bwrap', '--sandbox-network', 'host', '--tools', TOOLS]);
    h.model.setScript(turns(sh('pwd; echo "$GREETING"'), sh('cd /usr && ls -d local'), sh('pwd; touch here.txt')));
    await conversation.sendMessage('again');
    assert.equal((await conversation.run()).status, 'finished');
    const [, there, usr, readOnly] = observations(await conversation.events());
    assert.equal(there!.content, `${workspace}/sub\nhello-sandbox\n[The command exited with code 0.]`);
    assert.match(usr!.content, /^local\n\[The command exited with code 0; working directory is now \/usr\.\]/);
    assert.match(readOnly!.content, /^\/usr\ntouch: cannot touch 'here\.txt': Read-only file system\n\[The command exited with code 1\.\]/);
  });

  test('pause --now ends the command and every process it started, background ones included; a finished command leaves none', async () => {
    const left = `3009.${process.pid}`;
    const first = await run([sh(`sleep ${left} & echo started`)]);
    assert.equal(first.final.status, 'finished');
    assert.match(first.obs[0]!.content, /^started\n/);
    await waitFor('the background process to end with its command', async () => (await processes(`sleep ${left}`)) === '', 5_000);

    const marker = `3007.${process.pid}`;
    h.model.setScript(turns(sh(`sleep ${marker} & echo $! > bg.pid; echo started; sleep 60`)));
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: 'go' });
    void conversation.run().catch(() => undefined); // its outcome is checked through the events
    await waitFor('the background sleep to run', () => processes(`sleep ${marker}`));
    await h.cli(['pause', conversation.id, '--now']);
    assert.equal((await conversation.waitUntil((s) => s.status === 'paused', 100, 30_000)).status, 'paused');
    await waitFor('the background sleep to end', async () => (await processes(`sleep ${marker}`)) === '', 10_000);
    const obs = await waitFor('the interrupted observation', async () => observations(await conversation.events())[0]);
    assert.equal(obs.isError, true);
    assert.match(obs.content, /started/);
    await conversation.close();
  });

  test('--sandbox-network none: no connection out, where the shared network connects', async () => {
    const probe = `timeout 5 bash -c 'echo > /dev/tcp/127.0.0.1/${modelPort}' && echo connected || echo no-connection`;
    const shared = await run([sh(probe)]);
    assert.match(shared.obs[0]!.content, /^connected\n/);
    const cut = await run([sh(probe)], { toolTaskQueue: NO_NET_QUEUE });
    assert.equal(cut.final.status, 'finished');
    assert.match(cut.obs[0]!.content, /no-connection/);
    assert.doesNotMatch(cut.obs[0]!.content, /^connected/m);
  });

  test("ctx.exec runs a custom tool's program under the same sandbox (and without the network under none)", async () => {
    const marker = `faheem-exec-${process.pid}`;
    const script = `echo from-exec > exec.txt; cat /proc/1/comm; cat; touch /usr/local/${marker} 2>&1; echo > /dev/tcp/127.0.0.1/${modelPort} 2>/dev/null && echo net-ok || echo net-off`;
    const call = { toolCalls: [{ name: 'run_program', arguments: { program: 'bash', args: ['-c', script], input: 'stdin-text' } }] };
    const shared = await run([call]);
    assert.equal(shared.final.status, 'finished');
    const out = shared.obs[0]!.content;
    assert.match(out, /^exit 0\nbwrap\nstdin-text/, 'PID 1 of its namespace is the sandbox');
    assert.match(out, new RegExp(`/usr/local/${marker}': Read-only file system`));
    assert.match(out, /net-ok/);
    assert.equal(await readFile(path.join(shared.workspace, 'exec.txt'), 'utf8'), 'from-exec\n');
    assert.ok(!existsSync(`/usr/local/${marker}`));
    const cut = await run([call], { toolTaskQueue: NO_NET_QUEUE });
    assert.match(cut.obs[0]!.content, /net-off/);
  });

  test('ctx.exec: pause --now stops the program and what it started', async () => {
    const marker = `3011.${process.pid}`;
    h.model.setScript(
      turns({ toolCalls: [{ name: 'run_program', arguments: { program: 'bash', args: ['-c', `sleep ${marker} & sleep ${marker}`] } }] }),
    );
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: 'go' });
    void conversation.run().catch(() => undefined); // its outcome is checked through the events
    await waitFor('the program to run', async () => (await processes(`sleep ${marker}`)).split('\n').length === 2);
    await h.cli(['pause', conversation.id, '--now']);
    await conversation.waitUntil((s) => s.status === 'paused', 100, 30_000);
    await waitFor('the program to end', async () => (await processes(`sleep ${marker}`)) === '', 10_000);
    const obs = await waitFor('the interrupted observation', async () => observations(await conversation.events())[0]);
    assert.match(obs.content, /interrupted/);
    await conversation.close();
  });
});
