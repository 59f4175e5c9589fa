// What an image is, from its first bytes (never from a file name), and whether a conversation takes
// it: PNG, JPEG, GIF or WebP, at most MAX_IMAGE_BYTES. Pure.
import { InvalidRequestError } from '../core/errors.js';
import { MAX_IMAGE_BYTES } from './workflow/image-refs.js';
import type { ImageMimeType } from '../core/types.js';

const startsWith = (bytes: Uint8Array, magic: readonly number[], at = 0): boolean => magic.every((b, i) => bytes[at + i] === b);

/** The image format the bytes' magic numbers name, or undefined when they name none of the four taken. */
export function sniffImage(bytes: Uint8Array): ImageMimeType | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif';
  // RIFF....WEBP
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return undefined;
}

/** Why an image is refused (a kind of InvalidRequestError: the caller's input is at fault). */
export class ImageRefused extends InvalidRequestError {}

/**
 * The format of an image a conversation takes; ImageRefused saying why otherwise (`name` says which
 * image). `declared`, when given (bytes with a MIME type), must agree with the bytes.
 */
export function checkImage(bytes: Uint8Array, name: string, declared?: string): ImageMimeType {
  if (bytes.length === 0) throw new ImageRefused(`${name} is empty`);
  if (bytes.length > MAX_IMAGE_BYTES)
    throw new ImageRefused(`${name} is ${bytes.length} bytes; an image may have at most ${MAX_IMAGE_BYTES} bytes (5 MB)`);
  const type = sniffImage(bytes);
  if (!type) throw new ImageRefused(`${name} is not a PNG, JPEG, GIF or WebP image (its first bytes say so)`);
  if (declared !== undefined && declared.toLowerCase() !== type && !(declared.toLowerCase() === 'image/jpg' && type === 'image/jpeg'))
    throw new ImageRefused(`${name} was given as ${declared}, but its bytes are ${type}`);
  return type;
}
