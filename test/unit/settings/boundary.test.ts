// Settings are parsed once, at the entry points, into typed objects per area (src/settings/): the
// modules below take those objects, never the Settings bag nor a variable read by name through
// setting(). This holds it: only the entry points and the area parsers may name either.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');

/** The entry points: they read the environment once and build the areas they pass down. */
const ENTRY_POINTS = [
  'src/environment.ts', // the table, readSettings and setting() themselves
  'src/settings/', // the area parsers
  'src/cli/', // the CLI's commands
  'src/worker.ts', // createWorker
  'src/connection.ts', // the client's edge (connectClient and its public shapes)
  'src/console-server/server.ts', // startConsole
  'src/acp/embedded.ts', // faheem acp's backend
];

/** What may not appear below the entry points: the Settings type from the table, or setting(). */
const SETTINGS_TYPE = /import[^;]*\bSettings\b[^;]*from '[./]*environment\.js'/;
const SETTING_CALL = /\bsetting\(/;

function sourceFiles(): string[] {
  return readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|cts|mts)$/.test(f))
    .map((f) => path.posix.join('src', f.split(path.sep).join('/')));
}

const allowed = (file: string, list: readonly string[]) => list.some((a) => (a.endsWith('/') ? file.startsWith(a) : file === a));

test('below the entry points, no module takes Settings or reads a variable by name', () => {
  const offenders = sourceFiles().filter((file) => {
    if (allowed(file, ENTRY_POINTS)) return false;
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    return SETTINGS_TYPE.test(text) || SETTING_CALL.test(text);
  });
  assert.deepEqual(offenders, [], 'take the area object (src/settings/) from the entry point instead');
});
