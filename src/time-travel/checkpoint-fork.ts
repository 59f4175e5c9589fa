// A fork's files: a checkpoint's tree written into a new directory, and (with `carry`) the
// conversation's checkpoints up to it carried into that directory's shadow repository.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CheckpointError, splitZ } from './git.js';
import { encodeRefPart, type RepoCore, type RepoOpener } from './repo-core.js';
import type { ForkResult } from './types.js';

/**
 * Writes checkpoint `commit`'s files into `targetDir` (created; must be empty), leaving the
 * workspace alone. Only the tree: no `.git`, no ignored or skipped files. With `carry`, the new
 * directory's shadow repository gets conversation `carry.from`'s checkpoints up to `commit`'s
 * step under conversation `carry.to` (head = `commit`, and an index that already knows the
 * files just written), so the fork can itself be rewound to any of those steps.
 */
export async function materialize(
  repo: RepoCore,
  commit: string,
  targetDir: string,
  carry?: { from: string; to: string; store: RepoOpener },
): Promise<ForkResult> {
  const source = await repo.info(commit);
  const target = path.resolve(targetDir);
  await mkdir(target, { recursive: true });
  const into = carry ? await carry.store.open(target) : undefined;
  // A retried fork (same commit, same new conversation) may find the files of its first attempt.
  const marker = into && carry ? path.join(into.gitDir, `fork-${encodeRefPart(carry.to)}`) : undefined;
  const ours = marker ? (await readFile(marker, 'utf8').catch(() => '')) === commit : false;
  if (!ours && (await readdir(target)).length) throw new CheckpointError('invalid', `the fork's directory ${target} is not empty`);
  if (marker && !ours) await writeFile(marker, commit);
  const index =
    into && carry ? into.indexFile(carry.to) : path.join(repo.gitDir, `fork-index.${process.pid}.${randomBytes(4).toString('hex')}`);
  const o = { index, cwd: target, env: { GIT_WORK_TREE: target } };
  let files: number;
  try {
    await repo.run(['read-tree', commit], o);
    await repo.run(['checkout-index', '-a', '-f', '-q'], o);
    files = splitZ((await repo.run(['ls-files', '-z'], o)).stdout).length;
  } finally {
    if (!into) await rm(index, { force: true });
  }
  let steps = 0;
  if (into && carry) {
    const from = repo.ns(carry.from);
    const to = into.ns(carry.to);
    const specs = [`${commit}:${to}/head`];
    for (const [name, sha] of await repo.refs([`${from}/`])) {
      const m = /^step-(\d+)$/.exec(name.slice(from.length + 1));
      if (m && Number(m[1]) <= source.step) {
        specs.push(`${sha}:${to}/${m[0]}`);
        steps++;
      }
    }
    await repo.run(['push', '-q', '--no-verify', into.gitDir, ...specs]);
  }
  return { target, files, steps };
}
