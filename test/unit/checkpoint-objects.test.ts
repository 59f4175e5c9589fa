// src/checkpoints/objects.ts: a commit object written without git is the one git would write, and
// git reads it back (and fsck finds nothing wrong with the repository).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { baseGitEnv } from '../../src/checkpoints/git.js';
import { CHECKPOINT_IDENT, commitBody, objectId, usesSha1, writeObject } from '../../src/checkpoints/objects.js';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
let root: string;
let gitDir: string;
const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8' }).trim();

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'faheem-objects-'));
  gitDir = path.join(root, 'r.git');
  execFileSync('git', ['init', '--bare', '-q', gitDir]);
});
after(async () => rm(root, { recursive: true, force: true }));

test("the id is git's own for the same bytes", () => {
  const body = commitBody(EMPTY_TREE, [], 'faheem checkpoint: step 0\n\nFaheem-Step: 0\n', 1_700_000_000);
  const theirs = execFileSync('git', ['hash-object', '-t', 'commit', '--stdin'], { input: body, encoding: 'utf8' }).trim();
  assert.equal(objectId('commit', Buffer.from(body)), theirs);
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
  execFileSync('git', ['--git-dir', gitDir, 'update-ref', 'refs/heads/main', second]);
  execFileSync('git', ['--git-dir', gitDir, 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });
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
