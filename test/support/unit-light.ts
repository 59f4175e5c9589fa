// The light unit files, run in one process: each is pure logic and takes milliseconds, so a
// process (and a TypeScript loader) per file would cost more than its tests. The files that wait on
// processes, git or timers run as files of their own, side by side (HEAVY_UNIT_FILES).
// run-tests.ts hands this file to `node --test` in place of the light files; a failure still names
// its test (and the test's `location` its file).
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { HEAVY_UNIT_FILES, unitTestFiles } from './unit-groups.js';

// The files' tests and hooks all hang off this process's root test, which starts running as soon as
// the first file's tests are registered, while later files are still being imported. A first test
// that lasts until every file is imported keeps the root from finishing early (and running the
// `after` hooks registered so far) in a gap between two slow imports.
let imported!: () => void;
const everyFileImported = new Promise<void>((resolve) => (imported = resolve));
test('(the light unit files are imported)', () => everyFileImported);

const dir = path.join(import.meta.dirname, '..', 'unit');
for (const file of unitTestFiles(dir)) {
  if (HEAVY_UNIT_FILES.includes(file)) continue;
  await import(pathToFileURL(path.join(dir, file)).href);
}
imported();
