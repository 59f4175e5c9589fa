// Large payloads kept outside history (src/storage/local-payloads.ts), read across languages: the
// fixtures in test/fixtures/payload-store/ were stored by this driver and by the Python client's
// (python/tests/test_payloads.py reads the same ones), each with the reference its SDK wrote into
// history. Both read here through Temporal's own external-storage runner, with the folder the
// worker would use.
import type { Payload } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow/index.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { externalStorage } from '../../../src/storage/local-payloads.js';
import { storeSettings } from '../../../src/settings/store.js';

interface Claim {
  madeBy: 'typescript' | 'python';
  value: unknown;
  reference: { metadata: Record<string, string>; data: string; externalPayloads: { sizeBytes: number }[] };
}
const dir = path.join(import.meta.dirname, '..', '..', 'fixtures', 'payload-store');
const { claims } = JSON.parse(readFileSync(path.join(dir, 'claims.json'), 'utf8')) as { claims: Claim[] };

const reference = (c: Claim): Payload => ({
  metadata: Object.fromEntries(Object.entries(c.reference.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
  data: new Uint8Array(Buffer.from(c.reference.data, 'base64')),
  // The stored size (externalPayloads) is for metrics only; reading needs the claim alone.
});

test('both languages stored a payload, each named by the SHA-256 of its bytes', () => {
  assert.deepEqual(claims.map((c) => c.madeBy).sort(), ['python', 'typescript']);
  for (const c of claims) {
    const { driverName, claimData } = JSON.parse(Buffer.from(c.reference.data, 'base64').toString()) as {
      driverName: string;
      claimData: { sha256: string };
    };
    assert.equal(driverName, 'faheem-local-files');
    const bytes = readFileSync(path.join(dir, `${claimData.sha256}.bin`));
    assert.equal(createHash('sha256').update(bytes).digest('hex'), claimData.sha256);
  }
});

test("the worker's external storage reads the payloads either language stored", async () => {
  const runner = new ExternalStorageRunner(externalStorage(storeSettings({ FAHEEM_PAYLOAD_DIR: dir })));
  for (const c of claims) {
    const [payload] = await runner.retrieve([reference(c)]);
    assert.equal(Buffer.from(payload!.metadata!.encoding!).toString(), 'json/plain', `stored by ${c.madeBy}`);
    assert.deepEqual(JSON.parse(Buffer.from(payload!.data!).toString()), c.value, `stored by ${c.madeBy}`);
  }
});

test('a folder without the file says which variable to set', async () => {
  const runner = new ExternalStorageRunner(externalStorage(storeSettings({ FAHEEM_PAYLOAD_DIR: path.join(dir, 'elsewhere') })));
  await assert.rejects(runner.retrieve([reference(claims[0]!)]), /FAHEEM_PAYLOAD_DIR/);
});
