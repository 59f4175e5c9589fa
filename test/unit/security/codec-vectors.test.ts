// The payload codec against the vectors shared with the Python client (test/fixtures/codec-vectors.json,
// checked by python/tests/test_codec.py too): every vector, made by TypeScript or by Python, decrypts
// here to its plain payload, byte for byte, under each environment that holds its key; a key it does
// not hold is a DecryptionError. Payloads encrypted here decrypt with the same environments.
import type { Payload } from '@temporalio/common';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { DecryptionError, EncryptionCodec, keyFingerprint, parseEncryptionKeys } from '../../../src/security/codec.js';
import { codecSettings } from '../../../src/settings/codec.js';

interface WirePayload {
  metadata: Record<string, string>;
  data: string;
}
interface Vectors {
  decodeEnvs: { env: Record<string, string>; decrypts: string[] }[];
  fingerprints: { key: string; id: string }[];
  vectors: {
    madeBy: 'typescript' | 'python';
    encodeEnv: Record<string, string>;
    keyId: string;
    plain: WirePayload;
    encrypted: WirePayload;
  }[];
}

const file = path.join(import.meta.dirname, '..', '..', 'fixtures', 'codec-vectors.json');
const shared = JSON.parse(readFileSync(file, 'utf8')) as Vectors;

const toPayload = (p: WirePayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
  data: new Uint8Array(Buffer.from(p.data, 'base64')),
});
const toWire = (p: Payload): WirePayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const codecFor = (env: Record<string, string>) => new EncryptionCodec(parseEncryptionKeys(codecSettings(env))!);

describe('codec vectors shared with the Python client', () => {
  test('both languages made vectors', () => {
    assert.ok(shared.vectors.some((v) => v.madeBy === 'python'));
    assert.ok(shared.vectors.some((v) => v.madeBy === 'typescript'));
  });

  test('a key id is its fingerprint, as Python computes it', () => {
    for (const { key, id } of shared.fingerprints) assert.equal(keyFingerprint(Buffer.from(key, 'base64')), id);
  });

  for (const [i, { env, decrypts }] of shared.decodeEnvs.entries()) {
    test(`decode environment ${i + 1} decrypts every vector made with a key it holds, and refuses the others`, async () => {
      const codec = codecFor(env);
      for (const v of shared.vectors) {
        const encrypted = toPayload(v.encrypted);
        assert.equal(Buffer.from(encrypted.metadata!['encryption-key-id']!).toString(), v.keyId);
        if (decrypts.includes(v.keyId)) {
          const [plain] = await codec.decode([encrypted]);
          assert.deepEqual(toWire(plain!), v.plain, `a vector made by ${v.madeBy}`);
        } else {
          await assert.rejects(codec.decode([encrypted]), DecryptionError);
        }
      }
    });
  }

  test('what TypeScript encrypts now decrypts under the same environments (the vectors stay honest)', async () => {
    for (const v of shared.vectors.filter((x) => x.madeBy === 'typescript')) {
      const [encrypted] = await codecFor(v.encodeEnv).encode([toPayload(v.plain)]);
      assert.equal(Buffer.from(encrypted!.metadata!['encryption-key-id']!).toString(), v.keyId);
      const [plain] = await codecFor(v.encodeEnv).decode([encrypted!]);
      assert.deepEqual(toWire(plain!), v.plain);
    }
  });

  test('an altered vector does not decrypt', async () => {
    const v = shared.vectors.find((x) => x.madeBy === 'python')!;
    const data = Buffer.from(v.encrypted.data, 'base64');
    data[data.length - 1]! ^= 1;
    await assert.rejects(codecFor(v.encodeEnv).decode([toPayload({ ...v.encrypted, data: data.toString('base64') })]), DecryptionError);
  });
});
