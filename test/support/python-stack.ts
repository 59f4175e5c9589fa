// The real parts the Python client's e2e tests (python/tests) run against: a Temporal dev server (the
// run's shared one when FAHEEM_TEST_TEMPORAL_ADDRESS is set, else one of its own), a TypeScript
// worker and the scripted countdown model, started through the same harness as the e2e layer.
// Prints one JSON line ({ env, baseUrl, gates }) once the worker polls; opens a gate on
// `release <name>` lines on stdin and stops everything when stdin ends.
//   node --import tsx test/support/python-stack.ts [--name N] [--encrypt] [--gate STEP:NAME]…
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { countdownScript, samePromptSameReply } from '../../src/testing/scripted-model.js';
import { startHarness } from './harness.js';

const { values } = parseArgs({
  options: {
    name: { type: 'string', default: 'python' },
    encrypt: { type: 'boolean', default: false },
    gate: { type: 'string', multiple: true, default: [] },
  },
});
const gates: Record<number, string> = {};
for (const g of values.gate) {
  const [step, name] = g.split(':');
  if (!name || !/^\d+$/.test(step ?? '')) throw new Error(`--gate ${g}: expected STEP:NAME`);
  gates[Number(step)] = name;
}

const env = values.encrypt ? { FAHEEM_ENCRYPTION_KEY: randomBytes(32).toString('base64') } : undefined;
const h = await startHarness({
  name: values.name,
  script: samePromptSameReply(countdownScript({ delayMs: 0, gates })),
  record: false,
  ...(env ? { env } : {}),
});
let closing: Promise<void> | undefined;
const close = () => (closing ??= h.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void close());
try {
  await h.startWorker();
} catch (err) {
  await h.close();
  throw err;
}
process.stdout.write(`${JSON.stringify({ env: h.env, baseUrl: h.model.baseUrl, namespace: h.namespace })}\n`);

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const m = /^release (\S+)$/.exec(line.trim());
  if (m) h.model.release(m[1]!);
});
lines.on('close', () => void close());
