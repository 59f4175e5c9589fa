// The TypeScript side of the Python client's s3:// payload tests (python/tests/test_payloads_s3.py):
// a real S3 server (SeaweedFS, as the e2e tests start it) and the worker's own external storage
// over it (src/storage/local-payloads.ts: Temporal's S3 driver, the encryption codec first).
// Prints one JSON line ({ env }: the AWS_* variables and the bucket) once the bucket is made, then
// answers one JSON line per request line on stdin, and stops the server when stdin ends:
//   {"store": VALUE, "env": {...}, "workflowId": ID}  →  {"reference": WIRE}  (VALUE stored as the worker stores it)
//   {"retrieve": WIRE, "env": {...}}                   →  {"value": VALUE}     (a claim read as the worker reads it)
// WIRE is a Payload in the JSON form of test/fixtures/payload-store/claims.json (base64 metadata and
// data). Errors come back as {"error": MESSAGE}.
//   node --import tsx test/support/payload-s3.ts
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { createInterface } from 'node:readline';
import { encryptionCodec } from '../../src/security/codec.js';
import { externalStorage } from '../../src/storage/local-payloads.js';
import { startSeaweedS3 } from './seaweedfs.js';
import { codecSettings } from '../../src/settings/codec.js';
import { storeSettings } from '../../src/settings/store.js';

interface Wire {
  metadata: Record<string, string>;
  data: string;
}

const toWire = (p: Payload): Wire => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const fromWire = (w: Wire): Payload => ({
  metadata: Object.fromEntries(Object.entries(w.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
  data: new Uint8Array(Buffer.from(w.data, 'base64')),
});

async function answer(line: string): Promise<unknown> {
  const req = JSON.parse(line) as { store?: unknown; retrieve?: Wire; env: Record<string, string>; workflowId?: string };
  const env = { ...s3.env, ...req.env };
  const runner = new ExternalStorageRunner(externalStorage(storeSettings(env)));
  const codec = encryptionCodec(codecSettings(env));
  if (req.retrieve) {
    let [payload] = await runner.retrieve([fromWire(req.retrieve)]);
    if (codec) [payload] = await codec.decode([payload!]);
    return { value: defaultPayloadConverter.fromPayload(payload!) };
  }
  const plain = defaultPayloadConverter.toPayload(req.store);
  const [payload] = codec ? await codec.encode([plain]) : [plain];
  const target = req.workflowId ? { kind: 'workflow' as const, namespace: 'default', type: 'conversation', id: req.workflowId } : undefined;
  const [reference] = await runner.store([payload!], target ? { target } : {});
  return { reference: toWire(reference!) };
}

const s3 = await startSeaweedS3('faheem-python');
let closing: Promise<void> | undefined;
const close = () => (closing ??= s3.stop().then(() => process.exit(0)));
process.on('SIGTERM', () => void close());
process.stdout.write(`${JSON.stringify({ env: { ...s3.env, bucket: s3.bucket } })}\n`);

// One request at a time, answered in order.
let queue = Promise.resolve();
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  queue = queue.then(async () => {
    const out = await answer(line).catch((err: unknown) => ({
      error: err instanceof Error ? `${err.message} ${String(err.cause ?? '')}` : String(err),
    }));
    process.stdout.write(`${JSON.stringify(out)}\n`);
  });
});
lines.on('close', () => void queue.then(close));
