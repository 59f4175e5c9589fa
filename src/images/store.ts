// Images in the object store, by content hash: the client (or the tool) writes the bytes before the
// reference reaches the workflow, the model call reads them back. So history holds references only
// and a long conversation with screenshots stays small. The store is FAHEEM_OBJECT_STORE (S3 or a
// shared folder) when set, else a folder under FAHEEM_HOME (one host, as payloads are). With an
// encryption key the bytes are encrypted at rest, bound to their key, as shipped checkpoints are.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { encryptionCodec } from '../security/codec.js';
import { FileObjectStore, objectStore, ObjectStoreError, type ObjectStore } from '../storage/object-store.js';
import { imageKey } from './workflow/image-refs.js';
import type { ImageRef } from '../core/types.js';
import { checkImage, ImageRefused } from './sniff.js';
import type { StoreSettings } from '../settings/store.js';

const local = new Map<string, ObjectStore>();

/** Where images go: FAHEEM_OBJECT_STORE, else `<FAHEEM_HOME>/objects`. */
export function imageStore(settings: StoreSettings): ObjectStore {
  const shared = objectStore(settings);
  if (shared) return shared;
  const root = path.join(settings.home, 'objects');
  let store = local.get(root);
  if (!store) local.set(root, (store = new FileObjectStore(root)));
  return store;
}

/** The SHA-256 of bytes, in hex. */
export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Checks an image (format sniffed, size capped: ImageRefused otherwise), puts its bytes in the store
 * under its hash (once: the same bytes again are not written again) and answers with its reference.
 */
export async function putImage(
  settings: StoreSettings,
  bytes: Uint8Array,
  options: { name?: string; mimeType?: string } = {},
): Promise<ImageRef> {
  const mimeType = checkImage(bytes, options.name ?? 'the image', options.mimeType);
  const sha256 = sha256Of(bytes);
  const key = imageKey(sha256);
  const store = imageStore(settings);
  if (!(await store.head(key))) {
    const { sealObject } = await import('../pool/shipping.js');
    await store.put(key, await sealObject(key, bytes, encryptionCodec(settings.codec)));
  }
  return { sha256, mimeType, size: bytes.length, ...(options.name ? { name: options.name } : {}) };
}

/** An image's bytes from the store, checked against its hash (ObjectStoreError when missing or altered). */
export async function readImage(settings: StoreSettings, ref: Pick<ImageRef, 'sha256'>): Promise<Uint8Array> {
  const key = imageKey(ref.sha256);
  const stored = await imageStore(settings).getBytes(key);
  const { openObject } = await import('../pool/shipping.js');
  const bytes = await openObject(key, stored, encryptionCodec(settings.codec));
  if (sha256Of(bytes) !== ref.sha256) throw new ObjectStoreError('refused', `the image ${key} in the store does not match its hash`);
  return bytes;
}

export { ImageRefused };
