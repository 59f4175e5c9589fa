// The model call's side of images: the prompt holds references, and the bytes are read from the
// object store (checked against their hash) just before the request is built. A small cache keeps a
// screenshot from being read again on every step of a conversation.
import type { ChatMessage, ImageRef, PromptImage } from '../core/types.js';

/** Reads an image's bytes (from the object store). */
export type ImageReader = (ref: ImageRef) => Promise<Uint8Array>;

/** Bytes kept in memory across calls, at most (base64 of recently used images). */
const CACHE_BYTES = 64 * 1024 * 1024;

/** Recently read images as base64, by hash (Map order: least recently used first). */
export class ImageCache {
  private readonly items = new Map<string, string>();
  private bytes = 0;
  constructor(private readonly cap = CACHE_BYTES) {}

  get(sha256: string): string | undefined {
    const hit = this.items.get(sha256);
    if (hit !== undefined) {
      this.items.delete(sha256);
      this.items.set(sha256, hit);
    }
    return hit;
  }

  set(sha256: string, base64: string): void {
    if (this.items.has(sha256) || base64.length > this.cap) return;
    this.items.set(sha256, base64);
    this.bytes += base64.length;
    for (const [key, value] of this.items) {
      if (this.bytes <= this.cap) break;
      this.items.delete(key);
      this.bytes -= value.length;
    }
  }
}

/**
 * The messages with each image's bytes (base64) filled in. An image the store cannot give is left
 * without `data` (its converter says so to the model in words) and `onMissing` is told why: one
 * lost object must not make every later call of the conversation fail.
 */
export async function withImageData(
  messages: readonly ChatMessage[],
  read: ImageReader,
  cache: ImageCache,
  onMissing: (ref: ImageRef, err: unknown) => void = () => {},
): Promise<ChatMessage[]> {
  const load = async (img: PromptImage): Promise<PromptImage> => {
    const { data: _ignored, ...ref } = img;
    let data = cache.get(ref.sha256);
    if (data === undefined) {
      try {
        data = Buffer.from(await read(ref)).toString('base64');
        cache.set(ref.sha256, data);
      } catch (err) {
        onMissing(ref, err);
        return ref;
      }
    }
    return { ...ref, data };
  };
  return Promise.all(
    messages.map(async (m) =>
      (m.role === 'user' || m.role === 'tool') && m.images?.length ? { ...m, images: await Promise.all(m.images.map(load)) } : m,
    ),
  );
}

/** A data URL of an image whose bytes were read (chat completions and the Responses API take images so). */
export function dataUrl(img: PromptImage & { data: string }): string {
  return `data:${img.mimeType};base64,${img.data}`;
}

/** What the model reads in place of an image the store could not give. */
export function missingImageText(img: ImageRef): string {
  return `[image ${img.name ?? img.sha256.slice(0, 12)} (${img.mimeType}) could not be read from the object store]`;
}
