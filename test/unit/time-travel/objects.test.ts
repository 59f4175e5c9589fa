// src/time-travel/objects.ts: a commit object written without git is the one git would write, and
// git reads it back (and fsck finds nothing wrong with the repository).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { baseGitEnv } from '../../../src/time-travel/git.js';
import { CheckpointStore } from '../../../src/time-travel/shadow-repo.js';
import { CHECKPOINT_IDENT, commitBody, objectId, usesSha1, writeObject } from '../../../src/time-travel/objects.js';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
let root: string;
let gitDir: string;
// git as checkpoints run it: none of the developer's GIT_* variables or global config.
const env = baseGitEnv(process.env);
const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', env }).trim();

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'faheem-objects-'));
  gitDir = path.join(root, 'r.git');
  execFileSync('git', ['init', '--bare', '-q', gitDir], { env });
});
after(async () => rm(root, { recursive: true, force: true }));

test("the id is git's own for the same bytes", () => {
  const body = commitBody(EMPTY_TREE, [], 'faheem checkpoint: step 0\n\nFaheem-Step: 0\n', 1_700_000_000);
  const theirs = execFileSync('git', ['hash-object', '-t', 'commit', '--stdin'], { input: body, encoding: 'utf8', env }).trim();
  assert.equal(objectId('commit', Buffer.from(body)), theirs);
});

test('the same commit `git commit-tree` writes, byte for byte (same tree, parent, message, time)', async () => {
  const message = 'faheem checkpoint: step 2\n\nFaheem-Step: 2\n';
  await writeObject(gitDir, 'tree', Buffer.alloc(0));
  const parent = await writeObject(gitDir, 'commit', Buffer.from(commitBody(EMPTY_TREE, [], 'p\n', 1_700_000_000)));
  const date = '1700000200 +0000';
  const theirs = execFileSync('git', ['--git-dir', gitDir, 'commit-tree', EMPTY_TREE, '-p', parent, '-F', '-'], {
    input: message,
    encoding: 'utf8',
    env: { ...env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
  }).trim();
  assert.equal(await writeObject(gitDir, 'commit', Buffer.from(commitBody(EMPTY_TREE, [parent], message, 1_700_000_200))), theirs);
});

test('git reads a commit written here, with its parent, message and time; fsck is clean', async () => {
  // The tree it names (write-tree has written it when a checkpoint is taken): the empty one.
  assert.equal(await writeObject(gitDir, 'tree', Buffer.alloc(0)), EMPTY_TREE);
  const first = await writeObject(gitDir, 'commit', Buffer.from(commitBody(EMPTY_TREE, [], 'first\n', 1_700_000_000)));
  const message = 'faheem checkpoint: step 1\n\nFaheem-Conversation: "conv-é"\n';
  const second = await writeObject(gitDir, 'commit', Buffer.from(commitBody(EMPTY_TREE, [first], message, 1_700_000_100)));
  assert.equal(git('cat-file', '-t', second), 'commit');
  assert.equal(git('rev-parse', `${second}^`), first);
  assert.equal(git('log', '-1', '--format=%B', second), message.trim());
  assert.equal(git('log', '-1', '--format=%ct %an <%ae>', second), `1700000100 ${CHECKPOINT_IDENT}`);
  // Written twice: the same id, no error.
  assert.equal(await writeObject(gitDir, 'commit', Buffer.from(commitBody(EMPTY_TREE, [first], message, 1_700_000_100))), second);
  execFileSync('git', ['--git-dir', gitDir, 'update-ref', 'refs/heads/main', second], { env });
  execFileSync('git', ['--git-dir', gitDir, 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe', env });
});

test('the identity is the one git is given for checkpoints', () => {
  const env = baseGitEnv({});
  assert.equal(CHECKPOINT_IDENT, `${env.GIT_AUTHOR_NAME} <${env.GIT_AUTHOR_EMAIL}>`);
  assert.equal(CHECKPOINT_IDENT, `${env.GIT_COMMITTER_NAME} <${env.GIT_COMMITTER_EMAIL}>`);
});

test('only SHA-1 repositories are written here', async () => {
  assert.equal(await usesSha1(gitDir), true);
  const other = path.join(root, 'sha256');
  await mkdir(other);
  await writeFile(path.join(other, 'config'), '[core]\n\tbare = true\n[extensions]\n\tobjectFormat = sha256\n');
  assert.equal(await usesSha1(other), false);
});

test("a new workspace's first checkpoint counts what diff-tree would: nested files, a symlink, a gitlink; not big or ignored files", async () => {
  const ws = path.join(root, 'ws');
  await mkdir(path.join(ws, 'a', 'b'), { recursive: true });
  await writeFile(path.join(ws, 'a', 'b', 'deep.txt'), 'x');
  await writeFile(path.join(ws, 'tab\tname é.txt'), 'x');
  await writeFile(path.join(ws, '.gitignore'), 'ignored.log\n');
  await writeFile(path.join(ws, 'ignored.log'), 'x');
  await writeFile(path.join(ws, 'big.bin'), Buffer.alloc(2_000));
  await symlink('a/b/deep.txt', path.join(ws, 'link'));
  await mkdir(path.join(ws, 'sub'));
  const sub = { cwd: path.join(ws, 'sub'), env: { ...env, GIT_DIR: undefined } };
  execFileSync('git', ['init', '-q'], sub);
  await writeFile(path.join(ws, 'sub', 'f'), 'x');
  execFileSync('git', ['add', 'f'], sub);
  execFileSync('git', ['commit', '-qm', 'x'], sub);
  const store = new CheckpointStore({ home: path.join(root, 'home'), env: process.env, maxFileBytes: 1_000 });
  try {
    const info = await (await store.open(ws)).snapshot('c', 0);
    const shadow = path.join(
      root,
      'home',
      'checkpoints',
      (await readdir(path.join(root, 'home', 'checkpoints'))).find((f) => f.endsWith('.git'))!,
    );
    const listed = execFileSync('git', ['--git-dir', shadow, 'diff-tree', '-r', '--name-status', EMPTY_TREE, info.tree], {
      encoding: 'utf8',
      env,
    })
      .trim()
      .split('\n');
    assert.equal(listed.length, 5, listed.join('\n')); // .gitignore, deep.txt, the tab name, link, sub; no big.bin or ignored.log
    assert.deepEqual([info.added, info.changed, info.deleted, info.skipped], [listed.length, 0, 0, ['big.bin']]);
    execFileSync('git', ['--git-dir', shadow, 'fsck', '--no-dangling'], { stdio: 'pipe', env });
  } finally {
    await store.close();
  }
});

test('a shadow repository named by SHA-256 (made by git elsewhere) gets its commits from git commit-tree', async () => {
  const ws = path.join(root, 'ws256');
  await mkdir(ws);
  await writeFile(path.join(ws, 'one.txt'), '1');
  const home = path.join(root, 'home256');
  const first = new CheckpointStore({ home, env: process.env });
  await first.open(ws); // makes the shadow repository (SHA-1); replaced below by a SHA-256 one
  await first.close();
  const dir = path.join(home, 'checkpoints');
  const shadow = path.join(
    dir,
    (await readdir(dir)).find((f) => f.endsWith('.git'))!,
  );
  await rm(shadow, { recursive: true, force: true });
  execFileSync('git', ['init', '--bare', '-q', '--object-format=sha256', shadow], { env });
  const store = new CheckpointStore({ home, env: process.env });
  try {
    const repo = await store.open(ws);
    const zero = await repo.snapshot('c', 0);
    await writeFile(path.join(ws, 'two.txt'), '2');
    const one = await repo.snapshot('c', 1);
    assert.match(one.commit, /^[0-9a-f]{64}$/);
    assert.equal(one.parent, zero.commit);
    assert.deepEqual([zero.added, one.added], [1, 1]);
  } finally {
    await store.close();
  }
});
