// Which unit files run in a process of their own: those that wait on real processes, git or timers
// (seconds each), so that they overlap; the rest share one process (unit-light.ts).
// test/unit mirrors src/ (docs/testing.md), so its files are found in its subfolders too.
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** Unit test files (paths relative to test/unit/, with `/`) that run as files of their own. */
export const HEAVY_UNIT_FILES = [
  'time-travel/shadow-repo.test.ts',
  'tools/terminal.test.ts',
  'hooks/run-hook.test.ts',
  'sandbox/sandbox.test.ts',
  'models/client.test.ts',
  'models/fallback.test.ts',
  'time-travel/activity-support.test.ts',
  'time-travel/watch.test.ts',
  'repo/dev-server.test.ts',
  'time-travel/objects.test.ts',
  'worker/compile-cache.test.ts',
  'pool/shipping.test.ts',
  'pool/pool.test.ts',
];

/** Every test file under `unitDir` (test/unit), in its subfolders too: paths relative to it, with `/`, sorted. */
export function unitTestFiles(unitDir: string): string[] {
  return readdirSync(unitDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}
