// Structured answers on each wire API (scripted servers, a real dev server and worker): an answer
// that does not match the output schema goes back with what is wrong and is asked again; the one
// that matches is `output` in `status --json`, in run()'s result and printed by `start --wait`;
// Anthropic's answer comes through its forced tool; finish asks for the answer; three misses in a
// row end the run in `error`, and a new message starts the count again.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { OUTPUT_TOOL } from '../../src/llm/structured-output.js';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../src/testing/scripted-anthropic.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startScriptedResponses, type ScriptedResponses } from '../../src/testing/scripted-responses.js';
import type { ConversationEvent, MessageEvent } from '../../src/types.js';
import { startHarness, type Harness } from '../support/harness.js';

const schema = {
  type: 'object',
  properties: { files: { type: 'integer', minimum: 0 }, ok: { type: 'boolean' } },
  required: ['files', 'ok'],
  additionalProperties: false,
};

/** The output checks the model was told of so far (the user turns the workflow wrote). */
const checksSeen = (r: RecordedRequest) =>
  r.body.messages.filter((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('[output schema]')).length;
const toolResults = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === 'tool').length;

let h: Harness;
let anthropic: ScriptedAnthropic;
let responses: ScriptedResponses;
before(async () => {
  anthropic = await startScriptedAnthropic(() => ({ content: 'unused' }));
  responses = await startScriptedResponses(() => ({ content: 'unused' }));
  h = await startHarness({ name: 'structured-output', script: () => ({ content: 'unused' }) });
  await h.startWorker({ ANTHROPIC_BASE_URL: anthropic.baseUrl });
});
after(async () => {
  await h?.close();
  await Promise.all([anthropic?.close(), responses?.close()]);
});

const outputChecks = (events: ConversationEvent[]) =>
  events.filter((e): e is MessageEvent => e.kind === 'message' && e.outputCheck !== undefined);

test('chat completions, from the CLI: prose, then a wrong shape, each sent back with the errors; the match is printed by --wait and is status --json output', async () => {
  h.model.setScript((r): ScriptedReply => {
    if (toolResults(r) === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: 'ls | wc -l' } }] };
    const checks = checksSeen(r);
    if (checks === 0) return { content: 'There are 2 files.' };
    if (checks === 1) return { content: '{"files": 2}' };
    return { content: '{"files": 2, "ok": true}' };
  });
  const from = h.model.requests.length;
  const workspace = await h.workspace();
  const schemaFile = path.join(workspace, '..', `schema-${path.basename(workspace)}.json`);
  await writeFile(schemaFile, JSON.stringify(schema));
  const started = await h.cli(['start', 'How many files are here?', '--workspace', workspace, '--output-schema', schemaFile, '--wait']);
  const [id, answer] = started.stdout.trim().split('\n');
  assert.deepEqual(JSON.parse(answer!), { files: 2, ok: true }, started.stdout);
  assert.match(started.stderr, /finished with output matching its schema/);

  const status = JSON.parse((await h.cli(['status', id!, '--json'])).stdout) as { status: string; output: unknown };
  assert.equal(status.status, 'finished');
  assert.deepEqual(status.output, { files: 2, ok: true });
  const conversation = await Conversation.attach(h.client, id!);
  const checks = outputChecks(await conversation.events());
  assert.deepEqual(
    checks.map((c) => c.outputCheck!.try),
    [1, 2],
  );
  assert.match(checks[0]!.outputCheck!.errors[0]!, /not JSON/);
  assert.match(checks[1]!.outputCheck!.errors.join('\n'), /required property 'ok'/);
  const requests = h.model.requests.slice(from);
  assert.equal(requests.length, 4);
  for (const r of requests) {
    const format = r.body.response_format as { type: string; json_schema: { name: string; strict: boolean; schema: unknown } };
    assert.equal(format.type, 'json_schema');
    assert.equal(format.json_schema.name, OUTPUT_TOOL);
    assert.equal(format.json_schema.strict, true);
    assert.deepEqual(format.json_schema.schema, schema);
  }
  assert.match(String(requests[0]!.body.messages[0]!.content), /# Final answer/);

  const bad = await h.cli(['start', 'x', '--workspace', workspace, '--output-schema', path.join(workspace, 'none.json')], {
    reject: false,
  });
  assert.notEqual(bad.exitCode, 0);
  assert.match(bad.stderr, /--output-schema: cannot read/);
  await writeFile(schemaFile, '{"type": "nope"}');
  const invalid = await h.cli(['start', 'x', '--workspace', workspace, '--output-schema', schemaFile], { reject: false });
  assert.match(invalid.stderr, /not a valid JSON Schema/);
});

test('Responses API, from the SDK with a zod schema: finish asks for the answer; run() resolves with it', async () => {
  responses.setScript((r): ScriptedReply => {
    if (checksSeen(r) === 0) return { toolCalls: [{ name: 'finish', arguments: { message: 'Counted them all.' } }] };
    return { content: '{"title": "files", "count": 3}' };
  });
  const from = responses.requests.length;
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({
      llm: new LLM({ model: 'gpt-5.5', baseUrl: responses.baseUrl, wireApi: 'responses' }),
      tools: ['terminal', 'finish'],
    }),
    workspace: await h.workspace(),
    firstMessage: 'Count the files.',
    outputSchema: z.object({ title: z.string(), count: z.number().int() }),
  });
  const result = await conversation.run();
  assert.equal(result.status, 'finished', result.reason ?? '');
  assert.deepEqual(result.output, { title: 'files', count: 3 });
  const checks = outputChecks(await conversation.events());
  assert.equal(checks.length, 1);
  assert.deepEqual(checks[0]!.outputCheck!.errors, [], 'finish gave prose: the answer is asked for, nothing was wrong yet');
  const sent = responses.requests.slice(from);
  assert.equal(sent.length, 2);
  for (const r of sent) {
    const text = (r.raw as { text?: { format?: { type: string; strict: boolean } } }).text;
    assert.equal(text?.format?.type, 'json_schema');
    assert.equal(text?.format?.strict, true, "zod's object schema is closed, with every property required");
  }
});

test('Anthropic: a prose answer is followed by the forced answer tool (thinking off for it); its input is the output', async () => {
  anthropic.setScript((r): ScriptedReply => {
    if (checksSeen(r) === 0) return { content: 'Two files, all fine.' };
    return { toolCalls: [{ name: OUTPUT_TOOL, arguments: { files: 2, ok: true } }] };
  });
  const from = anthropic.requests.length;
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'anthropic/claude-sonnet-4-6', reasoningEffort: 'low' }), tools: ['terminal'] }),
    workspace: await h.workspace(),
    firstMessage: 'How many files?',
    outputSchema: schema,
  });
  const result = await conversation.run();
  assert.equal(result.status, 'finished', result.reason ?? '');
  assert.deepEqual(result.output, { files: 2, ok: true });
  const sent = anthropic.requests.slice(from);
  assert.equal(sent.length, 2);
  const [first, forced] = sent.map((r) => r.raw as { tools: { name: string }[]; tool_choice?: unknown; thinking?: unknown });
  assert.equal(first!.tools.at(-1)!.name, OUTPUT_TOOL, 'the answer tool is offered from the first call');
  assert.equal(first!.tool_choice, undefined);
  assert.ok(first!.thinking);
  assert.deepEqual(forced!.tool_choice, { type: 'tool', name: OUTPUT_TOOL });
  assert.equal(forced!.thinking, undefined);
  assert.ok(sent.every((r) => r.status === 200));
  const state = await conversation.state();
  assert.deepEqual(state.output, { files: 2, ok: true });
});

test('three answers in a row that do not match end the run in error, saying why; a new message starts the count again', async () => {
  let good = false;
  h.model.setScript((): ScriptedReply => ({ content: good ? '{"files": 1, "ok": false}' : '{"files": "many"}' }));
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({}), tools: ['terminal'] }),
    workspace: await h.workspace(),
    firstMessage: 'How many files?',
    outputSchema: schema,
  });
  const failed = await conversation.run();
  assert.equal(failed.status, 'error');
  assert.match(failed.reason ?? '', /did not match the output schema after 3 tries: .*\/files must be integer/);
  assert.equal(failed.output, undefined);
  assert.equal(outputChecks(await conversation.events()).length, 3);
  good = true;
  await conversation.sendMessage('Try once more.');
  const again = await conversation.run();
  assert.equal(again.status, 'finished', again.reason ?? '');
  assert.deepEqual(again.output, { files: 1, ok: false });
});
