// The workspace watcher and the checkpoint that runs no git when nothing changed, against real
// files, real inotify and real git in temporary directories.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CheckpointStore } from '../../../src/time-travel/shadow-repo.js';
import { WorkspaceWatcher } from '../../../src/time-travel/watch.js';

let root: string;
before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'faheem-watch-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
async function dirs() {
  const dir = path.join(root, `t${n++}`);
  const ws = path.join(dir, 'ws');
  await mkdir(ws, { recursive: true });
  return { dir, ws, home: path.join(dir, 'home') };
}
const sh = (cwd: string, script: string) => assert.equal(spawnSync('sh', ['-c', script], { cwd }).status, 0);

describe('workspace watcher', () => {
  test('the generation moves for a change anywhere, a directory made by a shell included, and stays otherwise', async () => {
    const { dir, ws } = await dirs();
    await mkdir(path.join(ws, 'old', 'deep'), { recursive: true });
    const w = new WorkspaceWatcher(ws, path.join(dir, 'own'));
    try {
      const g0 = await w.settle();
      assert.notEqual(g0, undefined);
      assert.equal(await w.settle(), g0, 'nothing happened: same generation');
      sh(ws, 'echo x > old/deep/f');
      const g1 = await w.settle();
      assert.ok(g1! > g0!, 'a write two levels down is seen');
      sh(ws, 'mkdir -p new/a/b');
      const g2 = await w.settle();
      assert.ok(g2! > g1!);
      // The new directories are watched from their parent's event on.
      sh(ws, 'echo y > new/a/b/g');
      const g3 = await w.settle();
      assert.ok(g3! > g2!, 'a write into a directory made after the start is seen');
      sh(ws, 'rm -rf new && mkdir -p new/a/b');
      await w.settle();
      const g4 = await w.settle();
      sh(ws, 'echo z > new/a/b/h');
      assert.ok((await w.settle())! > g4!, 'a directory removed and made again is watched again');
      sh(ws, 'cat old/deep/f > /dev/null; ls -R > /dev/null');
      const g5 = await w.settle();
      assert.equal(await w.settle(), g5, 'reading changes nothing');
    } finally {
      w.close();
    }
  });

  test('too many directories: unreliable, never vouches', async () => {
    const { dir, ws } = await dirs();
    sh(ws, 'mkdir -p a b c d');
    const w = new WorkspaceWatcher(ws, path.join(dir, 'own'), 3);
    try {
      assert.equal(w.reliable, false);
      assert.equal(await w.settle(), undefined);
    } finally {
      w.close();
    }
  });
});

describe('checkpoints with the watcher', () => {
  test('an unchanged step runs no git and records the head; a shell-made change is taken in full', async () => {
    const { ws, home } = await dirs();
    await writeFile(path.join(ws, 'a'), '1');
    const store = new CheckpointStore({ home, env: process.env });
    try {
      const repo = await store.open(ws);
      const c0 = await repo.snapshot('c', 0);
      const c1 = await repo.snapshot('c', 1);
      assert.equal(repo.unchangedSnapshots, 1);
      assert.equal(c1.commit, c0.commit);
      assert.deepEqual([c1.added, c1.changed, c1.deleted], [0, 0, 0]);
      sh(ws, 'mkdir -p d/e && echo hi > d/e/f && echo 2 > a');
      const c2 = await repo.snapshot('c', 2);
      assert.notEqual(c2.commit, c0.commit);
      assert.deepEqual([c2.added, c2.changed, c2.deleted], [1, 1, 0]);
      const c3 = await repo.snapshot('c', 3);
      assert.equal(c3.commit, c2.commit);
      sh(ws, 'echo more >> d/e/f');
      const c4 = await repo.snapshot('c', 4);
      assert.deepEqual([c4.added, c4.changed, c4.deleted], [0, 1, 0]);
      assert.equal(repo.unchangedSnapshots, 2);
      sh(ws, 'rm a && echo n > new1 && echo n > d/new2');
      const c4b = await repo.snapshot('c', 40);
      assert.deepEqual([c4b.added, c4b.changed, c4b.deleted], [2, 0, 1], 'counts from the tagged file list');
      assert.equal(c4b.parent, c4.commit);
      // Another conversation on the same workspace has its own head.
      const o0 = await repo.snapshot('other', 0);
      assert.equal(o0.tree, c4b.tree);
      assert.equal((await repo.snapshot('c', 5)).commit, c4b.commit, 'the other conversation changed no file');
      // A rewind writes files and moves the head: the next step is taken in full.
      await repo.restore('c', c0.commit, 'r1');
      const c6 = await repo.snapshot('c', 6);
      assert.equal(c6.tree, c0.tree);
      assert.notEqual(c6.commit, c4b.commit);
    } finally {
      await store.close();
    }
  });

  test('the head moved by another process: taken in full', async () => {
    const { ws, home } = await dirs();
    await writeFile(path.join(ws, 'a'), '1');
    const store = new CheckpointStore({ home, env: process.env });
    const other = new CheckpointStore({ home, env: process.env, watch: false });
    try {
      const repo = await store.open(ws);
      await repo.snapshot('c', 0);
      const theirs = await (await other.open(ws)).snapshot('c', 1);
      const mine = await repo.snapshot('c', 2);
      assert.equal(repo.unchangedSnapshots, 0);
      assert.equal(mine.parent, theirs.commit);
    } finally {
      await store.close();
    }
  });
});

test('a lock left by a process killed mid-checkpoint does not block the next one for good', async () => {
  const { ws, home } = await dirs();
  await writeFile(path.join(ws, 'a'), '1');
  const store = new CheckpointStore({ home, env: process.env });
  try {
    const repo = await store.open(ws);
    await repo.snapshot('c', 0);
    const lock = path.join(repo.gitDir, 'index-c.lock');
    await writeFile(lock, '');
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    await writeFile(path.join(ws, 'a'), '2');
    const c1 = await repo.snapshot('c', 1);
    assert.equal(c1.changed, 1);
  } finally {
    await store.close();
  }
});
