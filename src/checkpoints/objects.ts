// Git objects written without a git process: a checkpoint's commit object is a few lines of text,
// and a `git commit-tree` process per checkpoint cost more than the text (one of the four processes
// of a step that changed files). The format is git's loose object (gitformat-loose, git-commit-tree):
// `<type> <size>\0<body>`, zlib-deflated, named by the SHA-1 of the uncompressed bytes. Only for
// SHA-1 repositories; the caller asks git itself for any other.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { deflateSync } from 'node:zlib';

/** Who checkpoints are by (as git's GIT_AUTHOR_* / GIT_COMMITTER_* in baseGitEnv say). */
export const CHECKPOINT_IDENT = 'faheem <checkpoints@faheem.invalid>';

/** A commit's body, as `git commit-tree` writes it: tree, parents, author, committer, a blank line, the message. */
export function commitBody(tree: string, parents: readonly string[], message: string, seconds: number): string {
  const ident = `${CHECKPOINT_IDENT} ${seconds} +0000`;
  return `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join('')}author ${ident}\ncommitter ${ident}\n\n${message}`;
}

/** The object's id: the SHA-1 of `<type> <size>\0<body>`. */
export function objectId(type: 'commit' | 'tree' | 'blob', body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/**
 * Whether the repository's objects are named by SHA-1 (no `extensions.objectFormat` other than
 * sha1). A config that cannot be read answers false: git itself then writes (always right).
 */
export async function usesSha1(gitDir: string): Promise<boolean> {
  const config = await readFile(path.join(gitDir, 'config'), 'utf8').catch(() => undefined);
  if (config === undefined) return false;
  const format = /^\s*objectformat\s*=\s*"?([a-z0-9]+)"?\s*$/im.exec(config)?.[1];
  return format === undefined || format.toLowerCase() === 'sha1';
}

/**
 * Writes an object into `<gitDir>/objects` as a loose object (read only, as git leaves them) and
 * answers its id. Written beside and renamed into place: a reader never sees half an object, and
 * two writers of the same object both succeed.
 */
export async function writeObject(gitDir: string, type: 'commit' | 'tree' | 'blob', body: Buffer): Promise<string> {
  const id = objectId(type, body);
  const dir = path.join(gitDir, 'objects', id.slice(0, 2));
  const file = path.join(dir, id.slice(2));
  if (existsSync(file)) return id;
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `tmp_obj_${process.pid}_${randomBytes(4).toString('hex')}`);
  try {
    // Read only and never over another file, as git writes them.
    await writeFile(tmp, deflateSync(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body])), { mode: 0o444, flag: 'wx' });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return id;
}
