// The console's image route: `GET /api/conversations/ID/images/SHA256` answers the bytes of an image
// that conversation refers to (a message's or a tool result's), with the MIME type its reference
// names: one of four image types, never HTML. Any other hash is a 404, even one another
// conversation holds.
import type http from 'node:http';
import { ObjectStoreError } from '../storage/object-store.js';
import type { ConversationEvent, ImageRef } from '../core/types.js';
import { isImageMimeType } from '../images/workflow/image-refs.js';
import { attach } from './conversations.js';
import type { HandlerContext } from './handlers.js';
import { HttpError } from './requests.js';

/** The reference to `sha256` among the events' images, if any. */
export function referencedImage(events: readonly ConversationEvent[], sha256: string): ImageRef | undefined {
  for (const e of events) {
    if (e.kind !== 'message' && e.kind !== 'observation') continue;
    const found = e.images?.find((i) => i.sha256 === sha256);
    if (found) return found;
  }
  return undefined;
}

/** Answers one image of a conversation. */
export async function serveImage(ctx: HandlerContext, res: http.ServerResponse, id: string, sha256: string): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new HttpError(404, 'not found');
  const conversation = await attach(ctx.client, id);
  const ref = referencedImage(await conversation.events(), sha256);
  if (!ref || !isImageMimeType(ref.mimeType)) throw new HttpError(404, 'no such image in this conversation');
  let bytes: Uint8Array;
  try {
    bytes = await ctx.readImage(ref);
  } catch (err) {
    if (err instanceof ObjectStoreError && err.reason === 'not_found') throw new HttpError(404, 'the image is not in the object store');
    throw err;
  }
  res.writeHead(200, { 'Content-Type': ref.mimeType, 'Content-Length': bytes.length, 'Content-Disposition': 'inline' });
  res.end(bytes);
}
