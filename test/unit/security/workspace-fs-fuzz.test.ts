// A property test of file_editor's paths: random trees of files, directories, links (inside,
// outside, dangling, loops) and FIFOs, random commands on random paths (`..`, absolute, link
// names, NUL). After every call: it returned (no FIFO blocked it), and the only thing that changed
// anywhere under the base directory is the file the path names lexically (plus parent directories
// it made), never something outside the workspace, never something reached through a link.
// Seeded (FUZZ_SEED=<n> to replay one run); the seed and the call are in every failure.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { editFile } from '../../../src/tools/file-editor.js';
import type { ToolResult } from '../../../src/core/types.js';

const SEED = Number(process.env.FUZZ_SEED ?? 40_2024);
const TREES = 40;
const CALLS_PER_TREE = 10;

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof prng>;

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Every entry under `dir`, links not followed: type, and content or link target. */
async function snapshot(dir: string, rel = '', out = new Map<string, string>()): Promise<Map<string, string>> {
  for (const name of await readdir(path.join(dir, rel))) {
    const p = rel ? `${rel}/${name}` : name;
    const full = path.join(dir, p);
    const st = await lstat(full);
    if (st.isSymbolicLink()) out.set(p, `link ${await readlink(full)}`);
    else if (st.isDirectory()) {
      out.set(p, 'dir');
      await snapshot(dir, p, out);
    } else if (st.isFile())
      out.set(
        p,
        `file ${st.mode.toString(8)} ${createHash('sha1')
          .update(await readFile(full))
          .digest('hex')}`,
      );
    else out.set(p, `special ${st.mode.toString(8)}`);
  }
  return out;
}

const NAMES = ['a', 'b', 'c', 'lnk', 'p'];

interface Tree {
  base: string;
  ws: string;
  /** The workspace as given to the tool (sometimes through a link). */
  given: string;
  outside: string;
  undoDir: string;
  /** Paths (relative to ws) of everything made, links and FIFOs included. */
  paths: string[];
  /** The regular files among them. */
  files: string[];
  fifos: string[];
  /** Paths of calls that changed something (undo_edit has something to undo there). */
  edited: string[];
}

async function makeTree(rng: Rng, n: number): Promise<Tree> {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), `fuzz-${n}-`)));
  const undoDir = await mkdtemp(path.join(tmpdir(), `fuzz-undo-${n}-`));
  dirs.push(base, undoDir);
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(ws);
  await mkdir(path.join(outside, 'od'), { recursive: true });
  await writeFile(path.join(outside, 'o.txt'), 'l0\nl1\nl2\n');
  await writeFile(path.join(outside, 'od', 'f.txt'), 'l0\nl1\n');
  let given = ws;
  if (rng.chance(0.3)) {
    given = path.join(base, 'alias');
    await symlink(ws, given);
  }
  const tree: Tree = { base, ws, given, outside, undoDir, paths: [], files: [], fifos: [], edited: [] };
  const linkTargets = () => [
    path.join(outside, 'o.txt'),
    path.join(outside, 'od'),
    path.join(outside, 'missing.txt'),
    '../outside/o.txt',
    path.join(ws, rng.pick(tree.paths.length ? tree.paths : ['a'])),
    rng.pick(NAMES),
    'nowhere/at/all',
    '.',
    '..',
  ];
  const fill = async (rel: string, depth: number) => {
    const count = 1 + rng.int(4);
    for (let i = 0; i < count; i++) {
      const name = rng.pick(NAMES) + (rng.chance(0.5) ? '' : String(i));
      const p = rel ? `${rel}/${name}` : name;
      if (tree.paths.includes(p)) continue;
      const full = path.join(ws, p);
      const kind = rng.int(10);
      if (kind < 4) {
        await writeFile(full, Array.from({ length: 1 + rng.int(4) }, (_, k) => `l${k}\n`).join(''));
        tree.files.push(p);
      } else if (kind < 6 && depth < 2) {
        await mkdir(full);
        tree.paths.push(p);
        await fill(p, depth + 1);
        continue;
      } else if (kind < 9) {
        // a link: outside, inside, dangling, or a loop (to itself, or to its own directory)
        const target = rng.chance(0.15) ? name : rng.pick(linkTargets());
        await symlink(target, full);
      } else {
        tree.fifos.push(full);
      }
      tree.paths.push(p);
    }
  };
  await fill('', 0);
  if (tree.fifos.length) execFileSync('mkfifo', tree.fifos);
  return tree;
}

/** A random path for a call: existing names (links and FIFOs included), new ones, `..`, absolute, NUL. */
function randomPath(rng: Rng, t: Tree): string {
  if (t.edited.length && rng.chance(0.3)) return rng.pick(t.edited);
  const existing = t.paths.length ? rng.pick(t.paths) : 'a';
  const file = t.files.length ? rng.pick(t.files) : existing;
  const choices = [
    () => existing,
    () => existing,
    () => file,
    () => file,
    () => file,
    () => path.join(t.given, file),
    () => `${existing}/${rng.pick(NAMES)}`,
    () => `${existing}/f.txt`,
    () => `new-${rng.int(3)}.txt`,
    () => `${rng.pick(NAMES)}/new/deep.txt`,
    () => `${existing}/../${rng.pick(NAMES)}`,
    () => `../outside/o.txt`,
    () => `../outside/new.txt`,
    () => `${rng.pick(NAMES)}/../../outside/od/f.txt`,
    () => path.join(t.outside, 'o.txt'),
    () => path.join(t.ws, existing),
    () => path.join(t.given, existing),
    () => path.join(t.given, '..', 'outside', 'o.txt'),
    () => `${existing}\0x`,
    () => '.',
  ];
  return rng.pick(choices)();
}

function randomArgs(rng: Rng, t: Tree): Record<string, unknown> {
  const p = randomPath(rng, t);
  switch (rng.int(5)) {
    case 0:
      return rng.chance(0.3) ? { command: 'view', path: p, view_range: [1, -1] } : { command: 'view', path: p };
    case 1:
      return { command: 'create', path: p, file_text: `created ${rng.int(1000)}\n` };
    case 2:
      return { command: 'str_replace', path: p, old_str: `l${rng.int(3)}\n`, new_str: `changed ${rng.int(1000)}\n` };
    case 3:
      return { command: 'insert', path: p, insert_line: rng.int(3), new_str: `inserted ${rng.int(1000)}` };
    default:
      return { command: 'undo_edit', path: p };
  }
}

/** The entries (relative to base) a call on `userPath` may change: what the path names lexically, and its parents in the workspace. */
function allowed(t: Tree, userPath: string): Set<string> {
  const ok = new Set<string>();
  if (userPath.includes('\0')) return ok;
  let abs = path.isAbsolute(userPath) ? path.resolve(userPath) : path.resolve(t.ws, userPath);
  const alias = path.relative(t.given, abs);
  if (t.given !== t.ws && !alias.startsWith('..') && !path.isAbsolute(alias)) abs = path.join(t.ws, alias);
  const rel = path.relative(t.ws, abs);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return ok;
  const parts = rel.split(path.sep);
  for (let i = 1; i <= parts.length; i++) ok.add(`ws/${parts.slice(0, i).join('/')}`);
  return ok;
}

/** Only a call that would never return reaches this deadline. */
const NEVER_MS = 60_000;

/**
 * The call's result. A call blocked on a FIFO (no writer ever opens one here) would never come back:
 * the deadline only turns that into a failure, generous for a loaded machine; the FIFOs are then
 * opened for writing so that the stuck open returns.
 */
async function returned(call: Promise<ToolResult>, t: Tree, what: string): Promise<ToolResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), NEVER_MS)));
  const r = await Promise.race([call, deadline]);
  clearTimeout(timer);
  if (r !== 'hung') return r;
  for (const f of t.fifos) {
    const w = await open(f, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
    await w?.close();
  }
  await call.catch(() => undefined);
  assert.fail(`${what}: did not come back while its FIFOs had no writer (blocked on one)`);
}

test(`file_editor on random trees: never outside, never through a link, never blocked (seed ${SEED})`, { timeout: 120_000 }, async () => {
  const rng = prng(SEED);
  let succeeded = 0;
  let wrote = 0;
  let calls = 0;
  for (let n = 0; n < TREES; n++) {
    const t = await makeTree(rng, n);
    const ctx = { workspace: t.given, undoDir: t.undoDir };
    for (let i = 0; i < CALLS_PER_TREE; i++) {
      const args = randomArgs(rng, t);
      const what = `seed ${SEED}, tree ${n} (${t.paths.join(' ')}), call ${i} ${JSON.stringify(args)}`;
      const before = await snapshot(t.base);
      const r = await returned(editFile(args, ctx), t, what);
      calls++;
      assert.equal(typeof r.content, 'string', what);
      const after = await snapshot(t.base);
      const may = allowed(t, args.path as string);
      for (const key of new Set([...before.keys(), ...after.keys()])) {
        if (before.get(key) === after.get(key)) continue;
        assert.ok(may.has(key), `${what}: ${key} changed (${before.get(key)} -> ${after.get(key)}): ${r.content}`);
        // What a call may change is never a link before or after, nor behind one.
        assert.ok(!before.get(key)?.startsWith('link') && !after.get(key)?.startsWith('link'), `${what}: link ${key} changed`);
        for (const parent of may) {
          if (key.startsWith(`${parent}/`)) assert.ok(!before.get(parent)?.startsWith('link'), `${what}: wrote through link ${parent}`);
        }
        wrote++;
      }
      if (!r.isError) succeeded++;
      if (!r.isError && args.command !== 'view') t.edited.push(args.path as string);
      if (process.env.FUZZ_VERBOSE)
        console.log(r.isError ? 'ERR' : 'OK ', JSON.stringify(args).slice(0, 90), '=>', r.content.split('\n')[0]);
    }
  }
  // The run is not vacuous: calls succeed and write.
  assert.ok(succeeded > calls / 8, `only ${succeeded} of ${calls} calls succeeded`);
  assert.ok(wrote > 20, `only ${wrote} entries were written`);
});
