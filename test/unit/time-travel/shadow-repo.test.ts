// The checkpoint store against real git in temporary directories.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile, appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CheckpointStore, defaultForkDir, encodeRefPart } from '../../../src/time-travel/shadow-repo.js';

let root: string;
before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'faheem-shadow-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
async function setup(options: { maxFileBytes?: number; borrow?: boolean } = {}) {
  const dir = path.join(root, `t${n++}`);
  const home = path.join(dir, 'home');
  const ws = path.join(dir, 'ws');
  await mkdir(ws, { recursive: true });
  const store = new CheckpointStore({ home, env: process.env, ...options });
  return { dir, home, ws, store };
}

const userEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'u',
  GIT_AUTHOR_EMAIL: 'u@x',
  GIT_COMMITTER_NAME: 'u',
  GIT_COMMITTER_EMAIL: 'u@x',
  GIT_OPTIONAL_LOCKS: '0',
};
function ugit(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: userEnv, encoding: 'utf8' });
}

/** Everything of the user's repository that checkpoints must never change. */
async function userState(ws: string) {
  return {
    head: await readFile(path.join(ws, '.git', 'HEAD'), 'utf8'),
    refs: ugit(ws, 'for-each-ref', '--format=%(refname) %(objectname)'),
    index: (await readFile(path.join(ws, '.git', 'index'))).toString('base64'),
    // The user's own files (untracked ones are the agent's, and change with a restore).
    status: ugit(ws, 'status', '--porcelain', '--untracked-files=no'),
    objects: ugit(ws, 'count-objects', '-v'),
  };
}

async function files(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await files(dir, p)));
    else out.push(p);
  }
  return out.sort();
}

describe('shadow repository', () => {
  test('ten appends, restore to step 4 gives 40 lines; later files removed; the user repository untouched', async () => {
    const { ws, store } = await setup();
    ugit(ws, 'init', '-q', '-b', 'main');
    await writeFile(path.join(ws, 'README'), 'hello\n');
    ugit(ws, 'add', '-A');
    ugit(ws, 'commit', '-q', '-m', 'first');
    await writeFile(path.join(ws, 'dirty'), 'not committed\n');
    ugit(ws, 'add', 'dirty');
    await writeFile(path.join(ws, 'untracked'), 'u\n');
    const state0 = await userState(ws);
    const repo = await store.open(ws);
    const conv = 'conv.one/with:odd chars';
    const cps = [await repo.snapshot(conv, 0)];
    for (let step = 1; step <= 10; step++) {
      await appendFile(path.join(ws, 'log.txt'), Array.from({ length: 10 }, (_, i) => `step ${step} line ${i}\n`).join(''));
      if (step === 6) await writeFile(path.join(ws, 'later.txt'), 'added at 6\n');
      if (step === 7) await rm(path.join(ws, 'README'));
      cps.push(await repo.snapshot(conv, step));
    }
    assert.equal(cps[0]!.added, 3); // README, dirty, untracked
    assert.deepEqual([cps[1]!.added, cps[2]!.changed, cps[6]!.added, cps[7]!.deleted], [1, 1, 2 - 1, 1]);
    assert.equal(cps[5]!.parent, cps[4]!.commit);
    const listed = await repo.list(conv);
    assert.deepEqual(
      listed.map((c) => c.step),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    assert.equal(listed[6]!.added, 1);

    const state10 = await userState(ws);
    assert.deepEqual({ ...state10, status: '' }, { ...state0, status: '' });
    const r = await repo.restore(conv, cps[4]!.commit, 'r1');
    assert.equal((await readFile(path.join(ws, 'log.txt'), 'utf8')).split('\n').filter(Boolean).length, 40);
    assert.ok(!existsSync(path.join(ws, 'later.txt')));
    assert.equal(await readFile(path.join(ws, 'README'), 'utf8'), 'hello\n');
    assert.equal(r.step, 4);
    assert.equal(r.before.kind, 'before-rewind');
    assert.equal(r.before.tree, cps[10]!.tree);
    assert.deepEqual(await userState(ws), state0);
    // The steps after 4 are set aside; the next take of step 5 has step 4 as parent.
    assert.deepEqual(
      (await repo.list(conv)).filter((c) => c.kind === 'step').map((c) => c.step),
      [0, 1, 2, 3, 4],
    );
    await appendFile(path.join(ws, 'log.txt'), 'new step 5\n');
    const again = await repo.snapshot(conv, 5);
    assert.equal(again.parent, cps[4]!.commit);
    assert.equal(again.changed, 1);
    // Undo: back to just before the rewind.
    await repo.restore(conv, r.before.commit, 'undo');
    assert.equal((await readFile(path.join(ws, 'log.txt'), 'utf8')).split('\n').filter(Boolean).length, 100);
    assert.ok(existsSync(path.join(ws, 'later.txt')));
    assert.deepEqual(await userState(ws), state10);
  });

  test('a retried snapshot returns the same checkpoint; an unchanged step records no changes', async () => {
    const { ws, store } = await setup();
    await writeFile(path.join(ws, 'a'), '1');
    const repo = await store.open(ws);
    const a = await repo.snapshot('c', 0);
    const b = await repo.snapshot('c', 0);
    assert.equal(b.commit, a.commit);
    const c = await repo.snapshot('c', 1);
    assert.deepEqual([c.added, c.changed, c.deleted], [0, 0, 0]);
    assert.equal(c.tree, a.tree);
    // The crash case: the step ref was written but the head was not moved.
    execFileSync('git', ['update-ref', `refs/faheem/c/head`, a.commit], { env: { ...userEnv, GIT_DIR: repo.gitDir } });
    const d = await repo.snapshot('c', 1);
    assert.equal(d.commit, c.commit);
  });

  test('empty workspace, .gitignore honoured, big file skipped and never touched, ids encoded', async () => {
    const { ws, store } = await setup({ maxFileBytes: 1000 });
    const repo = await store.open(ws);
    const empty = await repo.snapshot('x', 0);
    assert.equal(empty.added, 0);
    await writeFile(path.join(ws, '.gitignore'), 'node_modules/\n*.log\n');
    await mkdir(path.join(ws, 'node_modules', 'p'), { recursive: true });
    await writeFile(path.join(ws, 'node_modules', 'p', 'i.js'), 'x');
    await writeFile(path.join(ws, 'debug.log'), 'log');
    await writeFile(path.join(ws, 'big.bin'), Buffer.alloc(5000, 1));
    await writeFile(path.join(ws, 'small'), 's');
    const one = await repo.snapshot('x', 1);
    assert.deepEqual(one.skipped, ['big.bin']);
    assert.equal(one.added, 2); // .gitignore, small
    const tree = execFileSync('git', ['ls-tree', '-r', '--name-only', one.commit], {
      env: { ...userEnv, GIT_DIR: repo.gitDir },
      encoding: 'utf8',
    });
    assert.deepEqual(tree.trim().split('\n'), ['.gitignore', 'small']);
    await writeFile(path.join(ws, 'big.bin'), Buffer.alloc(6000, 2));
    await writeFile(path.join(ws, 'small'), 'changed');
    await repo.snapshot('x', 2);
    await repo.restore('x', one.commit, 'r');
    assert.equal(await readFile(path.join(ws, 'small'), 'utf8'), 's');
    assert.equal((await readFile(path.join(ws, 'big.bin'))).length, 6000);
    assert.ok(existsSync(path.join(ws, 'debug.log')) && existsSync(path.join(ws, 'node_modules', 'p', 'i.js')));
    await repo.restore('x', empty.commit, 'r2');
    assert.deepEqual(await files(ws), ['big.bin', 'debug.log', 'node_modules/p/i.js']);
    assert.equal(encodeRefPart('a.b/c d'), 'a%2Eb%2Fc%20d');
    assert.match(defaultForkDir('/w/proj', 'new.id'), /^\/w\/proj-new_2Eid$/);
  });

  test('a big file that was small before is dropped from the checkpoint and kept by restore', async () => {
    const { ws, store } = await setup({ maxFileBytes: 100 });
    const repo = await store.open(ws);
    await writeFile(path.join(ws, 'grow'), 'small');
    const s0 = await repo.snapshot('g', 0);
    await writeFile(path.join(ws, 'grow'), Buffer.alloc(500, 7));
    const s1 = await repo.snapshot('g', 1);
    assert.deepEqual([s1.deleted, s1.skipped], [1, ['grow']]);
    const r = await repo.restore('g', s0.commit, 'r');
    assert.deepEqual(r.kept, ['grow']);
    assert.equal((await readFile(path.join(ws, 'grow'))).length, 500);
  });

  // Finding: "Rewind's restore follows a symlinked parent directory".
  test('restore replaces a linked directory (ignored, so not in the checkpoint) instead of writing through it', async () => {
    const { dir, ws, store } = await setup();
    const outside = path.join(dir, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'keep.txt'), 'outside\n');
    const repo = await store.open(ws);
    await mkdir(path.join(ws, 'd'));
    await writeFile(path.join(ws, 'd', 'f.txt'), 'in the workspace\n');
    const s0 = await repo.snapshot('l', 0);
    // A command (or a hostile repository) ignores d and puts a link to outside where it was.
    await rm(path.join(ws, 'd'), { recursive: true });
    await writeFile(path.join(ws, '.gitignore'), 'd\n');
    await symlink(outside, path.join(ws, 'd'));
    await repo.snapshot('l', 1);
    const r = await repo.restore('l', s0.commit, 'r');
    assert.deepEqual(await readdir(outside), ['keep.txt']);
    assert.equal(await readFile(path.join(outside, 'keep.txt'), 'utf8'), 'outside\n');
    assert.ok((await lstat(path.join(ws, 'd'))).isDirectory());
    assert.equal(await readFile(path.join(ws, 'd', 'f.txt'), 'utf8'), 'in the workspace\n');
    assert.equal(r.written, 1);
  });

  test('a restore killed half way leaves a journal; the re-run completes it', async () => {
    const { ws, store, home } = await setup();
    const repo = await store.open(ws);
    for (let i = 0; i < 20; i++) await writeFile(path.join(ws, `f${i}`), `v0 ${i}\n`);
    const s0 = await repo.snapshot('k', 0);
    for (let i = 0; i < 20; i++) await writeFile(path.join(ws, `f${i}`), `v1 ${i}\n`);
    await writeFile(path.join(ws, 'extra'), 'later');
    await repo.snapshot('k', 1);
    const child = fileURLToPath(new URL('./shadow-repo-child.ts', import.meta.url));
    const killed = spawnSync(process.execPath, ['--import', 'tsx', child, home, ws, 'k', s0.commit, 'rw'], {
      env: { ...process.env, FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES: '5' },
      encoding: 'utf8',
    });
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const contents = await Promise.all(Array.from({ length: 20 }, (_, i) => readFile(path.join(ws, `f${i}`), 'utf8')));
    assert.equal(contents.filter((c) => c.startsWith('v0')).length, 5, 'half restored');
    assert.ok(existsSync(path.join(repo.gitDir, 'restore-k.json')));
    const done = spawnSync(process.execPath, ['--import', 'tsx', child, home, ws, 'k', s0.commit, 'rw'], {
      env: process.env,
      encoding: 'utf8',
    });
    assert.equal(done.status, 0, done.stderr);
    const result = JSON.parse(done.stdout) as { before: { step: number; tree: string } };
    assert.equal(result.before.step, 1);
    for (let i = 0; i < 20; i++) assert.equal(await readFile(path.join(ws, `f${i}`), 'utf8'), `v0 ${i}\n`);
    assert.ok(!existsSync(path.join(ws, 'extra')));
    assert.ok(!existsSync(path.join(repo.gitDir, 'restore-k.json')));
    assert.deepEqual(
      (await files(ws)).filter((f) => f.startsWith('.faheem')),
      [],
    );
    // A retry after it finished changes nothing and reuses the same "before".
    const fresh = await new CheckpointStore({ home, env: process.env }).open(ws);
    const retry = await fresh.restore('k', s0.commit, 'rw');
    assert.equal(retry.before.tree, result.before.tree);
  });

  test('fork writes the tree into a new directory and leaves the workspace alone', async () => {
    const { ws, store, dir } = await setup();
    const repo = await store.open(ws);
    await mkdir(path.join(ws, 'src'));
    await writeFile(path.join(ws, 'src', 'a.ts'), 'a');
    await writeFile(path.join(ws, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const s0 = await repo.snapshot('f', 0);
    await writeFile(path.join(ws, 'src', 'a.ts'), 'changed');
    const target = path.join(dir, 'fork');
    const r = await repo.materialize(s0.commit, target);
    assert.equal(r.files, 2);
    assert.equal(await readFile(path.join(target, 'src', 'a.ts'), 'utf8'), 'a');
    assert.equal(await readFile(path.join(ws, 'src', 'a.ts'), 'utf8'), 'changed');
    assert.ok(((await import('node:fs')).statSync(path.join(target, 'run.sh')).mode & 0o100) !== 0);
    await assert.rejects(repo.materialize(s0.commit, target), /not empty/);
  });

  test('a workspace inside a repository: its subtree only, the repository untouched', async () => {
    const { dir, store } = await setup();
    const top = path.join(dir, 'top');
    await mkdir(path.join(top, 'pkg'), { recursive: true });
    ugit(top, 'init', '-q', '-b', 'main');
    await writeFile(path.join(top, 'pkg', 'x'), 'x');
    await writeFile(path.join(top, 'root-file'), 'r');
    ugit(top, 'add', '-A');
    ugit(top, 'commit', '-q', '-m', 'c');
    const state0 = await userState(top);
    const repo = await store.open(path.join(top, 'pkg'));
    const s = await repo.snapshot('sub', 0);
    assert.equal(s.added, 1);
    await writeFile(path.join(top, 'pkg', 'y'), 'y');
    await repo.snapshot('sub', 1);
    await repo.restore('sub', s.commit, 'r');
    assert.ok(!existsSync(path.join(top, 'pkg', 'y')));
    assert.deepEqual(await userState(top), state0);
  });

  test("borrowed objects survive the user's gc --prune=now after their branch is deleted", async () => {
    const { ws, store, dir } = await setup();
    ugit(ws, 'init', '-q', '-b', 'main');
    await writeFile(path.join(ws, 'base'), 'base');
    ugit(ws, 'add', '-A');
    ugit(ws, 'commit', '-q', '-m', 'base');
    ugit(ws, 'checkout', '-q', '-b', 'feature');
    for (let i = 0; i < 50; i++) await writeFile(path.join(ws, `feat${i}`), `feature file ${i}\n`);
    ugit(ws, 'add', '-A');
    ugit(ws, 'commit', '-q', '-m', 'feature');
    ugit(ws, 'gc', '-q'); // packed, as a real repository's objects mostly are
    const repo = await store.open(ws);
    const s0 = await repo.snapshot('b', 0);
    assert.equal(s0.added, 51);
    // Borrowed: nothing was written loose, the user's objects were copied as one pack.
    const counts = execFileSync('git', ['count-objects', '-v'], { env: { ...userEnv, GIT_DIR: repo.gitDir }, encoding: 'utf8' });
    assert.match(counts, /^count: 0$/m);
    assert.match(counts, /^packs: 1$/m);
    ugit(ws, 'checkout', '-q', 'main');
    ugit(ws, 'branch', '-q', '-D', 'feature');
    ugit(ws, 'reflog', 'expire', '--expire=now', '--all');
    ugit(ws, 'gc', '-q', '--prune=now');
    assert.throws(() => execFileSync('git', ['cat-file', '-e', `${s0.tree}`], { cwd: ws, env: userEnv, stdio: 'ignore' }));
    await repo.snapshot('b', 1);
    await repo.restore('b', s0.commit, 'r');
    for (let i = 0; i < 50; i++) assert.equal(await readFile(path.join(ws, `feat${i}`), 'utf8'), `feature file ${i}\n`);
    // The shadow repository is complete on its own.
    const fsck = spawnSync('git', ['fsck', '--connectivity-only', '--no-dangling'], {
      env: { ...userEnv, GIT_DIR: repo.gitDir },
      encoding: 'utf8',
    });
    assert.equal(fsck.status, 0, fsck.stderr);
    const forked = await repo.materialize(s0.commit, path.join(dir, 'forked'));
    assert.equal(forked.files, 51);
  });
});
