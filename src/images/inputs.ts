// Images as the SDK and the CLI take them (a file path, or bytes with a MIME type), checked and put
// in the object store before the message goes to the workflow, which gets their references only.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { InvalidRequestError } from '../core/errors.js';
import { MAX_IMAGE_BYTES, MAX_IMAGES_PER_MESSAGE } from './workflow/image-refs.js';
import type { ImageRef } from '../core/types.js';
import { ImageRefused, putImage } from './store.js';
import type { StoreSettings } from '../settings/store.js';

/**
 * An image to send with a message: a file's path (PNG, JPEG, GIF or WebP; the format is read from
 * its bytes), `{ path }`, or its bytes with their MIME type (`{ data, mimeType, name? }`).
 * At most 5 MB each, at most 10 per message.
 */
export type ImageInput = string | { path: string } | { data: Uint8Array; mimeType: string; name?: string };

const Input = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1) }),
  z.object({ data: z.instanceof(Uint8Array), mimeType: z.string().min(1), name: z.string().optional() }),
]);

async function bytesOf(input: z.infer<typeof Input>): Promise<{ bytes: Uint8Array; name?: string; mimeType?: string }> {
  if (typeof input !== 'string' && 'data' in input)
    return { bytes: input.data, mimeType: input.mimeType, ...(input.name ? { name: input.name } : {}) };
  const file = typeof input === 'string' ? input : input.path;
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new ImageRefused(`${file}: no such file`);
  // Checked before reading: a huge file is refused without loading it.
  if (info.size > MAX_IMAGE_BYTES)
    throw new ImageRefused(`${file} is ${info.size} bytes; an image may have at most ${MAX_IMAGE_BYTES} bytes (5 MB)`);
  return { bytes: new Uint8Array(await readFile(file)), name: path.basename(file) };
}

/**
 * Checks the images of one message and stores them; their references, in order. InvalidRequestError
 * ("message not sent: …") for a missing file, a format not taken, an image over 5 MB or more than 10.
 */
export async function storeImages(settings: StoreSettings, inputs: readonly unknown[] | undefined): Promise<ImageRef[]> {
  if (!inputs?.length) return [];
  try {
    if (inputs.length > MAX_IMAGES_PER_MESSAGE)
      throw new ImageRefused(`a message carries at most ${MAX_IMAGES_PER_MESSAGE} images (it has ${inputs.length})`);
    const refs: ImageRef[] = [];
    for (const [i, raw] of inputs.entries()) {
      const parsed = Input.safeParse(raw);
      if (!parsed.success) throw new ImageRefused(`image ${i + 1}: give a file path, { path } or { data: Uint8Array, mimeType }`);
      const { bytes, name, mimeType } = await bytesOf(parsed.data);
      refs.push(await putImage(settings, bytes, { name: name ?? `image ${i + 1}`, ...(mimeType !== undefined ? { mimeType } : {}) }));
    }
    return refs;
  } catch (err) {
    if (err instanceof ImageRefused) throw new InvalidRequestError(`message not sent: ${err.message}`);
    throw err;
  }
}
