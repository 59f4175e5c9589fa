// The light unit files, run in one process: each is pure logic and takes milliseconds, so a
// process (and a TypeScript loader) per file would cost more than its tests. The files that wait on
// processes, git or timers run as files of their own, side by side (HEAVY_UNIT_FILES).
// run-tests.ts hands this file to `node --test` in place of the light files; a failure still names
// its test (and the test's `location` its file).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { HEAVY_UNIT_FILES } from './unit-groups.js';

const dir = path.join(import.meta.dirname, '..', 'unit');
for (const name of readdirSync(dir).sort()) {
  if (!name.endsWith('.test.ts') || HEAVY_UNIT_FILES.includes(name)) continue;
  await import(pathToFileURL(path.join(dir, name)).href);
}
