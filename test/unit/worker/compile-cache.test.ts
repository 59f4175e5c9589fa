// The module compile cache of the `faheem` command (src/worker/compile-cache.ts, bin/faheem.js): on a
// runtime that has it (Node 22.1+), the first start fills <faheem home>/compile-cache; on Node 20, or
// when the folder cannot be made, the command runs as before.
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import nodeModule from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { compileCacheSettings, enableCompileCache } from '../../../src/worker/compile-cache.js';
import { ROOT } from '../../support/harness.js';

const hasCompileCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';
const homes: string[] = [];
after(() => Promise.all(homes.map((h) => rm(h, { recursive: true, force: true }))));

async function home(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'faheem-cc-'));
  homes.push(dir);
  return dir;
}

/** `faheem --help` with this home, in an environment without the CI's own compile-cache settings. */
async function help(faheemHome: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, FAHEEM_HOME: faheemHome };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  return execa(process.execPath, [path.join(ROOT, 'bin/faheem.js'), '--help'], { env, extendEnv: false, reject: false });
}

test('NODE_DISABLE_COMPILE_CACHE leaves it off and makes no folder', async () => {
  const h = await home();
  assert.equal(enableCompileCache(compileCacheSettings({ FAHEEM_HOME: h, NODE_DISABLE_COMPILE_CACHE: '1' })), undefined);
  assert.equal(existsSync(path.join(h, 'compile-cache')), false);
});

test(`faheem --help fills the cache under the faheem home where the runtime has one (${process.version})`, async () => {
  const h = await home();
  const r = await help(h);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.match(r.stdout, /Usage: faheem/);
  const dir = path.join(h, 'compile-cache');
  if (!hasCompileCache) {
    assert.equal(existsSync(dir), false, 'Node 20 has no compile cache: nothing is made');
    return;
  }
  // Node keeps one folder per version and a file per compiled module.
  const versioned = (await readdir(dir)).find((name) => name.startsWith(`${process.version}-`));
  assert.ok(versioned, `a folder for ${process.version} in ${dir}`);
  const entries = await readdir(path.join(dir, versioned));
  assert.ok(entries.length > 50, `the CLI's modules are cached (${entries.length} entries)`);
});

test('a faheem home where the folder cannot be made: the command runs without the cache', async () => {
  const file = path.join(await home(), 'not-a-dir');
  await writeFile(file, 'x');
  const r = await help(file);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.match(r.stdout, /Usage: faheem/);
  assert.equal(r.stderr, '');
});
