// Images in each wire API's own form: the prompt builder keeps references, and the converters put
// the bytes (read by the model call) where each API takes them, for a user message and a tool result.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anthropicPrompt } from '../../../src/models/anthropic-messages.js';
import { chatCompletionsMessages, TOOL_IMAGES_NOTE } from '../../../src/models/chat-messages.js';
import { responsesPrompt } from '../../../src/models/openai-responses.js';
import { ImageCache, withImageData } from '../../../src/images/prompt-images.js';
import { buildMessages } from '../../../src/conversation/workflow/prompt.js';
import type { ChatMessage, ConversationEvent, ImageRef } from '../../../src/core/types.js';

const at = '2026-12-06T00:00:00.000Z';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const B64 = PNG.toString('base64');
const ref: ImageRef = { sha256: 'a'.repeat(64), mimeType: 'image/png', size: PNG.length, name: 'shot.png' };
const shot: ImageRef = { sha256: 'b'.repeat(64), mimeType: 'image/png', size: PNG.length, name: 'view.png' };

const events: ConversationEvent[] = [
  { index: 0, timestamp: at, kind: 'message', source: 'user', text: 'what is in this picture?', images: [ref] },
  {
    index: 1,
    timestamp: at,
    kind: 'action',
    source: 'agent',
    tool: 'file_editor',
    toolCallId: 'c1',
    arguments: { command: 'view', path: 'a.png' },
    replyId: 'r1',
  },
  { index: 2, timestamp: at, kind: 'action', source: 'agent', tool: 'think', toolCallId: 'c2', arguments: { thought: 'x' }, replyId: 'r1' },
  {
    index: 3,
    timestamp: at,
    kind: 'observation',
    source: 'environment',
    tool: 'file_editor',
    toolCallId: 'c1',
    content: 'a.png is an image',
    isError: false,
    images: [shot],
  },
  { index: 4, timestamp: at, kind: 'observation', source: 'environment', tool: 'think', toolCallId: 'c2', content: 'ok', isError: false },
];

async function prompt(): Promise<ChatMessage[]> {
  const reads: string[] = [];
  const messages = await withImageData(buildMessages(events, 'sys'), async (r) => (reads.push(r.sha256), PNG), new ImageCache());
  assert.deepEqual(reads.sort(), [ref.sha256, shot.sha256]);
  return messages;
}

test('the prompt builder keeps references, and the model call fills in the bytes', async () => {
  const built = buildMessages(events, 'sys');
  assert.deepEqual(built[1], { role: 'user', content: 'what is in this picture?', images: [ref] });
  assert.ok(!JSON.stringify(built).includes(B64));
  const filled = await prompt();
  assert.deepEqual(filled[1], { role: 'user', content: 'what is in this picture?', images: [{ ...ref, data: B64 }] });
});

test('chat completions: image_url parts with data URLs; tool images follow all the results in a user message', async () => {
  const out = chatCompletionsMessages(await prompt());
  assert.deepEqual(out[1], {
    role: 'user',
    content: [
      { type: 'text', text: 'what is in this picture?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${B64}` } },
    ],
  });
  assert.deepEqual(
    out.slice(2).map((m) => m.role),
    ['assistant', 'tool', 'tool', 'user'],
  );
  assert.deepEqual(out[3], { role: 'tool', tool_call_id: 'c1', content: 'a.png is an image' });
  assert.deepEqual(out[5], {
    role: 'user',
    content: [
      { type: 'text', text: TOOL_IMAGES_NOTE },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${B64}` } },
    ],
  });
});

test('Responses API: input_image with a data URL, in the message and in the function_call_output', async () => {
  const { input } = responsesPrompt(await prompt(), []);
  assert.deepEqual(input[0], {
    role: 'user',
    content: [
      { type: 'input_text', text: 'what is in this picture?' },
      { type: 'input_image', image_url: `data:image/png;base64,${B64}`, detail: 'auto' },
    ],
  });
  const output = input.find((i) => 'type' in i && i.type === 'function_call_output' && i.call_id === 'c1');
  assert.deepEqual(output, {
    type: 'function_call_output',
    call_id: 'c1',
    output: [
      { type: 'input_text', text: 'a.png is an image' },
      { type: 'input_image', image_url: `data:image/png;base64,${B64}`, detail: 'auto' },
    ],
  });
});

test('Anthropic: image blocks with a base64 source, in the user turn and inside the tool_result', async () => {
  const { messages } = anthropicPrompt(await prompt(), [], { cache: false });
  assert.deepEqual(messages[0], {
    role: 'user',
    content: [
      { type: 'text', text: 'what is in this picture?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: B64 } },
    ],
  });
  const results = (messages[2]?.content as { type: string; tool_use_id?: string; content?: unknown }[]).filter(
    (b) => b.type === 'tool_result',
  );
  assert.deepEqual(results[0]?.content, [
    { type: 'text', text: 'a.png is an image' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: B64 } },
  ]);
  assert.equal(results[1]?.content, 'ok');
});

test('an image the store cannot give is said in words, and the call goes on', async () => {
  const missing: string[] = [];
  const messages = await withImageData(
    buildMessages(events.slice(0, 1), 'sys'),
    () => Promise.reject(new Error('gone')),
    new ImageCache(),
    (r) => missing.push(r.sha256),
  );
  assert.deepEqual(missing, [ref.sha256]);
  const out = chatCompletionsMessages(messages);
  assert.match(JSON.stringify(out[1]), /image shot\.png \(image\/png\) could not be read/);
});

test('the cache keeps recently used images under its cap', () => {
  const cache = new ImageCache(10);
  cache.set('a', '123456');
  cache.set('b', '1234');
  assert.equal(cache.get('a'), '123456');
  cache.set('c', '12345'); // over the cap: the least recently used (b) goes first, then a
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.get('c'), '12345');
});
