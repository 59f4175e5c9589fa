// Hooks and skills in a real conversation: a PreToolUse hook blocks `rm -rf` (the reason reaches
// the model) while a later command runs; a PostToolUse hook sees every tool; a hanging hook times
// out into an error event and the conversation goes on; UserPromptSubmit refuses a message; a Stop
// hook makes the agent go on once; a skill is listed in the prompt, its body never.
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import type { HooksConfig } from '../../src/hooks/config.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'hooks', script: () => ({ content: 'ok' }) });
  await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });
const toolResults = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

test('PreToolUse blocks rm -rf with its reason; a later command runs; PostToolUse sees every tool', async () => {
  const workspace = await h.workspace();
  await writeFile(path.join(workspace, 'keep.txt'), 'precious\n');
  const policy = `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const e=JSON.parse(s);if(/rm -rf/.test(e.tool_input.command)){console.error("never rm -rf in this repository");process.exit(2)}})'`;
  const audit = `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const e=JSON.parse(s);require("fs").appendFileSync("audit.log",e.tool_name+" "+e.tool_response.isError+"\\n")})'`;
  const hooks: HooksConfig = {
    hooks: {
      PreToolUse: [{ matcher: 'terminal', hooks: [{ type: 'command', command: policy, timeout: 30 }] }],
      PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: audit }] }],
    },
  };
  h.model.setScript((r): ScriptedReply => {
    const done = toolResults(r).length;
    if (done === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: 'rm -rf keep.txt' } }] };
    if (done === 1) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo later > later.txt' } }] };
    return { content: 'done' };
  });
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'clean up', run: true, hooks });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  assert.equal(await readFile(path.join(workspace, 'keep.txt'), 'utf8'), 'precious\n', 'rm -rf did not run');
  assert.equal(await readFile(path.join(workspace, 'later.txt'), 'utf8'), 'later\n', 'the later command ran');
  const last = h.model.requests[h.model.requests.length - 1];
  assert.ok(last && toolResults(last)[0]?.includes('never rm -rf in this repository'), 'the reason reached the model');
  // PostToolUse saw the one call that ran (the blocked one never ran).
  assert.equal((await readFile(path.join(workspace, 'audit.log'), 'utf8')).trim(), 'terminal false');
});

test('a hanging hook times out into an error event and the conversation goes on; onFailure block blocks', async () => {
  const workspace = await h.workspace();
  h.model.setScript((r): ScriptedReply =>
    toolResults(r).length < 2
      ? { toolCalls: [{ name: 'terminal', arguments: { command: `echo step${toolResults(r).length}` } }] }
      : { content: 'done' },
  );
  const hooks: HooksConfig = {
    hooks: {
      PreToolUse: [{ matcher: '', hooks: [{ type: 'command', command: 'if [ -f first ]; then sleep 30; fi; touch first', timeout: 1 }] }],
    },
  };
  await writeFile(path.join(workspace, 'first'), '');
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'go', run: true, hooks });
  const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.equal(final.status, 'finished');
  const errors = (await conversation.events()).filter((e) => e.kind === 'error').map((e) => (e.kind === 'error' ? e.message : ''));
  assert.ok(
    errors.some((m) => /hook: .*did not finish within its timeout/.test(m)),
    errors.join('\n'),
  );

  const blocking: HooksConfig = {
    hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'sleep 30', timeout: 1, onFailure: 'block' }] }] },
  };
  h.model.setScript((r): ScriptedReply =>
    toolResults(r).length < 1 ? { toolCalls: [{ name: 'terminal', arguments: { command: 'touch ran.txt' } }] } : { content: 'done' },
  );
  const strict = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    run: true,
    hooks: blocking,
  });
  await strict.waitUntil((s) => s.status !== 'running', 200, 60_000);
  const observation = (await strict.events()).find((e) => e.kind === 'observation');
  assert.ok(observation?.kind === 'observation' && /Not run: a PreToolUse hook blocked this call/.test(observation.content));
});

test('UserPromptSubmit refuses a message (the model never sees it); a Stop hook makes the agent go on once', async () => {
  const workspace = await h.workspace();
  const hooks: HooksConfig = {
    hooks: {
      UserPromptSubmit: [
        {
          hooks: [
            {
              type: 'command',
              command: `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{if(/password/.test(JSON.parse(s).prompt)){console.error("no passwords in prompts");process.exit(2)}})'`,
            },
          ],
        },
      ],
      Stop: [
        {
          hooks: [
            {
              type: 'command',
              command: `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{if(!JSON.parse(s).stop_hook_active){console.log(JSON.stringify({decision:"block",reason:"run the tests first"}))}})'`,
            },
          ],
        },
      ],
    },
  };
  h.model.setScript(() => ({ content: 'finished' }));
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'hello', run: true, hooks });
  let final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.equal(final.status, 'finished');
  const requests = h.model.requests.slice(-2);
  assert.ok(
    requests[1]?.body.messages.some((m) => String(m.content).includes('run the tests first')),
    'the Stop reason reached the model, which went on',
  );

  const before = h.model.requests.length;
  await conversation.sendMessage('my password is hunter2');
  final = await conversation.run().then(() => conversation.state());
  const seen = h.model.requests.slice(before).flatMap((r) => r.body.messages.map((m) => String(m.content)));
  assert.ok(!seen.some((t) => t.includes('hunter2')), 'the refused message never reached the model');
  const events = await conversation.events();
  assert.ok(events.some((e) => e.kind === 'refused' && /no passwords in prompts/.test(e.reason)));
});

test('a PreToolUse hook that asks: the call waits for an approval, then runs', async () => {
  const workspace = await h.workspace();
  const asker = `node -e 'process.stdin.resume();process.stdin.on("end",()=>console.log(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"ask",permissionDecisionReason:"a person checks this"}})))'`;
  const hooks: HooksConfig = { hooks: { PreToolUse: [{ matcher: 'terminal', hooks: [{ type: 'command', command: asker }] }] } };
  h.model.setScript((r): ScriptedReply =>
    toolResults(r).length < 1
      ? { toolCalls: [{ name: 'terminal', arguments: { command: 'echo asked > asked.txt' } }] }
      : { content: 'done' },
  );
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'go', run: true, hooks });
  const waiting = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  assert.equal(waiting.status, 'waiting_for_confirmation', waiting.lastError ?? '');
  await conversation.approve();
  const final = await conversation.waitUntil((s) => s.status !== 'running' && s.status !== 'waiting_for_confirmation', 200, 60_000);
  assert.equal(final.status, 'finished', final.lastError ?? '');
  assert.equal(await readFile(path.join(workspace, 'asked.txt'), 'utf8'), 'asked\n');
});

test('a skill is listed in the system prompt (name, description, path), its body never', async () => {
  const workspace = await h.workspace();
  await mkdir(path.join(workspace, '.agents', 'skills', 'release-notes'), { recursive: true });
  await writeFile(
    path.join(workspace, '.agents', 'skills', 'release-notes', 'SKILL.md'),
    '---\nname: release-notes\ndescription: Write release notes from the git log\n---\nSECRET-BODY-INSTRUCTIONS: use the changelog template.\n',
  );
  await mkdir(path.join(workspace, '.agents', 'skills', 'broken'), { recursive: true });
  await writeFile(path.join(workspace, '.agents', 'skills', 'broken', 'SKILL.md'), 'no front matter here\n');
  h.model.setScript(() => ({ content: 'ok' }));
  const before = h.model.requests.length;
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'hi', run: true });
  await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
  const system = String(h.model.requests[before]?.body.messages[0]?.content);
  assert.match(system, /release-notes: Write release notes from the git log \(\.agents\/skills\/release-notes\/SKILL\.md\)/);
  assert.ok(!system.includes('SECRET-BODY'), 'the body is not inlined');
  const skills = (await conversation.events()).find((e) => e.kind === 'skills');
  assert.ok(skills?.kind === 'skills');
  assert.deepEqual(
    skills.skills.map((s) => s.name),
    ['release-notes'],
  );
  assert.ok(
    skills.warnings.some((w) => /broken/.test(w)),
    skills.warnings.join('\n'),
  );
});
