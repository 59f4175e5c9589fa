import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { ModelClients } from '../../../src/models/client.js';
import {
  checkOutput,
  checkOutputSchema,
  OUTPUT_TOOL,
  strictCompatible,
  toOutputSchema,
  wireSchema,
} from '../../../src/models/structured-output.js';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../../src/testing/scripted-anthropic.js';
import { startScriptedModel, type ScriptedModel } from '../../../src/testing/scripted-model.js';
import { startScriptedResponses, type ScriptedResponses } from '../../../src/testing/scripted-responses.js';
import type { ChatMessage, ToolSpec } from '../../../src/core/types.js';
import { modelSettings } from '../../../src/settings/models.js';

const verdict = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { files: { type: 'integer', minimum: 0 }, ok: { type: 'boolean' } },
  required: ['files', 'ok'],
  additionalProperties: false,
};

describe('checkOutput', () => {
  test('a matching answer is its parsed value; a fenced one too', () => {
    assert.deepEqual(checkOutput(verdict, '{"files": 3, "ok": true}'), { ok: true, value: { files: 3, ok: true } });
    assert.deepEqual(checkOutput(verdict, '```json\n{"files": 0, "ok": false}\n```'), { ok: true, value: { files: 0, ok: false } });
  });

  test('prose, an empty answer and a wrong shape each say what is wrong', () => {
    const prose = checkOutput(verdict, 'There are three files.');
    assert.equal(prose.ok, false);
    assert.match(!prose.ok ? prose.errors[0]! : '', /not JSON/);
    assert.match(JSON.stringify(checkOutput(verdict, null)), /empty/);
    const wrong = checkOutput(verdict, '{"files": -1, "extra": 1}');
    assert.equal(wrong.ok, false);
    const errors = !wrong.ok ? wrong.errors.join('\n') : '';
    assert.match(errors, /required property 'ok'/);
    assert.match(errors, /\/files must be >= 0/);
    assert.match(errors, /additional properties \(extra\)/);
  });

  test('draft-07 schemas and non-object answers are checked too', () => {
    const list = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: { type: 'string' } };
    assert.deepEqual(checkOutput(list, '["a","b"]'), { ok: true, value: ['a', 'b'] });
    assert.equal(checkOutput(list, '[1]').ok, false);
  });
});

describe('checkOutputSchema and toOutputSchema', () => {
  test('refuses what is not a JSON Schema object, with the reason', () => {
    assert.throws(() => checkOutputSchema('{"type":"object"}'), /not a JSON object/);
    assert.throws(() => checkOutputSchema([]), /not a JSON object/);
    assert.throws(() => checkOutputSchema({ type: 'no-such-type' }), /not a valid JSON Schema/);
    assert.throws(() => checkOutputSchema({ type: 'object', description: 'x'.repeat(70_000) }), /over 64 KiB/);
  });

  test('a zod schema becomes its JSON Schema', () => {
    const schema = toOutputSchema(z.object({ title: z.string(), tags: z.array(z.string()) }));
    assert.equal(schema.type, 'object');
    assert.deepEqual(checkOutput(schema, '{"title":"t","tags":[]}'), { ok: true, value: { title: 't', tags: [] } });
    assert.equal(checkOutput(schema, '{"title":1,"tags":[]}').ok, false);
  });

  test('strict mode only for closed objects with every property required', () => {
    assert.equal(strictCompatible(verdict), true);
    assert.equal(strictCompatible({ type: 'object', properties: { a: { type: 'string' } } }), false);
    assert.equal(strictCompatible({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }), false);
    assert.equal(
      strictCompatible({
        type: 'object',
        properties: { inner: { type: 'object', properties: { b: {} }, required: ['b'] } },
        required: ['inner'],
        additionalProperties: false,
      }),
      false,
      'a nested open object',
    );
    assert.equal(wireSchema(verdict).$schema, undefined);
  });
});

describe('ModelClients.complete with an output schema', () => {
  const tools: ToolSpec[] = [
    {
      name: 'terminal',
      description: 'Run a command.',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
      runsIn: 'host',
      needsApproval: false,
    },
  ];
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You count files.' },
    { role: 'user', content: 'How many files?' },
  ];
  let chat: ScriptedModel;
  let responses: ScriptedResponses;
  let anthropic: ScriptedAnthropic;
  before(async () => {
    chat = await startScriptedModel(() => ({ content: '{"files": 2, "ok": true}' }));
    responses = await startScriptedResponses(() => ({ content: '{"files": 2, "ok": true}' }));
    anthropic = await startScriptedAnthropic(() => ({
      content: 'Here it is.',
      toolCalls: [{ name: OUTPUT_TOOL, arguments: { files: 2, ok: true } }],
    }));
  });
  after(async () => {
    await Promise.all([chat.close(), responses.close(), anthropic.close()]);
  });
  const output = { schema: verdict, force: false };

  test('chat completions: response_format json_schema, strict when the schema allows it', async () => {
    const models = new ModelClients(modelSettings({ LLM_BASE_URL: chat.baseUrl, LLM_WIRE_API: 'chat' }), () => undefined);
    const reply = await models.complete(
      { llm: { usageId: 'u', model: 'local-model' }, messages, tools, conversationId: 'c', output },
      new AbortController().signal,
    );
    assert.equal(reply.content, '{"files": 2, "ok": true}');
    const format = chat.requests[0]!.body.response_format as {
      type: string;
      json_schema: { name: string; schema: unknown; strict: boolean };
    };
    assert.equal(format.type, 'json_schema');
    assert.equal(format.json_schema.name, OUTPUT_TOOL);
    assert.equal(format.json_schema.strict, true);
    assert.deepEqual(format.json_schema.schema, wireSchema(verdict));
    assert.ok(chat.requests[0]!.body.tools?.length, 'the tools are still offered');
  });

  test('Responses API: text.format json_schema', async () => {
    const models = new ModelClients(modelSettings({ LLM_BASE_URL: responses.baseUrl, LLM_WIRE_API: 'responses' }), () => undefined);
    await models.complete(
      { llm: { usageId: 'u', model: 'gpt-5' }, messages, tools, conversationId: 'c', output },
      new AbortController().signal,
    );
    const raw = responses.requests[0]!.raw as { text?: { format?: { type: string; name: string; strict: boolean; schema: unknown } } };
    assert.equal(raw.text?.format?.type, 'json_schema');
    assert.equal(raw.text?.format?.name, OUTPUT_TOOL);
    assert.equal(raw.text?.format?.strict, true);
    assert.deepEqual(raw.text?.format?.schema, wireSchema(verdict));
  });

  test('Anthropic: the answer tool offered last, forced without thinking when due; its input is the answer', async () => {
    const models = new ModelClients(
      modelSettings({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: anthropic.baseUrl, LLM_REASONING_EFFORT: 'low' }),
      () => undefined,
    );
    const llm = { usageId: 'u', model: 'anthropic/claude-sonnet-4-6' };
    const offered = await models.complete({ llm, messages, tools, conversationId: 'c', output }, new AbortController().signal);
    assert.deepEqual(JSON.parse(offered.content!), { files: 2, ok: true });
    assert.deepEqual(offered.toolCalls, [], 'the answer tool is not a tool call to run');
    const first = anthropic.requests[0]!.raw as { tools: { name: string }[]; tool_choice?: unknown; thinking?: unknown };
    assert.deepEqual(
      first.tools.map((t) => t.name),
      ['terminal', OUTPUT_TOOL],
    );
    assert.equal(first.tool_choice, undefined);
    assert.ok(first.thinking, 'thinking stays on while the answer is not forced');
    await models.complete({ llm, messages, tools, conversationId: 'c', output: { ...output, force: true } }, new AbortController().signal);
    const forced = anthropic.requests[1]!.raw as { tool_choice?: unknown; thinking?: unknown };
    assert.deepEqual(forced.tool_choice, { type: 'tool', name: OUTPUT_TOOL });
    assert.equal(forced.thinking, undefined);
    assert.equal(anthropic.requests[1]!.status, 200);
  });

  test('Anthropic: a schema that is not an object goes in { answer } and comes out unwrapped', async () => {
    anthropic.setScript(() => ({ toolCalls: [{ name: OUTPUT_TOOL, arguments: { answer: ['a', 'b'] } }] }));
    const models = new ModelClients(modelSettings({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: anthropic.baseUrl }), () => undefined);
    const list = { type: 'array', items: { type: 'string' } };
    const reply = await models.complete(
      {
        llm: { usageId: 'u', model: 'anthropic/claude-sonnet-4-6' },
        messages,
        tools,
        conversationId: 'c',
        output: { schema: list, force: true },
      },
      new AbortController().signal,
    );
    assert.deepEqual(JSON.parse(reply.content!), ['a', 'b']);
    const sent = anthropic.requests.at(-1)!.raw as { tools: { name: string; input_schema: unknown }[] };
    assert.deepEqual(sent.tools.at(-1)!.input_schema, { type: 'object', properties: { answer: list }, required: ['answer'] });
  });
});
