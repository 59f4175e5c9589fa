// What the worker sends to model endpoints, on one real dev server and one real worker process, with
// scripted model servers for each wire API: structured answers (an output schema) on each API;
// images on each API; a conversation's own base URL gets the worker's key only when allowed. The
// sections share the worker: its settings name every section's endpoints (the Anthropic server of
// the structured answers as ANTHROPIC_BASE_URL; the images' Responses and Anthropic servers and
// `allowed` on FAHEEM_ALLOWED_BASE_URLS), and no section uses an endpoint of another.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { z } from 'zod';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import { startConsole } from '../../src/console-server/server.js';
import { sha256Of } from '../../src/images/store.js';
import { OUTPUT_TOOL } from '../../src/models/structured-output.js';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../src/testing/scripted-anthropic.js';
import {
  startScriptedModel,
  type RecordedRequest,
  type Script,
  type ScriptedModel,
  type ScriptedReply,
} from '../../src/testing/scripted-model.js';
import { startScriptedResponses, type ScriptedResponses } from '../../src/testing/scripted-responses.js';
import type { ConversationEvent, MessageEvent, ObservationEvent } from '../../src/core/types.js';
import { FAKE_KEY, historyText, startHarness, waitFor, type Harness } from '../support/harness.js';

let h: Harness;
let servers: {
  structured: { anthropic: ScriptedAnthropic; responses: ScriptedResponses };
  images: { responses: ScriptedResponses; anthropic: ScriptedAnthropic };
  keys: { foreign: ScriptedModel; allowed: ScriptedModel; keyed: ScriptedModel };
};
before(async () => {
  const unused = () => ({ content: 'unused' });
  const done = () => ({ content: 'done' });
  const started = await Promise.all([
    startHarness({ name: 'model-requests', script: unused }),
    startScriptedAnthropic(unused),
    startScriptedResponses(unused),
    startScriptedResponses(unused),
    startScriptedAnthropic(unused),
    startScriptedModel(done),
    startScriptedModel(done),
    // An endpoint that needs a key, as a hosted one does.
    startScriptedModel((req) =>
      req.authorization === `Bearer ${FAKE_KEY}` ? { content: 'done' } : { status: 401, error: 'Incorrect API key provided' },
    ),
  ]);
  h = started[0];
  servers = {
    structured: { anthropic: started[1], responses: started[2] },
    images: { responses: started[3], anthropic: started[4] },
    keys: { foreign: started[5], allowed: started[6], keyed: started[7] },
  };
  const { images, keys } = servers;
  await h.startWorker({
    ANTHROPIC_BASE_URL: servers.structured.anthropic.baseUrl,
    FAHEEM_ALLOWED_BASE_URLS: `${images.responses.baseUrl},${images.anthropic.baseUrl},${keys.allowed.baseUrl}/`,
  });
});
after(async () => {
  await h?.close();
  if (servers) await Promise.all(Object.values(servers).flatMap((group) => Object.values(group).map((s) => s.close())));
});

// Structured answers on each wire API (scripted servers, a real dev server and worker): an answer
// that does not match the output schema goes back with what is wrong and is asked again; the one
// that matches is `output` in `status --json`, in run()'s result and printed by `start --wait`;
// Anthropic's answer comes through its forced tool; finish asks for the answer; three misses in a
// row end the run in `error`, and a new message starts the count again.
describe('structured answers', () => {
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

  let anthropic: ScriptedAnthropic;
  let responses: ScriptedResponses;
  before(() => {
    // The worker's ANTHROPIC_BASE_URL is this Anthropic server; the Responses one is given by the conversation.
    ({ anthropic, responses } = servers.structured);
    h.model.setScript(() => ({ content: 'unused' }));
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
});

// Images in conversations, through each wire API (scripted servers, a real dev server and worker):
// an image sent with a message (CLI `--image` for chat completions, the SDK for the Responses API
// and Anthropic) and one from `file_editor view` reach the model in that API's own form, with the
// exact bytes; the conversation's history holds their references (hash, type, size), never the bytes.
describe('images', () => {
  const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

  /** Looks at the picture given, then at pic.png with file_editor view, then answers. */
  const script: Script = (r) =>
    r.body.messages.some((m) => m.role === 'tool')
      ? { content: 'I have seen both images.' }
      : { toolCalls: [{ name: 'file_editor', arguments: { command: 'view', path: 'pic.png' } }] };

  /** The chat completions conversation, for the console's test. */
  let chat: { id: string; images: Buffer[] } | undefined;
  let responses: ScriptedResponses;
  let anthropic: ScriptedAnthropic;
  before(() => {
    // The worker allows these two endpoints (FAHEEM_ALLOWED_BASE_URLS), given by the conversations.
    ({ responses, anthropic } = servers.images);
    for (const server of [h.model, responses, anthropic]) server.setScript(script);
    // The SDK (this process) reads the object store's place from its environment, as a user's program does.
    process.env.FAHEEM_HOME = h.home;
  });

  /** A 1×1 PNG with random bytes after its end (decoders ignore them): its base64 is found nowhere else. */
  const ONE_PIXEL = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  const png = () => Buffer.concat([ONE_PIXEL, randomBytes(3000)]);

  /** A workspace with pic.png (for file_editor view) and a picture to send from outside it. */
  async function setup(): Promise<{ workspace: string; sent: Buffer; viewed: Buffer; sentFile: string }> {
    const workspace = await h.workspace();
    const sent = png();
    const viewed = png();
    const sentFile = path.join(h.home, `sent-${sha256Of(sent).slice(0, 8)}.png`);
    await writeFile(sentFile, sent);
    await writeFile(path.join(workspace, 'pic.png'), viewed);
    return { workspace, sent, viewed, sentFile };
  }

  /** The conversation's history holds each image's hash and none of its bytes; its events carry the references. */
  async function assertReferencesOnly(id: string, images: Buffer[]): Promise<ConversationEvent[]> {
    const history = historyText(await h.client.workflow.getHandle(id).fetchHistory());
    for (const image of images) {
      assert.ok(history.includes(sha256Of(image)), 'the reference is in history');
      assert.ok(!history.includes(image.toString('base64')), 'the base64 of the image is not in history');
      assert.ok(!history.includes(image.toString('base64').slice(0, 400)), 'nor any long part of it');
    }
    const conversation = await Conversation.attach(h.client, id);
    return conversation.events();
  }

  const refOf = (image: Buffer, name: string) => ({ sha256: sha256Of(image), mimeType: 'image/png', size: image.length, name });

  test('chat completions: `faheem start --image` and `faheem send --image`, and file_editor view, as image_url data URLs', async () => {
    const { workspace, sent, viewed, sentFile } = await setup();
    const from = h.model.requests.length;
    const started = await h.cli(['start', 'What is in this picture?', '--image', sentFile, '--workspace', workspace, '--wait', '-q']);
    const id = started.stdout.trim();
    const second = png();
    const secondFile = path.join(h.home, 'second.png');
    await writeFile(secondFile, second);
    await h.cli(['send', id, 'And this one?', '--image', secondFile, '--run', '-q']);
    const conversation = await Conversation.attach(h.client, id);
    const final = await conversation.waitUntilStopped();
    assert.equal(final.status, 'finished', final.lastError ?? '');

    const requests = h.model.requests.slice(from).filter((r) => r.status === 200);
    const url = (image: Buffer) => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } });
    const users = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === 'user').map((m) => m.content as unknown);
    assert.deepEqual(users(requests[0]!), [[{ type: 'text', text: 'What is in this picture?' }, url(sent)]]);
    // After the tool's result: the viewed image in a user message (a tool message cannot carry one).
    const after = requests[1]!.body.messages;
    assert.deepEqual(
      after.slice(-3).map((m) => m.role),
      ['assistant', 'tool', 'user'],
    );
    assert.deepEqual((after.at(-1)!.content as unknown as unknown[])[1], url(viewed));
    assert.match(String(after.at(-2)!.content), new RegExp(`pic\\.png is an image \\(image/png, ${viewed.length} bytes\\)`));
    const last = requests.at(-1)!.body.messages;
    assert.deepEqual(last.at(-1)!.content, [{ type: 'text', text: 'And this one?' }, url(second)]);

    const events = await assertReferencesOnly(id, [sent, viewed, second]);
    const messages = events.filter((e): e is MessageEvent => e.kind === 'message' && e.source === 'user');
    assert.deepEqual(
      messages.map((m) => m.images),
      [[refOf(sent, path.basename(sentFile))], [refOf(second, 'second.png')]],
    );
    const observation = events.find((e): e is ObservationEvent => e.kind === 'observation');
    assert.deepEqual(observation?.images, [refOf(viewed, 'pic.png')]);

    chat = { id, images: [sent, viewed, second] };

    const refused = await h.cli(['send', id, 'not a picture', '--image', path.join(workspace, 'missing.png')], { reject: false });
    assert.notEqual(refused.exitCode, 0);
    assert.match(refused.stderr, /message not sent: .*missing\.png: no such file/);
  });

  test('Responses API: the SDK sends an image as input_image; file_editor view comes back inside function_call_output', async () => {
    const { workspace, sent, viewed } = await setup();
    const llm = new LLM({ model: 'openai/gpt-5.5', baseUrl: responses.baseUrl, wireApi: 'responses' });
    const conversation = await Conversation.create(h.client, { agent: new Agent({ llm, tools: ['file_editor'] }), workspace });
    await conversation.sendMessage({ text: 'What is in this picture?', images: [{ data: sent, mimeType: 'image/png', name: 'shot' }] });
    const result = await conversation.run();
    assert.equal(result.status, 'finished', result.reason ?? '');

    const mine = responses.requests.filter((r) => (r.raw as { prompt_cache_key?: string }).prompt_cache_key === conversation.id);
    type Item = { type?: string; role?: string; content?: unknown; output?: unknown };
    const input = (mine.at(-1)!.raw as { input: Item[] }).input;
    const dataUrl = (image: Buffer) => `data:image/png;base64,${image.toString('base64')}`;
    assert.deepEqual(input.find((i) => i.role === 'user')?.content, [
      { type: 'input_text', text: 'What is in this picture?' },
      { type: 'input_image', image_url: dataUrl(sent), detail: 'auto' },
    ]);
    const output = input.find((i) => i.type === 'function_call_output')?.output as { type: string; image_url?: string }[];
    assert.deepEqual(output[1], { type: 'input_image', image_url: dataUrl(viewed), detail: 'auto' });
    await assertReferencesOnly(conversation.id, [sent, viewed]);
  });

  test('Anthropic: image blocks with a base64 source, in the first message and inside the tool_result', async () => {
    const { workspace, sent, viewed, sentFile } = await setup();
    const llm = new LLM({ model: 'anthropic/claude-sonnet-4-6', baseUrl: anthropic.baseUrl });
    const conversation = await Conversation.create(h.client, {
      agent: new Agent({ llm, tools: ['file_editor'] }),
      workspace,
      firstMessage: 'What is in this picture?',
      images: [sentFile],
    });
    const result = await conversation.run();
    assert.equal(result.status, 'finished', result.reason ?? '');

    type Block = { type: string; source?: unknown; content?: unknown; cache_control?: unknown };
    const raw = anthropic.requests.at(-1)!.raw as { messages: { role: string; content: Block[] }[] };
    const image = (b: Buffer) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b.toString('base64') } });
    const strip = ({ cache_control: _, ...b }: Block) => b;
    assert.deepEqual(raw.messages[0]!.content.map(strip), [{ type: 'text', text: 'What is in this picture?' }, image(sent)]);
    const toolResult = raw.messages.flatMap((m) => m.content).find((b) => b.type === 'tool_result');
    assert.deepEqual((toolResult?.content as Block[])[1], image(viewed));
    await assertReferencesOnly(conversation.id, [sent, viewed]);
  });

  test('the console shows a conversation’s images as <img>, served by hash for that conversation only', async () => {
    assert.ok(chat, 'the chat completions test ran first');
    const { id, images } = chat;
    const other = await Conversation.create(h.client, { agent: new Agent({ llm: new LLM({}) }), workspace: await h.workspace() });
    const web = await startConsole({ client: h.client, port: 0, settings: h.env });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const get = (conversation: string, sha: string, headers: Record<string, string> = { 'X-Faheem-Token': web.token }) =>
        fetch(`${web.origin}/api/conversations/${conversation}/images/${sha}`, { headers });
      const served = await get(id, sha256Of(images[0]!));
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('content-type'), 'image/png');
      assert.deepEqual(Buffer.from(await served.arrayBuffer()), images[0]);
      assert.equal((await get(other.id, sha256Of(images[0]!))).status, 404, "another conversation's image is not served");
      assert.equal((await get(id, 'f'.repeat(64))).status, 404);
      assert.equal((await get(id, sha256Of(images[0]!), {})).status, 401, 'the token is needed, as for the other routes');

      const page = await browser.newPage();
      await page.goto(`${web.url}#/c/${encodeURIComponent(id)}`);
      const shown = page.locator('.transcript img.image');
      await waitFor('the three images are shown', async () => (await shown.count()) === 3);
      // Decoded by the browser (a 1×1 PNG each), with its name and type as the alt text.
      await waitFor('each image is decoded', async () =>
        (await shown.evaluateAll((imgs) => imgs.map((i) => (i as unknown as { naturalWidth: number }).naturalWidth))).every((w) => w === 1),
      );
      assert.match((await shown.first().getAttribute('alt')) ?? '', /^sent-[0-9a-f]{8}\.png \(image\/png, \d+ bytes\)$/);
      assert.equal(await page.locator('.tool img.image').count(), 1, 'the viewed image is shown with its tool call');
    } finally {
      await browser.close();
      await web.close();
      await other.close();
    }
  });
});

// A conversation's own `llm.baseUrl` gets the worker's key only when the worker allows that endpoint
// (LLM_BASE_URL, the provider's own, FAHEEM_ALLOWED_BASE_URLS). Real dev server and worker; the
// endpoints are scripted model servers that record the Authorization header they were sent.
describe("a conversation's own base URL", () => {
  let foreign: ScriptedModel;
  let allowed: ScriptedModel;
  let keyed: ScriptedModel;
  before(() => {
    // `allowed` is on the worker's FAHEEM_ALLOWED_BASE_URLS; `foreign` and `keyed` are on no list.
    ({ foreign, allowed, keyed } = servers.keys);
    h.model.setScript(() => ({ content: 'done' }));
  });

  async function run(baseUrl: string) {
    const conversation = await Conversation.create(h.client, {
      agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini', baseUrl }), tools: ['terminal'] }),
      workspace: await h.workspace(),
    });
    await conversation.sendMessage('Say done.');
    return conversation.run().then(() => conversation.state());
  }

  test("a conversation's own base URL gets no worker key; an allowed one and the worker's own do", async () => {
    const [mine, theirs, listed] = await Promise.all([run(h.model.baseUrl), run(foreign.baseUrl), run(allowed.baseUrl)]);
    for (const final of [mine, theirs, listed]) assert.equal(final.status, 'finished', final.lastError ?? '');

    assert.ok(foreign.requests.length > 0);
    for (const r of foreign.requests) {
      assert.ok(!(r.authorization ?? '').includes(FAKE_KEY), `the foreign endpoint was sent the key: ${r.authorization}`);
    }
    assert.ok(allowed.requests.length > 0);
    for (const r of allowed.requests) assert.equal(r.authorization, `Bearer ${FAKE_KEY}`, 'FAHEEM_ALLOWED_BASE_URLS');
    assert.ok(h.model.requests.length > 0);
    for (const r of h.model.requests) assert.equal(r.authorization, `Bearer ${FAKE_KEY}`, 'LLM_BASE_URL');
  });

  test('an endpoint that needs the key the worker held back: the error says so and how to allow it', async () => {
    const final = await run(keyed.baseUrl);
    assert.equal(final.status, 'error');
    assert.match(final.lastError ?? '', /HTTP 401/);
    assert.match(final.lastError ?? '', /did not send its API key/);
    assert.ok((final.lastError ?? '').includes(`FAHEEM_ALLOWED_BASE_URLS=${new URL(keyed.baseUrl).origin}`), final.lastError ?? '');
    assert.ok(!(final.lastError ?? '').includes(FAKE_KEY));
  });
});
