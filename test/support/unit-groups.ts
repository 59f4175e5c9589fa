// Which unit files run in a process of their own: those that wait on real processes, git or timers
// (seconds each), so that they overlap; the rest share one process (unit-light.ts).
// test/unit mirrors src/ (docs/testing.md), so its files are found in its subfolders too.
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** Unit test files (paths relative to test/unit/, with `/`) that run as files of their own. */
export const HEAVY_UNIT_FILES = [
  'checkpoints/shadow-repo.test.ts',
  'tools/terminal.test.ts',
  'hooks/run-hook.test.ts',
  'tools/sandbox.test.ts',
  'llm/client.test.ts',
  'llm/fallback.test.ts',
  'checkpoints/activity-support.test.ts',
  'checkpoints/watch.test.ts',
  'repo/dev-server.test.ts',
  'checkpoints/objects.test.ts',
  'compile-cache.test.ts',
  'workspaces/shipping.test.ts',
  'workspaces/pool.test.ts',
];

/** Every test file under `unitDir` (test/unit), in its subfolders too: paths relative to it, with `/`, sorted. */
export function unitTestFiles(unitDir: string): string[] {
  return readdirSync(unitDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}
