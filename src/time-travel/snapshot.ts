// A checkpoint of a workspace: what `git add -A` takes in it (the conversation's own index, the
// user's objects borrowed for a first one), as a commit of the shadow repository (shadow-repo.ts
// says what a checkpoint holds and which refs name it).
import { existsSync } from 'node:fs';
import { copyFile, lstat, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { baseGitEnv, git, splitZ } from './git.js';
import { commitBody, usesSha1, writeObject } from './objects.js';
import type { RepoCore } from './repo-core.js';
import type { CheckpointInfo, CheckpointKind } from './types.js';

/** The empty tree's id: the "previous" tree of a conversation's first checkpoint. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
/** At most this many skipped paths are recorded in a checkpoint. */
const SKIPPED_LISTED = 100;

export async function take(
  repo: RepoCore,
  conversationId: string,
  step: number,
  kind: CheckpointKind,
  refName: string,
): Promise<CheckpointInfo> {
  // Nothing changed since the head was taken (the watcher vouches, and no other process moved
  // the head meanwhile): the head is this step's checkpoint too, and no git runs.
  const gen = repo.watcher ? await repo.watcher.settle() : undefined;
  const seen = repo.clean.get(conversationId);
  if (kind === 'step' && gen !== undefined && seen && seen.gen === gen && (await repo.headRef(conversationId)) === seen.head) {
    repo.unchangedSnapshots++;
    return { ...seen.info, added: 0, changed: 0, deleted: 0 };
  }
  repo.clean.delete(conversationId);
  const info = await takeWithGit(repo, conversationId, step, kind, refName);
  if (kind === 'step' && gen !== undefined) repo.clean.set(conversationId, { gen, head: info.commit, info });
  return info;
}

async function takeWithGit(
  repo: RepoCore,
  conversationId: string,
  step: number,
  kind: CheckpointKind,
  refName: string,
): Promise<CheckpointInfo> {
  const ns = repo.ns(conversationId);
  const index = repo.indexFile(conversationId);
  const [head, existing] = await repo.readRefs([`${ns}/head`, refName]);
  // A retry of a step's take finds it already written. Not a mid-step one: the same step may
  // hibernate again (on the same host, after more work), and must take the workspace as it is then.
  if (kind !== 'mid-step' && existing && existing === head) return repo.info(existing);
  await repo.clearStaleLocks(index, [`${ns}/head`, refName]);
  // The index the last checkpoint (or restore) of this conversation left describes its head.
  const indexWasHead = existsSync(index);
  const alternates = indexWasHead ? undefined : await prime(repo, conversationId, index);
  // Nothing to start from (a new workspace's first checkpoint): the index is empty.
  const indexEmpty = !indexWasHead && !existsSync(index);
  try {
    return await write(repo, conversationId, step, kind, refName, { index, head, existing, alternates, indexWasHead, indexEmpty });
  } catch (err) {
    if (!alternates) throw err;
    // The borrowed objects went away meanwhile (the user's gc): take it again on our own.
    await rm(index, { force: true });
    return write(repo, conversationId, step, kind, refName, {
      index,
      head,
      existing,
      alternates: undefined,
      indexWasHead: false,
      indexEmpty: true,
    });
  }
}

async function write(
  repo: RepoCore,
  conversationId: string,
  step: number,
  kind: CheckpointKind,
  refName: string,
  at: {
    index: string;
    head: string | undefined;
    existing: string | undefined;
    alternates: string | undefined;
    indexWasHead: boolean;
    indexEmpty: boolean;
  },
): Promise<CheckpointInfo> {
  const { index, head, alternates } = at;
  const o = { index, ...(alternates ? { alternates } : {}) };
  // New and changed files are the only ones that can newly exceed the cap: stat just those.
  // Tagged (`?` new, `C` changed, `R` removed, …): also what the counts come from, when the index
  // is the head's tree (the usual case: the index the last checkpoint wrote).
  const tagged = splitZ((await repo.run(['ls-files', '-z', '-t', '-o', '-m', '-d', '--exclude-standard'], o)).stdout).map((t) => ({
    tag: t[0],
    path: t.slice(2),
  }));
  const candidates = tagged.filter((t) => t.tag !== 'R').map((t) => t.path);
  const skipped: string[] = [];
  for (const rel of new Set(candidates)) {
    const st = await lstat(path.join(repo.workspace, rel)).catch(() => undefined);
    if (st?.isFile() && st.size > repo.maxFileBytes) skipped.push(rel);
  }
  skipped.sort();
  if (skipped.length) {
    const list = skipped.map((p) => `:(literal)${p}`).join('\0');
    await repo.run(['rm', '--cached', '-f', '-q', '-r', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'], {
      ...o,
      input: list,
    });
  }
  const specs = ['.', ...skipped.map((p) => `:(exclude,literal)${p}`)].join('\0');
  await repo.run(['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], { ...o, input: specs });
  const tree = await repo.text(['write-tree'], o);
  if (at.existing) {
    const prior = await repo.info(at.existing);
    if (prior.parent === head && prior.tree === tree) return prior;
    await repo.run(['update-ref', `${repo.ns(conversationId)}/replaced/step-${step}-${at.existing}`, at.existing]);
  }
  const counts = { added: 0, changed: 0, deleted: 0 };
  // The tags count the changes when the index is what the checkpoint starts from: the head's tree,
  // or nothing for a first checkpoint from an empty index (every file new, no C or R tags).
  if (head ? at.indexWasHead : at.indexEmpty) {
    const big = new Set(skipped);
    const removed = new Set(tagged.filter((t) => t.tag === 'R').map((t) => t.path));
    const changed = new Set(tagged.filter((t) => t.tag === 'C' && !removed.has(t.path)).map((t) => t.path));
    for (const t of new Set(tagged.filter((x) => x.tag === '?').map((x) => x.path))) if (!big.has(t)) counts.added++;
    for (const p of changed) {
      if (big.has(p))
        counts.deleted++; // tracked, now over the cap: out of the checkpoint
      else counts.changed++;
    }
    counts.deleted += removed.size;
  } else {
    const diff = splitZ((await repo.run(['diff-tree', '-r', '-z', '--no-renames', '--name-status', head ?? EMPTY_TREE, tree], o)).stdout);
    for (let i = 0; i + 1 < diff.length; i += 2) {
      const s = diff[i]![0];
      if (s === 'A') counts.added++;
      else if (s === 'D') counts.deleted++;
      else counts.changed++;
    }
  }
  const listed = skipped.slice(0, SKIPPED_LISTED);
  const message =
    `faheem checkpoint: step ${step}${kind === 'step' ? '' : ` (${kind})`}\n\n` +
    `Faheem-Conversation: ${JSON.stringify(conversationId)}\nFaheem-Step: ${step}\nFaheem-Kind: ${kind}\n` +
    `Faheem-Added: ${counts.added}\nFaheem-Changed: ${counts.changed}\nFaheem-Deleted: ${counts.deleted}\n` +
    `Faheem-Skipped: ${JSON.stringify(listed)}\n`;
  // The commit object written here (no process); git writes it in a repository not named by SHA-1.
  const commit = (await (repo.sha1 ??= usesSha1(repo.gitDir)))
    ? await writeObject(repo.gitDir, 'commit', Buffer.from(commitBody(tree, head ? [head] : [], message, Math.floor(Date.now() / 1000))))
    : await repo.text(['commit-tree', tree, ...(head ? ['-p', head] : []), '-F', '-'], { ...o, input: message });
  // Borrowed objects become ours before any ref points at them: the user's gc cannot take them after.
  if (alternates) await adopt(repo, commit, alternates);
  const updates = [{ name: refName, to: commit, from: at.existing }];
  // A mid-step checkpoint is the head too: the index now describes it, and the next take follows it.
  if (kind !== 'before-rewind') updates.push({ name: `${repo.ns(conversationId)}/head`, to: commit, from: head });
  await repo.writeRefs(updates);
  return { commit, tree, step, kind, time: Date.now(), ...counts, skipped: listed, ...(head ? { parent: head } : {}) };
}

/**
 * Fills a new conversation index so that `add -A` hashes little: another conversation's index of
 * this workspace (its stat cache is good), else the user's HEAD read into it with the user's
 * objects borrowed (the returned alternates directory), else nothing.
 */
async function prime(repo: RepoCore, conversationId: string, index: string): Promise<string | undefined> {
  const mine = path.basename(index);
  let newest: { file: string; mtime: number } | undefined;
  for (const name of await readdir(repo.gitDir)) {
    if (!name.startsWith('index-') || name === mine || name.includes('.')) continue;
    const st = await stat(path.join(repo.gitDir, name)).catch(() => undefined);
    if (st && (!newest || st.mtimeMs > newest.mtime)) newest = { file: name, mtime: st.mtimeMs };
  }
  if (newest) {
    const tmp = `${index}.tmp-${process.pid}`;
    await copyFile(path.join(repo.gitDir, newest.file), tmp);
    await rename(tmp, index);
    return undefined;
  }
  if (!repo.borrow || !repo.user) return undefined;
  const user = repo.user;
  const userEnv = { ...baseGitEnv(repo.env), GIT_DIR: user.gitDir };
  const headTree = await git(['rev-parse', '-q', '--verify', `HEAD:${user.prefix}`], {
    env: userEnv,
    cwd: repo.workspace,
    okCodes: [1, 128],
  });
  const tree = headTree.stdout.toString('utf8').trim();
  if (headTree.code !== 0 || !/^[0-9a-f]{40,64}$/.test(tree)) return undefined;
  try {
    await repo.run(['read-tree', tree], { index, alternates: user.objects });
  } catch {
    await rm(index, { force: true });
    return undefined;
  }
  void conversationId;
  return user.objects;
}

/** Copies into the shadow store every object `commit` needs (borrowed ones included): one pack. */
async function adopt(repo: RepoCore, commit: string, alternates: string): Promise<void> {
  await repo.run(['pack-objects', '--revs', '-q', path.join(repo.gitDir, 'objects', 'pack', 'pack')], {
    alternates,
    input: `${commit}\n`,
  });
  // The loose copies of what is now packed are redundant.
  await repo.run(['prune-packed', '-q']);
}
