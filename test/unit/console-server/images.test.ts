// The console serves an image only when the conversation's own events refer to it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referencedImage } from '../../../src/console-server/images.js';
import type { ConversationEvent, ImageRef } from '../../../src/core/types.js';

test('an image is found among the references of messages and tool results, and nowhere else', () => {
  const at = '2026-12-06T00:00:00.000Z';
  const a: ImageRef = { sha256: 'a'.repeat(64), mimeType: 'image/png', size: 3 };
  const b: ImageRef = { sha256: 'b'.repeat(64), mimeType: 'image/webp', size: 4, name: 'b.webp' };
  const events: ConversationEvent[] = [
    { index: 0, timestamp: at, kind: 'message', source: 'user', text: 'see', images: [a] },
    {
      index: 1,
      timestamp: at,
      kind: 'observation',
      source: 'environment',
      tool: 'file_editor',
      toolCallId: 'c',
      content: 'x',
      isError: false,
      images: [b],
    },
    { index: 2, timestamp: at, kind: 'message', source: 'agent', text: 'c'.repeat(64) },
  ];
  assert.deepEqual(referencedImage(events, a.sha256), a);
  assert.deepEqual(referencedImage(events, b.sha256), b);
  assert.equal(referencedImage(events, 'c'.repeat(64)), undefined);
});
