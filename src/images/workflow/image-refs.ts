// Image references as the workflow accepts them with a message: the shape, the formats, the limits.
// Pure (the workflow and every client check with it); the bytes never come here.
import { FAILURE, failure } from '../../core/failure-types.js';
import { IMAGE_MIME_TYPES, type ImageMimeType, type ImageRef } from '../../core/types.js';

/** The largest image a message (or a tool result) may carry, in bytes: Anthropic's own limit. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** The most images one message may carry. */
export const MAX_IMAGES_PER_MESSAGE = 10;

const SHA256 = /^[0-9a-f]{64}$/;

/** Where an image's bytes are in the object store. */
export function imageKey(sha256: string): string {
  if (!SHA256.test(sha256)) throw new Error(`not an image hash: ${JSON.stringify(sha256.slice(0, 80))}`);
  return `images/${sha256}`;
}

/** Whether a value is one of the image formats taken. */
export function isImageMimeType(value: unknown): value is ImageMimeType {
  return (IMAGE_MIME_TYPES as readonly unknown[]).includes(value);
}

/**
 * A message's image references as the workflow keeps them (unknown fields dropped); throws with the
 * reason for a value that is not a list of at most MAX_IMAGES_PER_MESSAGE references.
 */
export function checkImageRefs(value: unknown): ImageRef[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw failure(FAILURE.InvalidRequest, 'images must be a list of image references');
  if (value.length > MAX_IMAGES_PER_MESSAGE)
    throw failure(FAILURE.InvalidRequest, `a message carries at most ${MAX_IMAGES_PER_MESSAGE} images (it has ${value.length})`);
  return value.map((v: unknown, i) => {
    const r = (v ?? {}) as Record<string, unknown>;
    if (typeof r.sha256 !== 'string' || !SHA256.test(r.sha256))
      throw failure(FAILURE.InvalidRequest, `image ${i + 1}: sha256 must be 64 lowercase hex digits`);
    if (!isImageMimeType(r.mimeType))
      throw failure(FAILURE.InvalidRequest, `image ${i + 1}: mimeType must be one of ${IMAGE_MIME_TYPES.join(', ')}`);
    if (typeof r.size !== 'number' || !Number.isInteger(r.size) || r.size <= 0 || r.size > MAX_IMAGE_BYTES)
      throw failure(FAILURE.InvalidRequest, `image ${i + 1}: size must be 1 to ${MAX_IMAGE_BYTES} bytes`);
    const name = typeof r.name === 'string' && r.name !== '' ? r.name.slice(0, 200) : undefined;
    return { sha256: r.sha256, mimeType: r.mimeType, size: r.size, ...(name !== undefined ? { name } : {}) };
  });
}
