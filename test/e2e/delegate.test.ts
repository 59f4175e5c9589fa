// Sub-agents as child conversations, against a real server and worker processes: parallel children,
// a worker killed mid-child, costs counted over the tree, `list --parent`, `events --follow` with
// children indented. (The whole tree paused and resumed from the parent, and an erroring child, are
// workflow rules: test/workflow/sub-agents.test.ts.)
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import type { ChildEvent, ObservationEvent } from '../../src/core/types.js';
import { startHarness, waitFor, waitUntilListed, type Harness, type WorkerProcess } from '../support/harness.js';

let h: Harness;
let worker: WorkerProcess;
before(async () => {
  h = await startHarness({ name: 'delegate', script: () => ({ content: 'ok' }) });
  worker = await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor', 'delegate'] });
const firstUser = (req: RecordedRequest) => String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
const toolResults = (req: RecordedRequest) => req.body.messages.filter((m) => m.role === 'tool');
const observations = (events: { kind: string }[]) => events.filter((e): e is ObservationEvent => e.kind === 'observation');

/** A child that writes `lines` lines into `file`, one command a step, then answers (a call a pause left unrun is asked again). */
function writer(file: string, lines: number, delayMs = 0) {
  return (req: RecordedRequest): ScriptedReply => {
    const done = toolResults(req).filter((m) => !String(m.content).startsWith('Not run')).length;
    if (done < lines) return { delayMs, toolCalls: [{ name: 'terminal', arguments: { command: `echo line${done + 1} >> ${file}` } }] };
    return { delayMs, content: `wrote ${lines} lines to ${file}` };
  };
}

/** `script`, with its reply after `steps` done steps held at the gate `gate`. */
function atStep(steps: number, gate: string, script: (req: RecordedRequest) => ScriptedReply) {
  return (req: RecordedRequest): ScriptedReply => {
    const done = toolResults(req).filter((m) => !String(m.content).startsWith('Not run')).length;
    return done === steps ? { ...script(req), gate } : script(req);
  };
}

/** Routes each request by its conversation's first user message. */
function routes(table: Record<string, (req: RecordedRequest) => ScriptedReply>) {
  return (req: RecordedRequest): ScriptedReply => {
    const route = table[firstUser(req)];
    if (!route) return { status: 500, error: `no route for ${firstUser(req)}` };
    return route(req);
  };
}

const delegateBoth =
  (tasks: string[]) =>
  (req: RecordedRequest): ScriptedReply =>
    toolResults(req).length === 0
      ? { toolCalls: tasks.map((task, i) => ({ id: `d${i}`, name: 'delegate', arguments: { task } })) }
      : {
          content: `children said: ${toolResults(req)
            .map((m) => m.content)
            .join(' | ')}`,
        };

test('two delegate calls run two child conversations in parallel; their answers come back', { timeout: 600_000 }, async () => {
  // In parallel, shown by gates: each child's first reply is held until the other child has asked
  // the model. Children run one after the other, in either order, would never get there (the test
  // times out).
  const a = writer('a.txt', 2);
  const b = writer('b.txt', 2);
  h.model.setScript(
    routes({
      'split the work': delegateBoth(['create a.txt', 'create b.txt']),
      'create a.txt': (req) => {
        h.model.release('b-first');
        return toolResults(req).length === 0 ? { ...a(req), gate: 'a-first' } : a(req);
      },
      'create b.txt': (req) => {
        h.model.release('a-first');
        return toolResults(req).length === 0 ? { ...b(req), gate: 'b-first' } : b(req);
      },
    }),
  );
  const workspace = await h.workspace();
  const parent = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'split the work' });
  const final = await parent.run().then(() => parent.state());
  assert.equal(final.status, 'finished');
  assert.equal(await readFile(path.join(workspace, 'a.txt'), 'utf8'), 'line1\nline2\n');
  assert.equal(await readFile(path.join(workspace, 'b.txt'), 'utf8'), 'line1\nline2\n');
  const obs = observations(await parent.events());
  assert.deepEqual(
    obs.map((o) => [o.tool, o.content]),
    [
      ['delegate', 'wrote 2 lines to a.txt'],
      ['delegate', 'wrote 2 lines to b.txt'],
    ],
  );

  assert.deepEqual(
    final.children.map((c) => [c.id, c.status, c.task]),
    [
      [`${parent.id}.sub-1`, 'finished', 'create a.txt'],
      [`${parent.id}.sub-2`, 'finished', 'create b.txt'],
    ],
  );
  const child = await Conversation.attach(h.client, `${parent.id}.sub-1`);
  const childState = await child.state();
  assert.equal(childState.parentId, parent.id);
  assert.ok(childState.metrics.accumulatedCost > 0);
  const own = final.metrics.accumulatedCost - final.children.reduce((s, c) => s + c.cost, 0);
  assert.ok(own > 0 && final.children.every((c) => c.cost > 0), "the tree's cost is the parent's plus its children's");
  assert.ok(await child.isClosed(), 'a finished child completes its workflow');

  const { stdout } = await h.cli(['status', parent.id, '--json']);
  const json = JSON.parse(stdout) as { children: { id: string; status: string; cost: number }[]; metrics: { accumulatedCost: number } };
  assert.equal(json.children.length, 2);
  assert.equal(json.metrics.accumulatedCost, final.metrics.accumulatedCost);
  // Both children in the visibility store (waited for with the SDK); then `list --parent` shows them.
  for (const n of [1, 2]) await waitUntilListed(h, { parentId: parent.id }, `${parent.id}.sub-${n}`);
  const { stdout: out } = await h.cli(['list', '--parent', parent.id, '--json']);
  const listed = out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string });
  assert.deepEqual(listed.map((r) => r.id).sort(), [`${parent.id}.sub-1`, `${parent.id}.sub-2`]);
});

test('a worker killed mid-child: a new worker finishes the tree, each child started once and each step once', async () => {
  h.model.setScript(
    routes({
      'one long job': delegateBoth(['count into z.txt']),
      // The reply after four steps is held at a gate: the worker dies with that call under way.
      'count into z.txt': atStep(4, 'z-4', writer('z.txt', 10)),
    }),
  );
  const workspace = await h.workspace();
  const parent = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'one long job', run: true });
  const kid = `${parent.id}.sub-1`;
  const held = await h.model.reached('z-4');
  assert.ok((await Conversation.attach(h.client, kid).then((c) => c.state())).iterations >= 4);
  await worker.kill('SIGKILL');
  await waitFor('the held call gone with its worker', () => held.aborted);
  h.model.release('z-4');
  worker = await h.startWorker();
  const final = await parent.waitUntil((s) => s.status !== 'running', 100, 90_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  const lines = (await readFile(path.join(workspace, 'z.txt'), 'utf8')).trim().split('\n');
  // A command cut off by the kill is reported, not run again: each line at most once, in order.
  assert.deepEqual(lines, [...new Set(lines)], 'no step ran twice');
  assert.equal(final.children.length, 1);
  const started = (await parent.events()).filter((e): e is ChildEvent => e.kind === 'child' && e.status === 'started');
  assert.equal(started.length, 1, 'one child for one delegate call');
});

test("`faheem start --delegate` and `events --follow` show the children's progress indented under the call; depth is limited", async () => {
  h.model.setScript(
    routes({
      'delegate from the cli': delegateBoth(['nested work']),
      // The child tries to delegate again (allowed at depth 1), the grandchild cannot (depth 2).
      'nested work': (req) =>
        toolResults(req).length === 0
          ? { toolCalls: [{ name: 'delegate', arguments: { task: 'deepest work' } }] }
          : { content: `child got: ${toolResults(req)[0]?.content}` },
      'deepest work': (req) => {
        const offered = ((req.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
        return { content: `deepest has delegate: ${offered.includes('delegate')}` };
      },
    }),
  );
  const workspace = await h.workspace();
  const { stdout: id } = await h.cli(['start', 'delegate from the cli', '--workspace', workspace, '--delegate']);
  const { stdout } = await h.cli(['events', id.trim(), '--follow', '--until-stop']);
  const lines = stdout.split('\n');
  const started = lines.findIndex((l) => /↳ sub-agent .*\.sub-1 started: nested work/.test(l));
  assert.ok(started >= 0, stdout);
  assert.ok(
    lines.some((l, i) => i > started && /^ {4}\s*#\s*\d+ .*↳ sub-agent .*\.sub-1\.sub-1 started: deepest work/.test(l)),
    `grandchild indented under the child:\n${stdout}`,
  );
  assert.ok(
    lines.some((l) => /^ {8}\s*#\s*\d+ .*agent.*deepest has delegate: false/.test(l)),
    `grandchild's answer indented twice:\n${stdout}`,
  );
  const parent = await Conversation.attach(h.client, id.trim());
  const final = await parent.waitUntil((s) => s.status !== 'running');
  assert.equal(final.status, 'finished');
  assert.match(observations(await parent.events())[0]!.content, /child got: deepest has delegate: false/);
});
