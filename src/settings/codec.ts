// The encryption area of the settings: the payload keys and the codec server's token. Built once at
// an entry point and passed down; the keys are parsed (and a malformed one named) by
// src/security/codec.ts. Secrets: this object is never printed. No zod here (the quick paths load it).
import type { Settings } from '../environment.js';

/** The encryption settings: secrets, handed only to the codec. */
export interface CodecSettings {
  /** FAHEEM_ENCRYPTION_KEY (trimmed): one base64 key; undefined when unset. */
  readonly encryptionKey: string | undefined;
  /** FAHEEM_ENCRYPTION_KEYS (trimmed): `id1:key1,id2:key2`; undefined when unset. */
  readonly encryptionKeys: string | undefined;
  /** FAHEEM_CODEC_TOKEN: the token `faheem codec-server` requires; undefined: it makes one. */
  readonly codecToken: string | undefined;
  /** Whether a key is configured (payloads are encrypted). */
  readonly encrypts: boolean;
}

/** The encryption settings `settings` gives (a blank value is unset). Nothing is checked here. */
export function codecSettings(settings: Settings): CodecSettings {
  const encryptionKey = settings.FAHEEM_ENCRYPTION_KEY?.trim() || undefined;
  const encryptionKeys = settings.FAHEEM_ENCRYPTION_KEYS?.trim() || undefined;
  return {
    encryptionKey,
    encryptionKeys,
    codecToken: settings.FAHEEM_CODEC_TOKEN?.trim() || undefined,
    encrypts: encryptionKey !== undefined || encryptionKeys !== undefined,
  };
}
