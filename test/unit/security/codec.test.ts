// src/security/codec.ts (no server): the AES-256-GCM payload codec, key lists and rotation, the data
// converter, the keys as secrets.
import proto from '@temporalio/proto';
import assert from 'node:assert/strict';

import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';

import path from 'node:path';
import { describe, test } from 'node:test';

import { isSecretName, secretValues } from '../../../src/security/redact.js';
import {
  ASSOCIATED_DATA_METADATA,
  DecryptionError,
  EncryptionCodec,
  EncryptionConfigError,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  encryptionCodec,
  keyFingerprint,
  parseEncryptionKeys,
  boundTo,
  payloadKeyId,
} from '../../../src/security/codec.js';

import { dataConverter } from '../../../src/storage/local-payloads.js';

import { ROOT } from '../../support/harness.js';
import { codecSettings } from '../../../src/settings/codec.js';
import { storeSettings } from '../../../src/settings/store.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;
type Payload = { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null };

const KEY_A = randomBytes(32).toString('base64');
const KEY_B = randomBytes(32).toString('base64');
const KEY_WRONG = randomBytes(32).toString('base64');
const ID_A = keyFingerprint(Buffer.from(KEY_A, 'base64'));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s));
const jsonPayload = (value: unknown): Payload => ({ metadata: { encoding: utf8('json/plain') }, data: utf8(JSON.stringify(value)) });
const meta = (p: Payload, key: string) => (p.metadata?.[key] ? Buffer.from(p.metadata[key]).toString() : undefined);

describe('the codec (no server)', () => {
  const codecOf = (env: Record<string, string>) => encryptionCodec(codecSettings(env))!;

  test('round trip; the metadata names the encoding and the key; the data is IV + ciphertext + tag of the whole payload', async () => {
    const codec = codecOf({ FAHEEM_ENCRYPTION_KEY: KEY_A });
    assert.equal(codec.keyId, ID_A);
    assert.equal(ID_A, createHash('sha256').update(Buffer.from(KEY_A, 'base64')).digest('hex').slice(0, 8));
    const plain = [
      jsonPayload({ text: 'the plain words' }),
      jsonPayload(42),
      { metadata: { encoding: utf8('binary/null') }, data: new Uint8Array() },
    ];
    const encoded = await codec.encode(plain);
    assert.equal(encoded.length, 3);
    for (const [i, e] of encoded.entries()) {
      assert.equal(meta(e, 'encoding'), ENCRYPTED_ENCODING);
      assert.equal(meta(e, KEY_ID_METADATA), ID_A);
      assert.deepEqual(Object.keys(e.metadata ?? {}).sort(), ['encoding', 'encryption-key-id']);
      const innerBytes = ProtoPayload.encode(ProtoPayload.fromObject(plain[i]!)).finish().length;
      assert.equal(e.data!.length, 12 + innerBytes + 16);
      assert.ok(!Buffer.from(e.data!).toString('latin1').includes('plain words'));
      assert.ok(!Buffer.from(e.data!).toString('latin1').includes('json/plain'));
    }
    // A fresh IV each time: the same payload never encrypts the same way twice.
    assert.notDeepEqual((await codec.encode([plain[0]!]))[0]!.data, encoded[0]!.data);
    const decoded = await codec.decode(encoded);
    for (const [i, d] of decoded.entries()) {
      assert.equal(meta(d, 'encoding'), meta(plain[i]!, 'encoding'));
      assert.deepEqual(Buffer.from(d.data ?? new Uint8Array()), Buffer.from(plain[i]!.data!));
    }
    // Through Temporal's own converter too.
    assert.deepEqual(JSON.parse(Buffer.from(decoded[0]!.data!).toString()), { text: 'the plain words' });
  });

  test('payloads that are not encrypted pass through decode unchanged', async () => {
    const codec = codecOf({ FAHEEM_ENCRYPTION_KEY: KEY_A });
    const plain = jsonPayload('written before the key was set');
    const [out] = await codec.decode([plain]);
    assert.equal(out, plain);
    assert.equal(payloadKeyId(plain), undefined);
  });

  test('an unknown key id, a wrong key under the right id, altered data: clear errors, never garbage', async () => {
    const [enc] = await codecOf({ FAHEEM_ENCRYPTION_KEYS: `A:${KEY_A}` }).encode([jsonPayload('secret')]);
    await assert.rejects(codecOf({ FAHEEM_ENCRYPTION_KEYS: `B:${KEY_B}` }).decode([enc!]), (err: Error) => {
      assert.ok(err instanceof DecryptionError);
      assert.match(err.message, /this payload was encrypted with key A, which is not in FAHEEM_ENCRYPTION_KEYS\/FAHEEM_ENCRYPTION_KEY/);
      assert.match(err.message, /it has B/);
      return true;
    });
    await assert.rejects(
      codecOf({ FAHEEM_ENCRYPTION_KEYS: `A:${KEY_WRONG}` }).decode([enc!]),
      /cannot decrypt a payload encrypted with key A: .*not the one that encrypted it/,
    );
    for (const at of [0, 20, enc!.data!.length - 1]) {
      const data = new Uint8Array(enc!.data!);
      data[at] = data[at]! ^ 1;
      await assert.rejects(codecOf({ FAHEEM_ENCRYPTION_KEYS: `A:${KEY_A}` }).decode([{ ...enc!, data }]), /cannot decrypt .*altered/);
    }
    await assert.rejects(
      codecOf({ FAHEEM_ENCRYPTION_KEYS: `A:${KEY_A}` }).decode([{ ...enc!, data: enc!.data!.subarray(0, 20) }]),
      /too short/,
    );
  });

  test('rotation: the first key encrypts, all decrypt; a former single key is found by its fingerprint', async () => {
    const [old] = await codecOf({ FAHEEM_ENCRYPTION_KEY: KEY_A }).encode([jsonPayload('old')]);
    const rotated = codecOf({ FAHEEM_ENCRYPTION_KEYS: `B:${KEY_B},A:${KEY_A}` });
    assert.equal(rotated.keyId, 'B');
    assert.equal(JSON.parse(Buffer.from((await rotated.decode([old!]))[0]!.data!).toString()), 'old');
    assert.equal(payloadKeyId((await rotated.encode([jsonPayload('new')]))[0]!), 'B');
    // An entry without an id gets the fingerprint, the same id FAHEEM_ENCRYPTION_KEY gives.
    const unnamed = parseEncryptionKeys(codecSettings({ FAHEEM_ENCRYPTION_KEYS: ` B:${KEY_B} , ${KEY_A} ` }))!;
    assert.deepEqual(
      unnamed.map((k) => k.id),
      ['B', ID_A],
    );
  });

  test('malformed keys and key lists: an error naming the variable and what is wrong', () => {
    assert.equal(parseEncryptionKeys(codecSettings({})), undefined);
    assert.equal(parseEncryptionKeys(codecSettings({ FAHEEM_ENCRYPTION_KEY: '', FAHEEM_ENCRYPTION_KEYS: ' ' })), undefined);
    const bad: [Record<string, string>, RegExp][] = [
      [{ FAHEEM_ENCRYPTION_KEY: 'not base64!' }, /^FAHEEM_ENCRYPTION_KEY is not base64/],
      [
        { FAHEEM_ENCRYPTION_KEY: randomBytes(16).toString('base64') },
        /^FAHEEM_ENCRYPTION_KEY is 16 bytes once base64-decoded; it must be exactly 32/,
      ],
      [{ FAHEEM_ENCRYPTION_KEY: 'passphrasewhichneedstobe32bytes!' }, /FAHEEM_ENCRYPTION_KEY is not base64|must be exactly 32/],
      [{ FAHEEM_ENCRYPTION_KEYS: `A:${KEY_A},,B:${KEY_B}` }, /FAHEEM_ENCRYPTION_KEYS entry 2 is empty/],
      [{ FAHEEM_ENCRYPTION_KEYS: `A:${KEY_A},B:short` }, /FAHEEM_ENCRYPTION_KEYS entry 2 \(key id "B"\) is \d+ bytes/],
      [{ FAHEEM_ENCRYPTION_KEYS: `a b:${KEY_A}` }, /FAHEEM_ENCRYPTION_KEYS entry 1 has the key id "a b"/],
      [{ FAHEEM_ENCRYPTION_KEYS: `:${KEY_A}` }, /entry 1 has the key id ""/],
      [{ FAHEEM_ENCRYPTION_KEYS: `A:${KEY_A},A:${KEY_B}` }, /the key id "A" twice/],
      [{ FAHEEM_ENCRYPTION_KEY: KEY_A, FAHEEM_ENCRYPTION_KEYS: `B:${KEY_B}` }, /both set/],
    ];
    for (const [env, message] of bad) {
      assert.throws(
        () => parseEncryptionKeys(codecSettings(env)),
        (err: Error) => err instanceof EncryptionConfigError && message.test(err.message),
        JSON.stringify(env),
      );
    }
    assert.throws(() => new EncryptionCodec([]), EncryptionConfigError);
  });

  test('dataConverter: no key, no codec; with a key, the codec and the failure converter that encodes messages', () => {
    const plain = dataConverter(storeSettings({}));
    assert.equal(plain.payloadCodecs, undefined);
    assert.equal(plain.failureConverterPath, undefined);
    const encrypted = dataConverter(storeSettings({ FAHEEM_ENCRYPTION_KEY: KEY_A }));
    assert.ok(encrypted.payloadCodecs?.[0] instanceof EncryptionCodec);
    assert.ok(existsSync(encrypted.failureConverterPath!), encrypted.failureConverterPath);
    assert.ok(existsSync(path.join(ROOT, 'dist/security/failure-converter.cjs')), 'npm run build compiles the failure converter');
    assert.throws(() => dataConverter(storeSettings({ FAHEEM_ENCRYPTION_KEY: 'x' })), /FAHEEM_ENCRYPTION_KEY/);
  });

  test('the keys are secrets: masked, and never in the environment of commands', () => {
    assert.ok(isSecretName('FAHEEM_ENCRYPTION_KEY') && isSecretName('FAHEEM_ENCRYPTION_KEYS') && isSecretName('FAHEEM_CODEC_TOKEN'));
    const values = secretValues({ FAHEEM_ENCRYPTION_KEYS: `B:${KEY_B},A:${KEY_A}` });
    assert.ok(values.includes(KEY_A) && values.includes(KEY_B));
  });
});

describe('a payload bound to a place', () => {
  const codec = encryptionCodec(codecSettings({ FAHEEM_ENCRYPTION_KEY: KEY_A }))!;
  const here = utf8('conversations/a/steps/00000001@1.json');
  const there = utf8('conversations/b/steps/00000001@1.json');

  test('decrypts only with the bytes it was bound to; plain decode and unbound payloads do not pass for it', async () => {
    const bound = codec.encodeBound(jsonPayload({ files: 'a' }), 'store-key', here);
    assert.equal(meta(bound, 'encoding'), ENCRYPTED_ENCODING);
    assert.equal(meta(bound, ASSOCIATED_DATA_METADATA), 'store-key');
    assert.equal(boundTo(bound), 'store-key');
    assert.equal(Buffer.from(codec.decodeBound(bound, here).data!).toString(), JSON.stringify({ files: 'a' }));
    assert.throws(() => codec.decodeBound(bound, there), DecryptionError);
    await assert.rejects(codec.decode([bound]), DecryptionError, 'a Temporal payload is never bound');
    const [unbound] = await codec.encode([jsonPayload({ files: 'a' })]);
    assert.equal(boundTo(unbound!), undefined);
    assert.throws(() => codec.decodeBound(unbound!, here), /bound to nothing/);
    assert.throws(() => codec.decodeBound(jsonPayload({ files: 'a' }), here), /not encrypted/);
    assert.ok(codec.hasKey(ID_A) && !codec.hasKey('other'));
  });
});
