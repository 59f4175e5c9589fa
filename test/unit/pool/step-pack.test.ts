// src/pool/step-pack.ts: a step's pack written without git holds exactly the objects git
// would ship for it, git reads it, and whatever the walk cannot read loose is left to git.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { baseGitEnv } from '../../../src/time-travel/git.js';
import { CheckpointStore, type ShadowRepo } from '../../../src/time-travel/shadow-repo.js';
import { entryHeader, objectsSince, writePack } from '../../../src/pool/step-pack.js';
import { packSince } from '../../../src/pool/shipping.js';

const env = baseGitEnv(process.env);
let root: string;
let workspace: string;
let repo: ShadowRepo;
const git = (gitDir: string, args: string[], input?: Buffer | string) =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { env, ...(input !== undefined ? { input } : {}) })
    .toString('utf8')
    .trim();
const sorted = (lines: string) => lines.split('\n').filter(Boolean).sort();

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'faheem-step-pack-'));
  workspace = path.join(root, 'ws');
  await mkdir(path.join(workspace, 'src', 'deep'), { recursive: true });
  await writeFile(path.join(workspace, 'README'), 'hello\n');
  await writeFile(path.join(workspace, 'src', 'a.ts'), 'export const a = 1;\n');
  await writeFile(path.join(workspace, 'src', 'deep', 'b.ts'), 'export const b = 2;\n');
  await writeFile(path.join(workspace, 'gone.txt'), 'soon gone\n');
  repo = await new CheckpointStore({ home: path.join(root, 'home'), watch: false, env: process.env }).open(workspace);
});
after(() => rm(root, { recursive: true, force: true }));

/** A repository holding what was shipped up to `commit` (a full pack of it, as a restore has). */
async function receiver(name: string, commit: string): Promise<string> {
  const gitDir = path.join(root, name);
  execFileSync('git', ['init', '-q', '--bare', gitDir], { env });
  git(gitDir, ['index-pack', '--stdin', '--fix-thin'], await packSince(repo.gitDir, commit, undefined, env));
  return gitDir;
}

test('a step that follows the last shipped one: the objects git would ship, and git reads the pack', async () => {
  const first = await repo.snapshot('c', 0);
  await writeFile(path.join(workspace, 'src', 'deep', 'b.ts'), 'export const b = 3;\n'); // changed, two trees down
  await writeFile(path.join(workspace, 'src', 'new.ts'), 'export {};\n'); // added
  await writeFile(path.join(workspace, 'README'), 'export const a = 1;\n'); // now the same bytes as a.ts: an old blob
  await rm(path.join(workspace, 'gone.txt')); // deleted
  const second = await repo.snapshot('c', 1);

  const objects = await objectsSince(repo.gitDir, second.commit, first.commit);
  assert.ok(objects, 'every object it needs is loose');
  const theirs = sorted(git(repo.gitDir, ['rev-list', '--objects', '--no-object-names', second.commit, `^${first.commit}`]));
  const ours = objects.map((o) => execFileSync('git', ['hash-object', '-t', o.type, '--stdin'], { input: o.body, env }).toString().trim());
  for (const id of theirs) assert.ok(ours.includes(id), `${id}: the commit, the trees along the changed paths and the new blobs`);
  // README's new bytes are a.ts's: a blob shipped before, shipped again (harmless, and rare).
  const again = ours.filter((id) => !theirs.includes(id));
  assert.deepEqual(again, [git(repo.gitDir, ['rev-parse', `${first.commit}:src/a.ts`])]);

  const there = await receiver('there.git', first.commit);
  const pack = await writePack(objects);
  git(there, ['index-pack', '--stdin', '--fix-thin'], pack);
  git(there, ['fsck', '--no-dangling', second.commit]);
  assert.equal(git(there, ['cat-file', 'blob', `${second.commit}:src/deep/b.ts`]), 'export const b = 3;');
  assert.equal(git(there, ['rev-parse', `${second.commit}^{tree}`]), second.tree);
});

test('what the walk cannot read loose, or a commit that does not follow, is left to git, which ships it whole', async () => {
  const head = await repo.snapshot('c', 2);
  await writeFile(path.join(workspace, 'src', 'deep', 'b.ts'), 'export const b = 4;\n');
  const next = await repo.snapshot('c', 3);
  assert.equal(await objectsSince(repo.gitDir, next.commit, (await repo.snapshot('c', 0)).commit), undefined, 'not the parent');

  // A restore (or adopting the user's objects) leaves them packed.
  git(repo.gitDir, ['repack', '-a', '-d', '-q']);
  git(repo.gitDir, ['prune-packed']);
  assert.equal(await objectsSince(repo.gitDir, next.commit, head.commit), undefined, 'packed');
  const there = await receiver('again.git', head.commit);
  git(there, ['index-pack', '--stdin', '--fix-thin'], await packSince(repo.gitDir, next.commit, head.commit, env));
  git(there, ['fsck', '--no-dangling', next.commit]);
  assert.equal(git(there, ['cat-file', 'blob', `${next.commit}:src/deep/b.ts`]), 'export const b = 4;');
});

test("an entry's header: the type and size in 4 bits, then 7 bits a byte", () => {
  assert.deepEqual([...entryHeader(3, 15)], [0x3f]);
  assert.deepEqual([...entryHeader(3, 16)], [0xb0, 0x01]);
  assert.deepEqual([...entryHeader(1, 374)], [0x96, 0x17]);
  // Past 32 bits the size still encodes (no bitwise overflow).
  assert.deepEqual([...entryHeader(3, 2 ** 33)], [0xb0, 0x80, 0x80, 0x80, 0x80, 0x02]);
});
