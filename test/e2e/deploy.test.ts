// New builds under live conversations, on a real dev server: versioned workers A and B (Temporal
// Worker Versioning). With conversations on A running a step, paused, finished (waiting for a
// message), in a `wait`, awaiting an approval, and a parent waiting on its sub-agent's step:
// set-current B, drain A, stop A. Every one moves to B keeping its status (the wait its deadline,
// the approval its pending actions; the sub-agent and then its parent once their steps end) and
// finishes there; a new conversation starts on B; a follower from before the deploy keeps seeing
// live lines.
// `deploy status --json` counts open conversations per version.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

const DEPLOYMENT = 'faheem-test';

/** The first user message says what the conversation does. */
function script(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  const first = String(messages.find((m) => m.role === 'user')?.content ?? '');
  const results = messages.filter((m) => m.role === 'tool').length;
  const go = /go-file=(\S+)/.exec(first)?.[1];
  // The sub-agent's step waits for the same file as the running one's. Both print a dot a second so
  // that the terminal's soft timeout (30 s of no output) cannot end the step early on a slow machine.
  if (first.includes('child-work') && go && results === 0) {
    return {
      toolCalls: [{ name: 'terminal', arguments: { command: `while [ ! -f ${go} ]; do sleep 1; printf .; done; echo child released` } }],
    };
  }
  if (first.startsWith('delegate-me') && go && results === 0) {
    return { toolCalls: [{ name: 'delegate', arguments: { task: `child-work go-file=${go}` } }] };
  }
  if (first.startsWith('run-long') && go && results === 0) {
    return { toolCalls: [{ name: 'terminal', arguments: { command: `while [ ! -f ${go} ]; do sleep 1; printf .; done; echo released` } }] };
  }
  if (first.startsWith('pause-me') && results === 0) {
    return { toolCalls: [{ name: 'terminal', arguments: { command: 'sleep 120' } }] };
  }
  if (first.startsWith('wait-long') && results === 0) {
    return { toolCalls: [{ name: 'wait', arguments: { seconds: 3600, reason: 'the nightly build' } }] };
  }
  // Its second turn (after the deploy) is held after its first word until the follower has seen it.
  if (first.startsWith('finish-me') && messages.filter((m) => m.role === 'user').length > 1) {
    return { content: 'done again, on B', wordByWord: true, gate: 'after-deploy', gateAfter: 1 };
  }
  if (first.startsWith('approve-me') && results === 0) {
    return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo approved > approved.txt' } }] };
  }
  return { content: 'done' };
}

let h: Harness;
let a: WorkerProcess;
// Outside /tmp, which each sandboxed command has a private one of: the commands of two conversations
// wait for a file here, and the test makes it. The workers let commands read it (FAHEEM_SANDBOX_READ:
// the rest of /var is not there for them).
let goDir: string | undefined;
before(async () => {
  h = await startHarness({ name: 'deploy', script });
  goDir = await mkdtemp('/var/tmp/faheem-deploy-go-');
});
after(async () => {
  await h?.close();
  if (goDir) await rm(goDir, { recursive: true, force: true });
});

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'wait', 'delegate'] });
const version = (buildId: string) => ({ FAHEEM_DEPLOYMENT: DEPLOYMENT, FAHEEM_BUILD_ID: buildId, FAHEEM_SANDBOX_READ: goDir! });

/** The build id the conversation's current run is pinned to (from describe). */
async function buildOf(id: string): Promise<string | undefined> {
  const d = await h.client.workflow.getHandle(id).describe();
  return d.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

/** `faheem deploy …`, retried while the server has not yet seen the version's pollers. */
async function deploy(args: string[]): Promise<string> {
  return waitFor(`faheem deploy ${args.join(' ')}`, async () => {
    const r = await h.cli(['deploy', ...args], { reject: false });
    if (r.exitCode !== 0) throw new Error(r.stderr);
    return r.stdout || 'ok';
  });
}

test('set-current B and drain A: running, paused, finished, waiting and approval-pending conversations move keeping their status; A stops; all finish on B', async () => {
  a = await h.startWorker(version('A'));
  await deploy(['set-current', 'A', '--deployment', DEPLOYMENT]);

  const goFile = path.join(goDir!, 'go');
  const start = async (firstMessage: string, extra: Partial<Parameters<typeof Conversation.create>[1]> = {}) =>
    Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage, run: true, ...extra });
  const approvalWorkspace = await h.workspace();

  const running = await start(`run-long go-file=${goFile}`);
  const paused = await start('pause-me');
  await waitFor('the command to pause to start', async () => (await paused.events()).some((e) => e.kind === 'action'));
  await paused.pause({ now: true });
  await paused.waitUntil((s) => s.status === 'paused', 100, 60_000);
  const finished = await start('finish-me');
  const waiting = await start('wait-long');
  const approving = await start('approve-me', { confirmationPolicy: 'always', workspace: approvalWorkspace });
  const parent = await start(`delegate-me go-file=${goFile}`);
  const childId = (await waitFor('the sub-agent to start', async () => (await parent.state()).children.find((c) => c.status === 'running')))
    .id;
  const child = await Conversation.attach(h.client, childId);
  await waitFor('the sub-agent step to be under way', async () => (await child.events()).some((e) => e.kind === 'action'));

  await running.waitUntil((s) => s.events > 2 && s.status === 'running', 100, 60_000);
  await waitFor('the running step to be under way', async () => (await running.events()).some((e) => e.kind === 'action'));
  assert.equal((await paused.state()).status, 'paused');
  assert.equal((await finished.waitUntil((s) => s.status !== 'running', 100, 60_000)).status, 'finished');
  // Followed from before the deploy: its live stream (a workflow of its own, auto-upgrading) moves to
  // B with it, so the follower still sees the lines of a step run after A stopped.
  const lines: string[] = [];
  const stopFollowing = new AbortController();
  const following = (async () => {
    for await (const item of finished.follow({ live: true, signal: stopFollowing.signal })) {
      if ('live' in item && item.kind === 'model_delta') {
        lines.push(item.text);
        h.model.release('after-deploy');
      }
    }
  })().catch(() => undefined);
  const waitState = await waiting.waitUntil((s) => s.waitingUntil != null, 100, 60_000);
  const until = waitState.waitingUntil?.until;
  assert.ok(until, 'the wait has a deadline');
  const pending = await approving.waitUntil((s) => s.status === 'waiting_for_confirmation', 100, 60_000);
  assert.equal(pending.pendingActions?.length, 1);
  for (const c of [running, paused, finished, waiting, approving, parent, child])
    assert.equal(await buildOf(c.id), 'A', `${c.id} runs on A`);

  const status = JSON.parse(await deploy(['status', '--json', '--deployment', DEPLOYMENT])) as {
    current: string;
    versions: { buildId: string; openConversations: number }[];
  };
  assert.equal(status.current, 'A');
  await waitFor('visibility to count the seven on A (the sub-agent is a conversation too)', async () => {
    const s = JSON.parse(await deploy(['status', '--json', '--deployment', DEPLOYMENT])) as typeof status;
    return s.versions.find((v) => v.buildId === 'A')?.openConversations === 7;
  });

  // The deploy: start B, make it current, drain A (the running step finishes on A first), stop A.
  await h.startWorker(version('B'));
  await deploy(['set-current', 'B', '--deployment', DEPLOYMENT]);
  const drain = h.cli(['deploy', 'drain', 'A', '--deployment', DEPLOYMENT, '--timeout', '90'], { reject: false });
  // The four not mid-step move at once; the running one, the sub-agent and its parent only once their steps end.
  await waitFor(
    'the idle ones on B',
    async () => {
      for (const c of [paused, finished, waiting, approving]) if ((await buildOf(c.id)) !== 'B') return false;
      return true;
    },
    60_000,
  );
  await writeFile(goFile, '');
  const drained = await drain;
  assert.equal(drained.exitCode, 0, drained.stderr);
  await a.kill();

  // Each kept its status on B.
  assert.equal((await paused.state()).status, 'paused');
  assert.equal((await finished.state()).status, 'finished');
  const movedWait = await waiting.state();
  assert.equal(movedWait.waitingUntil?.until, until, 'the wait kept its deadline');
  const movedApproval = await approving.state();
  assert.equal(movedApproval.status, 'waiting_for_confirmation');
  assert.equal(movedApproval.pendingActions?.length, 1);

  // And they finish there.
  assert.equal((await running.waitUntil((s) => s.status !== 'running', 100, 60_000)).status, 'finished');
  assert.ok(
    (await running.events()).some((e) => e.kind === 'observation' && e.content.includes('released')),
    'the running step ended when its file came',
  );
  // The tree: the sub-agent's step ended on A, its next on B; the parent read its result and moved after.
  const tree = await parent.waitUntil((s) => s.status !== 'running', 100, 60_000);
  assert.equal(tree.status, 'finished');
  assert.equal(tree.children.find((c) => c.id === childId)?.status, 'finished');
  const childObservation = (await parent.events()).find((e) => e.kind === 'observation');
  assert.match(childObservation?.kind === 'observation' ? childObservation.content : '', /done/);
  assert.ok((await child.events()).some((e) => e.kind === 'observation' && e.content.includes('child released')));
  await paused.sendMessage('go on');
  assert.equal((await paused.run()).status, 'finished', 'the paused one resumes on B');
  await finished.sendMessage('once more');
  const again = finished.run();
  await waitFor('the follower to see the step on B', () => lines.join('').includes('done again, on B'), 60_000);
  assert.equal((await again).status, 'finished');
  stopFollowing.abort();
  await following;
  await waiting.sendMessage('the build is done');
  assert.equal((await waiting.waitUntil((s) => s.status !== 'running', 100, 60_000)).status, 'finished');
  await approving.approve();
  assert.equal(
    (await approving.waitUntil((s) => s.status !== 'running' && s.status !== 'waiting_for_confirmation', 100, 60_000)).status,
    'finished',
  );
  assert.equal(await readFile(path.join(approvalWorkspace, 'approved.txt'), 'utf8'), 'approved\n', 'the approved command ran, on B');
  for (const c of [running, paused, finished, waiting, approving, parent, child])
    assert.equal(await buildOf(c.id), 'B', `${c.id} ends on B`);
  // The moved wait told the model how it ended (a message), once.
  const observations = (await waiting.events()).filter((e) => e.kind === 'observation');
  assert.equal(observations.length, 1);
  assert.match(observations[0]?.kind === 'observation' ? observations[0].content : '', /ended early/);

  const fresh = await start('new-one');
  assert.equal((await fresh.waitUntil((s) => s.status !== 'running', 100, 60_000)).status, 'finished');
  assert.equal(await buildOf(fresh.id), 'B');
  assert.ok(existsSync(goFile));
});
