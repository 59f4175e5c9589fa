// Images in conversations, through each wire API (scripted servers, a real dev server and worker):
// an image sent with a message (CLI `--image` for chat completions, the SDK for the Responses API
// and Anthropic) and one from `file_editor view` reach the model in that API's own form, with the
// exact bytes; the conversation's history holds their references (hash, type, size), never the bytes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { sha256Of } from '../../src/images/store.js';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../../src/testing/scripted-anthropic.js';
import { startScriptedResponses, type ScriptedResponses } from '../../src/testing/scripted-responses.js';
import type { RecordedRequest, Script } from '../../src/testing/scripted-model.js';
import type { ConversationEvent, MessageEvent, ObservationEvent } from '../../src/types.js';
import { chromium } from 'playwright-core';
import { startConsole } from '../../src/console-server/server.js';
import { historyText, startHarness, waitFor, type Harness } from '../support/harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Looks at the picture given, then at pic.png with file_editor view, then answers. */
const script: Script = (r) =>
  r.body.messages.some((m) => m.role === 'tool')
    ? { content: 'I have seen both images.' }
    : { toolCalls: [{ name: 'file_editor', arguments: { command: 'view', path: 'pic.png' } }] };

let h: Harness;
/** The chat completions conversation, for the console's test. */
let chat: { id: string; images: Buffer[] } | undefined;
let responses: ScriptedResponses;
let anthropic: ScriptedAnthropic;
before(async () => {
  responses = await startScriptedResponses(script);
  anthropic = await startScriptedAnthropic(script);
  h = await startHarness({ name: 'images', script });
  // The SDK (this process) reads the object store's place from its environment, as a user's program does.
  process.env.FAHEEM_HOME = h.home;
  await h.startWorker({ FAHEEM_ALLOWED_BASE_URLS: `${responses.baseUrl},${anthropic.baseUrl}` });
});
after(async () => {
  await h?.close();
  await responses?.close();
  await anthropic?.close();
});

/** A 1×1 PNG with random bytes after its end (decoders ignore them): its base64 is found nowhere else. */
const ONE_PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
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
