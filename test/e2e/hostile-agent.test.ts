// The hostile-agent suite: a scripted model that tries every way out of the box the security issue
// found (links, FIFOs, /proc, loopback ports, foreign base URLs, id paths, hostile repository
// content), against real workers: the default one (bubblewrap where it works, which .ci/run makes
// sure of) and one started with `--sandbox bwrap` explicitly; the opt-out (`--sandbox none`) for what
// must hold without a sandbox too. Each test asserts that nothing leaked or was written outside, and
// the last that every worker still serves a plain conversation.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client.js';
import { samePromptSameReply, startScriptedModel, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ConversationEvent, ObservationEvent } from '../../src/types.js';
import { FAKE_KEY, startHarness, type Harness, type WorkerProcess } from '../support/harness.js';

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
        const server = createServer((s) => s.end('service\n'));
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

  for (const box of ['default', 'bwrap'] as const) {
    test(`[${box}] sandboxed: no other process's environment, no loopback or host service, nothing written outside`, async () => {
      const probe = (host: string, port: number | undefined) =>
        port === undefined
          ? 'echo skipped'
          : `timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port} && head -c 7 <&3' 2>/dev/null && echo " reached" || echo refused`;
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
      assert.match(write!.content, /Read-only file system/);
    });
  }

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
