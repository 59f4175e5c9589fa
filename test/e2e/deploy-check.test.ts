// `faheem deploy check`, the gate before set-current, on a real dev server: it replays the server's
// conversations (every run of each chain) against this build and passes; against a build whose
// workflow adds a command at its start it fails, naming each conversation and the nondeterminism.
// `--histories test/histories` is the same check over the recorded histories (what CI runs).
import assert from 'node:assert/strict';
import { bundleWorkflowCode } from '@temporalio/worker';
import { copyFile, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { ROOT, startHarness, type Harness } from '../support/harness.js';

function script(request: RecordedRequest): ScriptedReply {
  const done = request.body.messages.filter((m) => m.role === 'tool').length;
  return done < 1 ? { toolCalls: [{ name: 'terminal', arguments: { command: 'echo checked' } }] } : { content: 'done' };
}

let h: Harness;
const ids: string[] = [];
before(async () => {
  h = await startHarness({ name: 'deploy-check', script, record: false });
  await h.startWorker();
  const agent = new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });
  for (const message of ['first', 'second']) {
    const c = await Conversation.create(h.client, {
      agent,
      workspace: await h.workspace(),
      firstMessage: message,
      run: true,
      continueAsNewEverySteps: 1,
    });
    await c.waitUntil((s) => s.status !== 'running', 100, 60_000);
    ids.push(c.id);
  }
});
after(async () => h?.close());

test('deploy check passes on the build that made the histories', async () => {
  const r = await h.cli(['deploy', 'check', '--limit', '10'], { reject: false });
  assert.equal(r.exitCode, 0, r.stderr + r.stdout);
  // Two conversations, each continued as new after its first step: four runs or more.
  const checked = Number(/(\d+) histories replay/.exec(r.stderr)?.[1]);
  assert.ok(checked >= 4, r.stderr);
});

test('deploy check fails on a build whose workflow adds a command at its start, naming each conversation', async () => {
  const { code } = await bundleWorkflowCode({ workflowsPath: path.join(ROOT, 'test', 'fixtures', 'breaking-workflows.js') });
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'faheem-breaking-')), 'workflow-bundle.js');
  await writeFile(file, code);
  const r = await h.cli(['deploy', 'check'], { reject: false, env: { FAHEEM_WORKFLOW_BUNDLE: file } });
  assert.notEqual(r.exitCode, 0, 'the check fails');
  for (const id of ids) assert.match(r.stdout, new RegExp(`^${id} \\(run [^)]+\\): .*[Nn]ondeterminism`, 'm'), r.stdout);
  assert.match(r.stderr, /would break on this build/);
});

// The whole folder is replayed by the same functions in the fast gate (test/workflow/replay.test.ts);
// here the command itself, over a few of its kinds: a continue-as-new chain, a sub-agent, a live stream.
test('deploy check --histories DIR: recorded histories replay on this build, and an edited one is named with its nondeterminism', async () => {
  const all = await readdir(path.join(ROOT, 'test', 'histories'));
  const pick = (what: string, match: (f: string) => boolean) => {
    const f = all.find(match);
    assert.ok(f, `a recorded history with ${what}`);
    return f;
  };
  const chain = pick('a continue-as-new chain', (f) => f.includes('@'));
  const files = [chain, pick('a sub-agent', (f) => f.includes('.sub-')), pick('a live stream', (f) => f.endsWith('::live.json'))];
  const dir = await mkdtemp(path.join(tmpdir(), 'faheem-histories-'));
  for (const f of files) await copyFile(path.join(ROOT, 'test', 'histories', f), path.join(dir, f));
  const ok = await h.cli(['deploy', 'check', '--histories', dir], { reject: false });
  assert.equal(ok.exitCode, 0, ok.stdout + ok.stderr);
  assert.match(ok.stderr, /3 histories replay/);

  // A history whose first activity is of another type than this build schedules there: nondeterminism.
  const history = JSON.parse(await readFile(path.join(dir, chain), 'utf8')) as {
    events: { activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[];
  };
  const scheduled = history.events.find((e) => e.activityTaskScheduledEventAttributes);
  assert.ok(scheduled?.activityTaskScheduledEventAttributes, `${chain} schedules an activity`);
  scheduled.activityTaskScheduledEventAttributes.activityType.name = 'notAnActivityOfOurs';
  await writeFile(path.join(dir, 'edited--broken-one.json'), JSON.stringify(history));
  const bad = await h.cli(['deploy', 'check', '--histories', dir], { reject: false });
  assert.notEqual(bad.exitCode, 0, bad.stdout);
  assert.match(bad.stdout, /^broken-one \(edited--broken-one\.json\): .*[Nn]ondeterminism/m);
  assert.match(bad.stderr, /1 of 4 histories would break on this build/);
});
