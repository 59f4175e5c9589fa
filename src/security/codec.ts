// Encryption at rest: a Temporal PayloadCodec with AES-256-GCM. Every client, worker and CLI command
// that has a key (FAHEEM_ENCRYPTION_KEY or FAHEEM_ENCRYPTION_KEYS) encrypts what it sends to Temporal
// and decrypts what it reads, so Temporal's database and history exports hold ciphertext only.
// The wire format is the one Temporal's encryption samples use: metadata `encoding: binary/encrypted`
// and `encryption-key-id: <id>`, data = 12-byte IV + ciphertext + 16-byte GCM tag of the whole
// serialized inner Payload (so its own metadata, e.g. `encoding: json/plain`, is hidden too).
// A payload bound to a place (an object of the store: encodeBound) also carries
// `encryption-associated-data: <what it is bound to>`, and its GCM tag also covers the bytes it is
// bound to (AES-GCM associated data, not stored): it decrypts only where they are the same.
import { METADATA_ENCODING_KEY, ValueError, type Payload, type PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { DecryptionError, EncryptionConfigError } from '../core/errors.js';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { CodecSettings } from '../settings/codec.js';

/** The payload keys as configured (the codec area's, src/settings/codec.ts). */
export type KeySettings = Pick<CodecSettings, 'encryptionKey' | 'encryptionKeys'>;

const ProtoPayload = proto.temporal.api.common.v1.Payload;

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
/** Metadata of a payload bound to associated data (encodeBound): what that data is, not the data. */
export const ASSOCIATED_DATA_METADATA = 'encryption-associated-data';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const VARS = 'FAHEEM_ENCRYPTION_KEYS/FAHEEM_ENCRYPTION_KEY';

export interface EncryptionKey {
  /** Written into each payload's metadata; not secret. */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export { DecryptionError, EncryptionConfigError };

/** A key's stable short id: the first 8 hex characters of the SHA-256 of its 32 bytes. */
export function keyFingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function decodeKey(text: string, where: string): Buffer {
  const t = text.trim();
  // Standard or URL-safe base64, padding optional.
  if (t === '' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) {
    throw new EncryptionConfigError(`${where} is not base64 (make a key with \`openssl rand -base64 32\`)`);
  }
  const key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== KEY_BYTES) {
    throw new EncryptionConfigError(
      `${where} is ${key.length} bytes once base64-decoded; it must be exactly ${KEY_BYTES} (make one with \`openssl rand -base64 32\`)`,
    );
  }
  return key;
}

/**
 * The keys `configured` (the codec area's settings) gives, the encrypting one first; `undefined` when none is configured.
 * `FAHEEM_ENCRYPTION_KEY=<base64>` is one key whose id is its fingerprint; `FAHEEM_ENCRYPTION_KEYS=
 * id1:key1,id2:key2` is a list (an entry without `id:` gets the fingerprint as its id).
 *
 * @throws EncryptionConfigError naming the variable and what is wrong.
 */
export function parseEncryptionKeys(configured: KeySettings): EncryptionKey[] | undefined {
  const single = configured.encryptionKey?.trim() ?? '';
  const list = configured.encryptionKeys?.trim() ?? '';
  if (single && list) {
    throw new EncryptionConfigError(
      'FAHEEM_ENCRYPTION_KEY and FAHEEM_ENCRYPTION_KEYS are both set; set only FAHEEM_ENCRYPTION_KEYS (the first key encrypts, all decrypt) and unset FAHEEM_ENCRYPTION_KEY',
    );
  }
  if (single) {
    const key = decodeKey(single, 'FAHEEM_ENCRYPTION_KEY');
    return [{ id: keyFingerprint(key), key }];
  }
  if (!list) return undefined;
  const keys: EncryptionKey[] = [];
  list.split(',').forEach((raw, i) => {
    const entry = raw.trim();
    const where = `FAHEEM_ENCRYPTION_KEYS entry ${i + 1}`;
    if (entry === '') throw new EncryptionConfigError(`${where} is empty (expected id1:key1,id2:key2 with base64 32-byte keys)`);
    const colon = entry.indexOf(':');
    const id = colon >= 0 ? entry.slice(0, colon).trim() : undefined;
    if (id !== undefined && !KEY_ID.test(id)) {
      throw new EncryptionConfigError(
        `${where} has the key id "${id}"; ids are 1 to 64 letters, digits, '.', '_' or '-' (format id1:key1,id2:key2)`,
      );
    }
    const key = decodeKey(colon >= 0 ? entry.slice(colon + 1) : entry, id ? `${where} (key id "${id}")` : where);
    const keyId = id ?? keyFingerprint(key);
    if (keys.some((k) => k.id === keyId)) throw new EncryptionConfigError(`FAHEEM_ENCRYPTION_KEYS has the key id "${keyId}" twice`);
    keys.push({ id: keyId, key });
  });
  return keys;
}

/**
 * AES-256-GCM over the whole serialized Payload. Encodes with the first key; decodes with whichever
 * key the payload names (by its id, or by the fingerprint of a key, so a key that was once the single
 * FAHEEM_ENCRYPTION_KEY is found under any id in FAHEEM_ENCRYPTION_KEYS). Payloads that are not
 * encrypted pass through decode unchanged: a conversation started before a key was set stays readable.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly byId = new Map<string, Buffer>();

  constructor(readonly keys: readonly EncryptionKey[]) {
    if (keys.length === 0) throw new EncryptionConfigError('EncryptionCodec needs at least one key');
    for (const k of keys) {
      if (k.key.length !== KEY_BYTES) throw new EncryptionConfigError(`key "${k.id}" is ${k.key.length} bytes; it must be ${KEY_BYTES}`);
      this.byId.set(k.id, k.key);
    }
    for (const k of keys) {
      const fp = keyFingerprint(k.key);
      if (!this.byId.has(fp)) this.byId.set(fp, k.key);
    }
  }

  /** The id new payloads carry. */
  get keyId(): string {
    return this.keys[0]!.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal(payload, undefined));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? this.open(payload, undefined) : payload));
  }

  /**
   * `payload` encrypted as `encode` does, with `associated` (where it is kept, say) authenticated
   * beside it as AES-GCM associated data: it decrypts only with the same bytes (decodeBound), so a
   * copy of it anywhere else does not. `boundTo` says what those bytes are (metadata, in clear).
   */
  encodeBound(payload: Payload, boundTo: string, associated: Uint8Array): Payload {
    return this.seal(payload, { boundTo, associated });
  }

  /**
   * A payload encodeBound made with these associated bytes, decrypted.
   *
   * @throws DecryptionError when it is not encrypted, not bound, encrypted with a key this process
   * lacks, or does not decrypt with these bytes (it was made for others, or altered).
   */
  decodeBound(payload: Payload, associated: Uint8Array): Payload {
    if (!isEncrypted(payload)) throw new DecryptionError('this payload is not encrypted: a bound payload must be');
    if (boundTo(payload) === undefined) throw new DecryptionError('this payload is encrypted but bound to nothing (no associated data)');
    return this.open(payload, associated);
  }

  /** Whether this process has the key an encrypted payload names (by id or fingerprint). */
  hasKey(keyId: string): boolean {
    return this.byId.has(keyId);
  }

  private seal(payload: Payload, bound: { boundTo: string; associated: Uint8Array } | undefined): Payload {
    const { id, key } = this.keys[0]!;
    const plain = ProtoPayload.encode(ProtoPayload.fromObject(payload)).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    if (bound) cipher.setAAD(bound.associated);
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from(id),
        ...(bound ? { [ASSOCIATED_DATA_METADATA]: Buffer.from(bound.boundTo) } : {}),
      },
      data: new Uint8Array(data),
    };
  }

  private open(payload: Payload, associated: Uint8Array | undefined): Payload {
    const id = metadataString(payload, KEY_ID_METADATA) ?? '';
    const key = this.byId.get(id);
    if (!key) {
      const known = [...new Set(this.keys.map((k) => k.id))].join(', ');
      throw new DecryptionError(
        `this payload was encrypted with key ${id || '(no id)'}, which is not in ${VARS} of this process (it has ${known}); ` +
          'add that key to FAHEEM_ENCRYPTION_KEYS (the first key encrypts, all decrypt)',
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new DecryptionError(`an encrypted payload (key ${id}) is too short to be valid: it was altered`);
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      if (associated) decipher.setAAD(associated);
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new DecryptionError(
        `cannot decrypt a payload encrypted with key ${id}: the key this process has under that id is not the one that encrypted it, or the data was altered` +
          `${associated ? ', or it was bound to another place' : ''} (check ${VARS})`,
      );
    }
    const inner = ProtoPayload.decode(plain);
    return {
      metadata: inner.metadata,
      data: inner.data,
      ...(inner.externalPayloads?.length ? { externalPayloads: inner.externalPayloads } : {}),
    } as Payload;
  }
}

function metadataString(payload: Payload, key: string): string | undefined {
  const raw = payload.metadata?.[key];
  return raw ? Buffer.from(raw).toString('utf8') : undefined;
}

export function isEncrypted(payload: Payload): boolean {
  return metadataString(payload, METADATA_ENCODING_KEY) === ENCRYPTED_ENCODING;
}

/** What an encrypted payload is bound to (ASSOCIATED_DATA_METADATA), or `undefined` when it is bound to nothing. */
export function boundTo(payload: Payload): string | undefined {
  return isEncrypted(payload) ? metadataString(payload, ASSOCIATED_DATA_METADATA) : undefined;
}

/** The key id an encrypted payload names, or `undefined` for a payload that is not encrypted. */
export function payloadKeyId(payload: Payload): string | undefined {
  return isEncrypted(payload) ? metadataString(payload, KEY_ID_METADATA) : undefined;
}

/** The codec for the configured keys, or `undefined` when no key is configured. Throws on a malformed key. */
export function encryptionCodec(settings: KeySettings): EncryptionCodec | undefined {
  const keys = parseEncryptionKeys(settings);
  return keys ? new EncryptionCodec(keys) : undefined;
}

/**
 * An error that says a payload is encrypted and this process has no key, in place of the SDK's
 * "Unknown encoding: binary/encrypted" (a ValueError) for `payload`; any other error is returned as it is.
 */
export function explainUnreadable(err: unknown, payload: Payload | null | undefined): unknown {
  if (err instanceof ValueError && payload && isEncrypted(payload)) {
    return new DecryptionError(
      `this conversation is encrypted and this process has no key: set ${VARS.split('/').reverse().join(' or ')} (the key the conversation was written with)`,
    );
  }
  return err;
}
