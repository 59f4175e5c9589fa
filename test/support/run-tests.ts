// Runs the test layers: `node --import tsx test/support/run-tests.ts [unit] [workflow] [e2e] [all]`.
// One Temporal dev server is started for the whole run and handed to the test files
// (FAHEEM_TEST_TEMPORAL_ADDRESS): each file takes a namespace of its own on it (test/support/namespace.ts),
// so files can run side by side. Files that kill, restart or look at a server (a SQLite file, the
// Web UI) still start their own. `all` also runs any test/*.test.ts left at the top, so that a test
// added there is never skipped. Prints the time of each layer.
import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { startDevServer, type DevServer } from '../../src/server/dev-server.js';
import { freePort, ROOT } from './harness.js';

/** Files a layer runs at once: unit and workflow files are light; e2e files mostly wait on processes. */
const LAYERS = {
  unit: { dirs: ['test/unit'], concurrency: 2 },
  workflow: { dirs: ['test/workflow'], concurrency: 2 },
  e2e: { dirs: ['test/e2e', 'test'], concurrency: Number(process.env.FAHEEM_E2E_CONCURRENCY) || 3 },
} as const;
type Layer = keyof typeof LAYERS;

function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => path.join(dir, e.name))
    .sort();
}

// The slowest files first, so that they do not end the run alone (measured on 2 cores; others in name order).
const SLOW_FIRST = ['long-conversation', 'recovery', 'sandbox', 'encryption', 'cli', 'workspace-host', 'clear-answers', 'package'];
function order(files: string[]): string[] {
  const rank = (f: string) => {
    const i = SLOW_FIRST.indexOf(path.basename(f, '.test.ts'));
    return i < 0 ? SLOW_FIRST.length : i;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

async function main(): Promise<number> {
  const asked = process.argv.slice(2);
  const layers: Layer[] = asked.length === 0 || asked.includes('all') ? ['unit', 'workflow', 'e2e'] : (asked as Layer[]);
  for (const l of layers) if (!(l in LAYERS)) throw new Error(`unknown layer ${l}: give unit, workflow, e2e or all`);

  let server: DevServer | undefined;
  const env: Record<string, string> = {};
  if (layers.some((l) => l !== 'unit') && !process.env.FAHEEM_RECORD_HISTORIES) {
    const t0 = Date.now();
    server = await startDevServer({ port: await freePort(), headless: true });
    env.FAHEEM_TEST_TEMPORAL_ADDRESS = server.address;
    console.log(`== shared Temporal dev server on ${server.address} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  const times: string[] = [];
  let failed = false;
  try {
    for (const layer of layers) {
      const { dirs, concurrency } = LAYERS[layer];
      const files = order(dirs.flatMap(testFiles));
      if (files.length === 0) continue;
      console.log(`== test:${layer}: ${files.length} files, ${concurrency} at a time`);
      const t0 = Date.now();
      const r = await execa(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files], {
        cwd: ROOT,
        env,
        stdio: 'inherit',
        reject: false,
      });
      const took = `${layer} ${((Date.now() - t0) / 1000).toFixed(1)} s${r.exitCode === 0 ? '' : ` (failed, exit ${r.exitCode})`}`;
      times.push(took);
      console.log(`== test:${took}`);
      if (r.exitCode !== 0) failed = true;
    }
  } finally {
    await server?.stop();
  }
  console.log(`== test times: ${times.join(', ')}`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
