// Two hosts of one pool on this machine (two workers, each with its own FAHEEM_HOST_ID,
// FAHEEM_WORKSPACES_DIR and FAHEEM_HOME), the object store on a real S3 server (SeaweedFS). The host
// holding a conversation is SIGKILLed mid-call and its folders deleted: the conversation moves to
// the other host, restored from the last shipped checkpoint; the call in flight comes back as
// "outcome unknown" and is not run again; the workspace holds exactly what the finished steps made.
// An MCP server follows the conversation: stopped on the host it leaves, started in the new host's folder.
// Tests that lose no host share their hosts (started once, in pools of their own: sharedHosts);
// each test that kills a host, or needs a pool of its own hosts alone, starts its own in pool p1.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { execa } from 'execa';
import { procStatFields } from '../../src/sandbox/proc-stat.js';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ObservationEvent } from '../../src/core/types.js';
import type { HooksConfig } from '../../src/hooks/config.js';
import { ROOT, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';
import { startSeaweedS3, type SeaweedS3 } from '../support/seaweedfs.js';

let s3: SeaweedS3;
let h: Harness;
let root: string;
before(async () => {
  s3 = await startSeaweedS3();
  root = await mkdtemp(path.join(tmpdir(), 'faheem-pool-'));
  h = await startHarness({
    name: 'pool',
    script: () => ({ content: 'ok' }),
    env: { ...s3.env, FAHEEM_OBJECT_STORE: `s3://${s3.bucket}/pool-test`, FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '600' },
  });
});
after(async () => {
  await h?.close();
  await s3?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

interface Host {
  id: string;
  dir: string;
  home: string;
  worker: WorkerProcess;
}

/** Every host started (a test finds a conversation's first host among them). */
const started: Host[] = [];

async function startHost(id: string, env: Record<string, string> = {}, pool = 'p1'): Promise<Host> {
  const dir = path.join(root, id, 'workspaces');
  const home = path.join(root, id, 'home');
  await mkdir(home, { recursive: true });
  const worker = await h.startWorker({ FAHEEM_HOST_ID: id, FAHEEM_WORKSPACES_DIR: dir, FAHEEM_HOME: home, ...env }, ['--pool', pool]);
  assert.match(worker.output(), new RegExp(`host ${id} of pool ${pool}`));
  assert.match(worker.output(), new RegExp(`task queues \\S+, \\S+-pool@${pool} \\(claims\\) and \\S+`));
  const host = { id, dir, home, worker };
  started.push(host);
  return host;
}

/**
 * The hosts of a pool that several tests share: started by the first that asks, left running to
 * the end of the file (tests that lose a host, or need a pool of one host alone, start their own
 * in pool p1). A pool of its own, so they never take the conversations of p1.
 */
const sharedPools = new Map<string, Promise<Host[]>>();
function sharedHosts(pool: string, ids: string[]): Promise<Host[]> {
  let hosts = sharedPools.get(pool);
  if (!hosts) sharedPools.set(pool, (hosts = Promise.all(ids.map((id) => startHost(id, {}, pool)))));
  return hosts;
}
/** Two hosts that no test kills (pool p2). */
const SHARED_PAIR = 'p2';
const sharedPair = () => sharedHosts(SHARED_PAIR, ['host-c', 'host-d']);
/** One host alone that no test kills (pool p3). */
const SHARED_ONE = 'p3';
const sharedOne = async () => (await sharedHosts(SHARED_ONE, ['host-s']))[0]!;

/** Stops the hosts a test started, once it ends (even when an assertion failed: they would take the next test's conversations). */
function stopAfter(t: TestContext, hosts: Host[]): void {
  t.after(() => Promise.all(hosts.map((x) => x.worker.kill().catch(() => undefined))));
}

/** Step by step: how many tool results the prompt holds says which step this is. */
function script(req: RecordedRequest): ScriptedReply {
  const results = req.body.messages.filter((m) => m.role === 'tool').length;
  if (results === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo one > a.txt' } }] };
  if (results === 1) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo two > b.txt; touch started; sleep 600' } }] };
  if (results === 2) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo three > c.txt; ls' } }] };
  return { content: 'Done.' };
}

/** Two steps, then an answer: `echo one > a.txt` (call id `first`), then `second` (call id `second`). */
function writeThenRun(second: string) {
  return (req: RecordedRequest): ScriptedReply => {
    const results = req.body.messages.filter((m) => m.role === 'tool').length;
    if (results === 0) return { toolCalls: [{ id: 'first', name: 'terminal', arguments: { command: 'echo one > a.txt' } }] };
    if (results === 1) return { toolCalls: [{ id: 'second', name: 'terminal', arguments: { command: second } }] };
    return { content: 'Done.' };
  };
}

test('a lost host: the conversation moves, the call in flight is "outcome unknown", the workspace is as of the last step', async (t) => {
  const hosts = await Promise.all([startHost('host-a'), startHost('host-b')]);
  stopAfter(t, hosts);
  const seed = path.join(root, 'seed');
  await mkdir(seed);
  await writeFile(path.join(seed, 'seed.txt'), 'from the seed\n');
  h.model.setScript(script);

  const { stdout } = await h.cli(['start', 'Work in the pool', '--pool', 'p1', '--workspace-from', seed]);
  const id = stdout.trim().split('\n').pop()!.trim();
  const conversation = await Conversation.attach(h.client, id);

  // The second command is running on the holder when its marker appears there.
  const holder = await waitFor('the second command to start on a host', async () => {
    const s = await conversation.state();
    const host = hosts.find((x) => x.id === s.host);
    return host && existsSync(path.join(host.dir, id, 'started')) ? host : undefined;
  }).catch(async (err: unknown) => {
    console.log(
      'the conversation and the hosts when the wait failed:',
      JSON.stringify(await conversation.state()),
      JSON.stringify(await conversation.events()),
      hosts.map((x) => x.worker.output()).join('\n----\n'),
    );
    throw err;
  });
  const other = hosts.find((x) => x !== holder)!;
  assert.equal(await readFile(path.join(holder.dir, id, 'seed.txt'), 'utf8'), 'from the seed\n', 'restored from the seed');

  // Lose the host: kill its worker and wipe its folders.
  await holder.worker.kill('SIGKILL');
  await rm(path.join(root, holder.id), { recursive: true, force: true });

  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  assert.equal(final.host, other.id);
  assert.equal(final.pool, 'p1');
  assert.equal(final.workspace, path.join(other.dir, id));

  const events = await conversation.events();
  const moves = events.filter((e) => e.kind === 'host_changed');
  assert.equal(moves.length, 2, JSON.stringify(moves));
  assert.deepEqual(
    moves.map((e) => e.kind === 'host_changed' && [e.from, e.to]),
    [
      [null, holder.id],
      [holder.id, other.id],
    ],
  );
  const move = moves[1]!;
  assert.ok(move.kind === 'host_changed' && move.restoredFromStep === 1, JSON.stringify(move));
  assert.match(move.kind === 'host_changed' ? move.reason : '', /heartbeat/);

  const observations = events.filter((e) => e.kind === 'observation');
  assert.equal(observations.length, 3);
  const unknown = observations[1]!;
  assert.ok(unknown.kind === 'observation');
  assert.match(unknown.content, /outcome unknown/);
  assert.match(unknown.content, /host-\w was lost/);
  assert.match(unknown.content, /as of step 1/);

  // The workspace: the seed, step 1's file and step 3's; nothing of the call that was lost.
  const workspace = path.join(other.dir, id);
  assert.deepEqual((await readdir(workspace)).sort(), ['a.txt', 'c.txt', 'seed.txt']);
  assert.equal(await readFile(path.join(workspace, 'a.txt'), 'utf8'), 'one\n');

  // Pulled from the store anywhere: the latest, and as of step 1.
  const pulled = path.join(root, 'pulled');
  const pull = await h.cli(['workspace', 'pull', id, pulled]);
  assert.deepEqual((await readdir(pulled)).sort(), ['a.txt', 'c.txt', 'seed.txt']);
  // Its last step answered without actions, so the last one shipped is the one before.
  assert.match(
    pull.stderr,
    /: its files after step 3, the last step shipped \(a step that runs no command or edit ships nothing\), written to /,
  );
  const atOne = path.join(root, 'at-one');
  await h.cli(['workspace', 'pull', id, atOne, '--step', '1']);
  assert.deepEqual((await readdir(atOne)).sort(), ['a.txt', 'seed.txt']);

  const { stdout: json } = await h.cli(['status', id, '--json']);
  const status = JSON.parse(json) as { pool?: string; host?: string; workspace?: string };
  assert.deepEqual([status.pool, status.host, status.workspace], ['p1', other.id, workspace]);
  const { stdout: text } = await h.cli(['events', id]);
  assert.match(text, new RegExp(`workspace moved from host ${holder.id} to ${other.id}`));
});

test('a host lost between calls: status and events --follow say the call waits for it and when it moves; then it moves', async (t) => {
  const hosts = await Promise.all([startHost('host-e'), startHost('host-f')]);
  stopAfter(t, hosts);
  h.model.setScript(writeThenRun('cat a.txt'));
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    pool: 'p1',
    // Room on a loaded machine for the follower's look (every 10 s) and a status before the move.
    hostWaitMs: 45_000,
    confirmationPolicy: 'always',
    firstMessage: 'Write, then show',
    run: true,
  });
  const asked = (callId: string) =>
    conversation.waitUntil((s) => s.status === 'waiting_for_confirmation' && s.pendingActions[0]?.toolCallId === callId, 200, 120_000);
  await asked('first');
  await conversation.approve();
  const second = await asked('second');
  // Between calls, nothing in flight on it: the host that holds the conversation is lost.
  const holder = hosts.find((x) => x.id === second.host)!;
  assert.ok(holder, JSON.stringify(second));
  const other = hosts.find((x) => x !== holder)!;
  await holder.worker.kill('SIGKILL');

  const follower = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'events', conversation.id, '--follow'], {
    cwd: ROOT,
    env: h.env,
    reject: false,
  });
  t.after(() => follower.kill());
  let followed = '';
  follower.stderr?.on('data', (d: Buffer) => (followed += d.toString()));
  // The approved call goes to the lost host's queue, where nobody picks it up.
  await conversation.approve();
  const waitLine = new RegExp(`waiting for host ${holder.id} of pool p1 \\(runTool not picked up there\\), for \\d+ s`);
  await waitFor('events --follow to say what the call waits for', () => waitLine.test(followed)).catch((err: unknown) => {
    console.log('the follower said:', followed);
    throw err;
  });
  assert.match(followed, new RegExp(`the conversation moves to another host of pool p1 at \\S+Z \\(45 s after it was scheduled\\)`));
  const status = await h.cli(['status', conversation.id, '--json']);
  const { waiting } = JSON.parse(status.stdout) as { waiting: { for: string; since: string; next: string } | null };
  assert.equal(waiting?.for, `host ${holder.id} of pool p1 (runTool not picked up there)`, status.stdout);
  assert.match(waiting.next, new RegExp(`^unless host ${holder.id} picks it up, the conversation moves to another host of pool p1 at `));

  // What it said happens next: the call never started, so it runs on the other host, with step 1's file.
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  assert.equal(final.host, other.id);
  const events = await conversation.events();
  const moved = events.filter((e) => e.kind === 'host_changed').at(-1);
  assert.ok(moved?.kind === 'host_changed' && moved.from === holder.id && /picked up no call/.test(moved.reason), JSON.stringify(moved));
  assert.match(observed(events, 'second'), /^one/);
});

test('idle past its bound a pooled conversation hibernates: its folder goes, and any host takes it up again', async () => {
  const hosts = await sharedPair();
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    const last = req.body.messages.at(-1);
    if (last?.role === 'tool') return { content: 'Done.' };
    const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
    return { toolCalls: [{ name: 'terminal', arguments: { command: text.includes('again') ? 'cat h.txt' : 'echo hello > h.txt' } }] };
  });
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    pool: SHARED_PAIR,
    poolIdleReleaseMs: 500,
    firstMessage: 'Write it',
    run: true,
  });
  const first = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(first.status, 'finished', first.lastError ?? '');
  const holder = hosts.find((x) => x.id === first.host)!;
  assert.ok(holder, `held by ${first.host}`);
  const folder = path.join(holder.dir, conversation.id);
  await waitFor('the conversation to hibernate', async () => {
    const s = await conversation.state();
    return s.host === null && !existsSync(folder);
  });

  await conversation.sendMessage('Show it again');
  const second = await conversation.run().then(() => conversation.state());
  assert.equal(second.status, 'finished', second.lastError ?? '');
  const events = await conversation.events();
  const observations = events.filter((e) => e.kind === 'observation');
  assert.match(observations.at(-1)?.kind === 'observation' ? observations.at(-1)!.content : '', /hello/);
  const woke = events.filter((e) => e.kind === 'host_changed').at(-1);
  assert.ok(woke?.kind === 'host_changed', JSON.stringify(events.filter((e) => e.kind === 'host_changed')));
  assert.equal(woke.from, holder.id);
  assert.match(woke.reason, /hibernation/);
  assert.equal(woke.restoredFromStep, 1);
});

test('a hook after hibernation runs on the host that takes the conversation, in its folder there', async () => {
  const host = await sharedOne();
  h.model.setScript((req: RecordedRequest): ScriptedReply =>
    req.body.messages.at(-1)?.role === 'tool'
      ? { content: 'Done.' }
      : { toolCalls: [{ name: 'terminal', arguments: { command: 'echo hi > a.txt' } }] },
  );
  const hooks: HooksConfig = { hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'pwd > hook.txt' }] }] } };
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    pool: SHARED_ONE,
    poolIdleReleaseMs: 500,
    hooks,
    firstMessage: 'Write it',
    run: true,
  });
  const first = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(first.status, 'finished', first.lastError ?? '');
  await waitFor('the conversation to hibernate', async () => (await conversation.state()).host === null);

  // The message's hook is the first call on a host after the folder went: it claims one first.
  await conversation.sendMessage('Again');
  const second = await conversation.run().then(() => conversation.state());
  assert.equal(second.status, 'finished', second.lastError ?? '');
  const events = await conversation.events();
  const hookErrors = events.filter((e) => e.kind === 'error' && /hook/.test(e.message));
  assert.deepEqual(hookErrors, [], 'the hook ran');
  assert.equal(second.host, host.id);
  assert.equal((await readFile(path.join(second.workspace!, 'hook.txt'), 'utf8')).trim(), second.workspace);
  const woke = events.filter((e) => e.kind === 'host_changed').at(-1);
  assert.ok(woke?.kind === 'host_changed' && /hibernation/.test(woke.reason), JSON.stringify(woke));
});

test('rewind and fork of a hibernating pooled conversation, on whichever host takes it', async () => {
  const hosts = await sharedPair();
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    const last = req.body.messages.at(-1);
    if (last?.role === 'tool') return { content: 'Done.' };
    const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
    const command = text.includes('second') ? 'echo two > g.txt' : text.includes('show') ? 'ls; cat f.txt' : 'echo one > f.txt';
    return { toolCalls: [{ name: 'terminal', arguments: { command } }] };
  });
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    pool: SHARED_PAIR,
    poolIdleReleaseMs: 500,
    firstMessage: 'first',
    run: true,
  });
  const hibernated = () => waitFor('the conversation to hibernate', async () => (await conversation.state()).host === null);
  assert.equal((await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000)).status, 'finished');
  await conversation.sendMessage('second');
  assert.equal((await conversation.run()).status, 'finished');
  await hibernated();
  const steps = (await conversation.checkpoints()).filter((c) => !c.rewound).map((c) => c.step);
  assert.ok(steps.includes(1), JSON.stringify(steps));

  // The fork at step 1: its own pooled workspace, restored from the source's shipped step 1.
  const { stdout } = await h.cli(['fork', conversation.id, '--at', '1']);
  const forked = await Conversation.attach(h.client, stdout.trim().split('\n').pop()!.trim());
  await forked.sendMessage('show it');
  const fromFork = await forked.run().then(() => forked.state());
  assert.equal(fromFork.status, 'finished', fromFork.lastError ?? '');
  assert.ok(hosts.some((x) => x.id === fromFork.host));
  const forkEvents = await forked.events();
  const shown = forkEvents.filter((e) => e.kind === 'observation').at(-1);
  assert.match(shown?.kind === 'observation' ? shown.content : '', /one/);
  assert.deepEqual((await readdir(fromFork.workspace)).sort(), ['f.txt'], "the fork has step 1's files only");

  // The rewind to step 1 (on a host claimed for it), then a step there: g.txt is gone.
  await h.cli(['rewind', conversation.id, '--to', '1']);
  await conversation.sendMessage('show it');
  const after = await conversation.run().then(() => conversation.state());
  assert.equal(after.status, 'finished', after.lastError ?? '');
  const listed = (await conversation.events()).filter((e) => e.kind === 'observation').at(-1);
  const text = listed?.kind === 'observation' ? listed.content : '';
  assert.match(text, /f\.txt/);
  assert.doesNotMatch(text, /g\.txt/);
});

/**
 * Whether a process of the `where` server (or of the sandbox around it) runs in `dir`, by its
 * working directory as this host sees it: the server's own pid is the sandbox's, not ours.
 */
function serverRunsIn(dir: string): boolean {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('where-mcp-server.mjs')) continue;
      if (procStatFields(pid)?.[0] === 'Z') continue; // exited, not yet reaped
      const cwd = readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, '');
      if (cwd === dir) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

test('an MCP server follows a pooled conversation: stopped on the host it leaves, started in the next host folder', async (t) => {
  // Step by step, by the tool results so far: where (host g), a reply held until the test pauses;
  // then where (host h), a long command in flight when host h is lost, where (host g again), done.
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    const results = req.body.messages.filter((m) => m.role === 'tool').length;
    const where = { toolCalls: [{ name: 'mcp__here__where', arguments: {} }] };
    if (req.body.messages.at(-1)?.role !== 'tool') return where;
    if (results === 1) return { content: 'Done.', gate: 'mcp-hibernate' };
    if (results === 2) return { toolCalls: [{ name: 'terminal', arguments: { command: 'touch started; sleep 600' } }] };
    if (results === 3) return where;
    return { content: 'Done.' };
  });
  const cwdOf = (o: ObservationEvent | undefined) => {
    assert.ok(o && !o.isError, JSON.stringify(o));
    return (JSON.parse(o.content) as { cwd: string }).cwd;
  };

  // Host g alone first: it takes the conversation, and the server starts in g's folder.
  const g = await startHost('host-g');
  stopAfter(t, [g]);
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    pool: 'p1',
    mcpServers: { here: { command: process.execPath, args: [path.join(ROOT, 'test/fixtures/where-mcp-server.mjs')] } },
    firstMessage: 'Where are you?',
    run: true,
  });
  const observations = async () => (await conversation.events()).filter((e): e is ObservationEvent => e.kind === 'observation');
  const onG = path.join(g.dir, conversation.id);
  const onH = path.join(root, 'host-h', 'workspaces', conversation.id);
  await h.model.reached('mcp-hibernate');
  assert.equal(cwdOf((await observations())[0]), onG);
  assert.ok(serverRunsIn(onG), 'the server runs while the conversation holds host g');

  // Paused, it hibernates at once: the folder goes, and so does the server that ran in it.
  await conversation.pause();
  h.model.release('mcp-hibernate');
  await waitFor('the conversation to hibernate', async () => (await conversation.state()).host === null);
  await waitFor('the MCP server on host g to stop when the conversation leaves', () => !serverRunsIn(onG));

  // Host g goes away (cleanly); host h takes the conversation up and starts the server in its own folder.
  await g.worker.kill();
  const hh = await startHost('host-h');
  stopAfter(t, [hh]);
  await conversation.sendMessage('And now?');
  await conversation.resume();
  const second = await waitFor('the MCP call on host h', async () => (await observations())[1]);
  assert.equal(cwdOf(second), onH);
  assert.ok(serverRunsIn(onH));

  // Host h is lost mid-call: g (back again) takes the conversation, and the server starts in g's folder.
  await waitFor('the long command to start on host h', () => existsSync(path.join(onH, 'started')));
  const g2 = await startHost('host-g');
  stopAfter(t, [g2]);
  await hh.worker.kill('SIGKILL');
  await rm(path.join(root, hh.id), { recursive: true, force: true });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const obs = await observations();
  assert.match(obs[2]?.content ?? '', /outcome unknown/);
  assert.equal(cwdOf(obs[3]), onG);
  assert.ok(serverRunsIn(onG));
  assert.equal((await conversation.state()).host, g2.id, 'held by g (idle, not yet hibernated)');
  await waitFor('the MCP server on the lost host to end with its worker', () => !serverRunsIn(onH));

  // Closing stops the server on the host the conversation is on, as it releases the folder there.
  await conversation.close();
  const handle = h.client.workflow.getHandle(conversation.id);
  await handle.result();
  await waitFor('the MCP server on host g to stop after close', () => !serverRunsIn(onG));
  const scheduled = (await handle.fetchHistory()).events?.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name) ?? [];
  assert.ok(scheduled.includes('releasePoolHost'), 'released on close');
  assert.ok(!scheduled.includes('releaseTools'), 'no separate stop: the release stopped the servers');
});

/** The host that took the conversation first. */
async function firstHost(conversation: Conversation): Promise<Host | undefined> {
  const first = (await conversation.events()).find((e) => e.kind === 'host_changed');
  const id = first?.kind === 'host_changed' ? first.to : undefined;
  return id === undefined ? undefined : started.find((x) => x.id === id);
}

/** The files of a folder, sorted. */
const filesIn = async (dir: string) => (await readdir(dir)).sort();

/** The content of the observation of the call with this id. */
function observed(events: Awaited<ReturnType<Conversation['events']>>, toolCallId: string): string {
  const o = events.find((e) => e.kind === 'observation' && e.toolCallId === toolCallId);
  return o?.kind === 'observation' ? o.content : '';
}

/**
 * A conversation of `pool` (terminal and wait, a 500 ms idle bound) started with `firstMessage`, once
 * it has hibernated in a wait (its folder gone from the host that held it); and that host.
 */
async function hibernatedInWait(firstMessage: string, pool: string): Promise<{ conversation: Conversation; holder: Host }> {
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'wait'] }),
    pool,
    poolIdleReleaseMs: 500,
    firstMessage,
    run: true,
  });
  // Bounds as the file's other long waits: a claim, a model call and a command on a busy machine
  // (the landing CI's load) took over the default 60 s once; what the conversation did is printed then.
  const said = async <T>(wait: Promise<T>): Promise<T> =>
    wait.catch(async (err: unknown) => {
      console.error(`${conversation.id}: ${JSON.stringify(await conversation.state())}\n${JSON.stringify(await conversation.events())}`);
      throw err;
    });
  const holder = await said(
    waitFor('the wait to begin', async () => ((await conversation.state()).waitingUntil ? firstHost(conversation) : undefined), 120_000),
  );
  const folder = path.join(holder.dir, conversation.id);
  await said(
    waitFor(
      'the conversation to hibernate in its wait',
      async () => {
        const s = await conversation.state();
        return s.waitingUntil !== null && s.host === null && !existsSync(folder);
      },
      120_000,
    ),
  );
  return { conversation, holder };
}

test('a long wait mid-step hibernates: the files the step wrote before it are shipped, and the step goes on with them on any host', async () => {
  const hosts = await sharedPair();
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    if (req.body.messages.some((m) => m.role === 'tool')) return { content: 'Done.' };
    // One step: a file written, a long wait, then the file read (the step's checkpoint rides on that last call).
    return {
      toolCalls: [
        { id: 'write', name: 'terminal', arguments: { command: 'echo before the wait > w.txt' } },
        { id: 'wait', name: 'wait', arguments: { seconds: 3600, reason: 'for the build' } },
        { id: 'read', name: 'terminal', arguments: { command: 'cat w.txt; echo after > x.txt; ls' } },
      ],
    };
  });
  const { conversation, holder } = await hibernatedInWait('Write, wait, read', SHARED_PAIR);
  // The store has the file the step wrote before it waited.
  const during = path.join(root, 'during-wait');
  await h.cli(['workspace', 'pull', conversation.id, during]);
  assert.deepEqual(await filesIn(during), ['w.txt']);

  await conversation.sendMessage('The build is done');
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const events = await conversation.events();
  assert.match(observed(events, 'wait'), /ended early .*a message from the user arrived/);
  // The rest of the step ran on the host that woke it, and found there what the step wrote before the wait.
  assert.match(observed(events, 'read'), /before the wait\s+w\.txt\s+x\.txt/);
  const woke = events.filter((e) => e.kind === 'host_changed').at(-1);
  assert.ok(woke?.kind === 'host_changed', JSON.stringify(events.filter((e) => e.kind === 'host_changed')));
  assert.equal(woke.from, holder.id);
  assert.match(woke.reason, /woke from hibernation .*in the middle of step 1/);
  assert.equal(woke.restoredFromStep, 1);

  assert.ok(hosts.some((x) => x.id === woke.to));
  // Pulled from the store: everything the step made.
  const pulled = path.join(root, 'after-wait');
  await h.cli(['workspace', 'pull', conversation.id, pulled, '--step', '1']);
  assert.deepEqual(await filesIn(pulled), ['w.txt', 'x.txt']);
  assert.equal(await readFile(path.join(pulled, 'w.txt'), 'utf8'), 'before the wait\n');
});

test('a hibernation mid-step that cannot ship keeps the folder on its host, and says why', async (t) => {
  // A store cap of 1 MB: the step's 2 MB file cannot be shipped as the wait begins.
  const host = await startHost('host-k', { FAHEEM_OBJECT_MAX_BYTES: '1000000' });
  stopAfter(t, [host]);
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    if (req.body.messages.some((m) => m.role === 'tool')) return { content: 'Done.' };
    return {
      toolCalls: [
        { id: 'write', name: 'terminal', arguments: { command: 'head -c 2000000 /dev/urandom > big.bin' } },
        { id: 'wait', name: 'wait', arguments: { seconds: 3600, reason: 'for the build' } },
      ],
    };
  });
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'wait'] }),
    pool: 'p1',
    poolIdleReleaseMs: 500,
    firstMessage: 'Write a big file, then wait',
    run: true,
  });
  const kept = await waitFor('the failed hibernation to be shown', async () =>
    (await conversation.events()).find((e) => e.kind === 'error' && /hibernation in step 1/.test(e.message)),
  );
  assert.ok(kept.kind === 'error');
  assert.match(kept.message, /host host-k keeps the workspace folder .*FAHEEM_OBJECT_MAX_BYTES/);
  const s = await conversation.state();
  assert.equal(s.host, 'host-k', 'still held by its host');
  assert.ok(s.waitingUntil, 'still waiting');
  assert.ok(existsSync(path.join(host.dir, conversation.id, 'big.bin')), 'the folder is kept');
  await conversation.close();
});

test('woken in the middle of a step, then its host lost: the move restores what was shipped in the middle of the step', async (t) => {
  const hosts = await Promise.all([startHost('host-m'), startHost('host-n')]);
  stopAfter(t, hosts);
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    const results = req.body.messages.filter((m) => m.role === 'tool').length;
    // Step 1: a file written, a long wait, then a command that runs until its host is lost.
    if (results === 0) {
      return {
        toolCalls: [
          { id: 'write', name: 'terminal', arguments: { command: 'echo before the wait > w.txt' } },
          { id: 'wait', name: 'wait', arguments: { seconds: 3600, reason: 'for the build' } },
          { id: 'long', name: 'terminal', arguments: { command: 'touch woke; sleep 600' } },
        ],
      };
    }
    if (results === 3) return { toolCalls: [{ id: 'look', name: 'terminal', arguments: { command: 'ls' } }] };
    return { content: 'Done.' };
  });
  const { conversation } = await hibernatedInWait('Write, wait, work', 'p1');
  await conversation.sendMessage('The build is done');
  // The last command of the step runs on the host that woke the conversation.
  const waker = await waitFor('the command after the wait to start on a host', async () => {
    const s = await conversation.state();
    const host = hosts.find((x) => x.id === s.host);
    return host && existsSync(path.join(host.dir, conversation.id, 'woke')) ? host : undefined;
  });
  await waker.worker.kill('SIGKILL');
  await rm(path.join(root, waker.id), { recursive: true, force: true });

  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const events = await conversation.events();
  assert.match(observed(events, 'long'), /outcome unknown/);
  const moved = events.filter((e) => e.kind === 'host_changed').at(-1);
  assert.ok(moved?.kind === 'host_changed' && /stopped heartbeating/.test(moved.reason), JSON.stringify(moved));
  assert.equal(moved.from, waker.id);
  assert.equal(moved.restoredFromStep, 1, 'restored from what was shipped in the middle of step 1, not from step 0');
  // The file the step wrote before its wait is there on the new host; what the lost command made is not.
  assert.match(observed(events, 'look'), /^w\.txt\s/);
});

test("a paused sub-agent of a pooled conversation keeps working in its parent's folder when resumed", async () => {
  const host = await sharedOne();
  const firstUser = (req: RecordedRequest) => String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    const results = req.body.messages.filter((m) => m.role === 'tool').length;
    if (firstUser(req) === 'child work') {
      if (results === 0) {
        // Runs until the test has paused the sub-agent (it writes `go`).
        const command = 'touch child-started; while [ ! -e go ]; do sleep 0.1; done; rm go';
        return { toolCalls: [{ id: 'child-1', name: 'terminal', arguments: { command } }] };
      }
      if (results === 1) return { toolCalls: [{ id: 'child-ls', name: 'terminal', arguments: { command: 'ls' } }] };
      return { content: 'child done' };
    }
    if (results === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo from the parent > p.txt' } }] };
    if (results === 1) return { toolCalls: [{ name: 'delegate', arguments: { task: 'child work' } }] };
    return { content: 'Done.' };
  });
  const parent = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'delegate'] }),
    pool: SHARED_ONE,
    firstMessage: 'delegate in the pool',
    run: true,
  });
  await waitFor('the sub-agent to start its command', async () => existsSync(path.join(host.dir, parent.id, 'child-started')));
  const child = await Conversation.attach(h.client, `${parent.id}.sub-1`);
  await child.pause();
  await writeFile(path.join(host.dir, parent.id, 'go'), '');
  // Paused, the sub-agent's step ends; the run stops there (where a pooled conversation hibernates).
  await waitFor('the paused sub-agent to end its step', async () => observed(await child.events(), 'child-1') !== '');
  assert.equal((await child.state()).status, 'paused');
  await child.resume();
  const final = await parent.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  // Resumed, the sub-agent found the parent's file: it did not claim a folder of its own.
  const childEvents = await child.events();
  assert.match(observed(childEvents, 'child-ls'), /child-started\s+p\.txt/);
  assert.ok(!childEvents.some((e) => e.kind === 'host_changed'), 'the sub-agent never hibernated');
  // Its checkpoints are of the parent's folder, which the parent's own checkpoints ship: none failed.
  const errors = childEvents.filter((e) => e.kind === 'error');
  assert.deepEqual(errors, [], JSON.stringify(errors));
});

test('awaiting approval past the bound hibernates: a hook’s file is shipped, and once approved the call runs with every file', async () => {
  await sharedPair();
  // Once a.txt exists, the hook writes a file into the workspace and asks for a person's approval.
  const ask = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' } });
  const hook = `if [ -f a.txt ]; then echo checked by the hook > hook.txt; cat > /dev/null; echo '${ask}'; fi`;
  h.model.setScript(writeThenRun('cat hook.txt a.txt; ls'));
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
    pool: SHARED_PAIR,
    poolIdleReleaseMs: 500,
    hooks: { hooks: { PreToolUse: [{ matcher: 'terminal', hooks: [{ type: 'command', command: hook }] }] } },
    firstMessage: 'Write, then show',
    run: true,
  });
  const waiting = await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
  assert.equal(waiting.status, 'waiting_for_confirmation', waiting.lastError ?? '');
  const holder = (await firstHost(conversation))!;
  assert.ok(holder, JSON.stringify(await conversation.events()));
  const folder = path.join(holder.dir, conversation.id);
  await waitFor('the conversation to hibernate while it awaits approval', async () => {
    const s = await conversation.state();
    return s.status === 'waiting_for_confirmation' && s.host === null && !existsSync(folder);
  });
  const during = path.join(root, 'during-approval');
  await h.cli(['workspace', 'pull', conversation.id, during]);
  assert.deepEqual(await filesIn(during), ['a.txt', 'hook.txt']);

  await conversation.approve();
  const final = await conversation.waitUntil((s) => s.status !== 'running' && s.status !== 'waiting_for_confirmation', 200, 120_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const events = await conversation.events();
  // The approved call ran on the host that woke it, with the hook's file and the first step's.
  assert.match(observed(events, 'second'), /checked by the hook\s+one\s+a\.txt\s+hook\.txt/);
  const woke = events.filter((e) => e.kind === 'host_changed').at(-1);
  assert.ok(woke?.kind === 'host_changed' && /woke from hibernation .*in the middle of step 2/.test(woke.reason), JSON.stringify(woke));
  assert.equal(woke.restoredFromStep, 2);
  const pulled = path.join(root, 'after-approval');
  await h.cli(['workspace', 'pull', conversation.id, pulled]);
  assert.deepEqual(await filesIn(pulled), ['a.txt', 'hook.txt']);
});
