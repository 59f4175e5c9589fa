// Git objects written without a git process: a checkpoint's commit object is a few lines of text,
// and a `git commit-tree` process per checkpoint cost more than the text (one of the four processes
// of a step that changed files). The format is git's loose object (gitformat-loose, git-commit-tree):
// `<type> <size>\0<body>`, zlib-deflated, named by the SHA-1 of the uncompressed bytes. Only for
// SHA-1 repositories; the caller asks git itself for any other. Loose objects are read back here
// too (a step's pack, pool/step-pack.ts).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateSync, inflate, inflateSync } from 'node:zlib';

const inflateAsync = promisify(inflate);
/** Objects this big or bigger are read and (in|de)flated on the thread pool, smaller ones on the caller's thread. */
export const ASYNC_ZLIB_BYTES = 64 * 1024;

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
  if (sha1Repositories.has(gitDir)) return true;
  const config = await readFile(path.join(gitDir, 'config'), 'utf8').catch(() => undefined);
  if (config === undefined) return false;
  const format = /^\s*objectformat\s*=\s*"?([a-z0-9]+)"?\s*$/im.exec(config)?.[1];
  const sha1 = format === undefined || format.toLowerCase() === 'sha1';
  // A repository's object format never changes: asked once a process.
  if (sha1) sha1Repositories.add(gitDir);
  return sha1;
}
const sha1Repositories = new Set<string>();

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

/** An object read back: its type and its body (without the `<type> <size>\0` header). */
export interface GitObject {
  type: string;
  body: Buffer;
}

/**
 * Reads a loose object of `<gitDir>/objects`, or answers undefined when it is not loose (packed,
 * borrowed or missing): the caller then asks git.
 */
export async function readLooseObject(gitDir: string, id: string): Promise<GitObject | undefined> {
  const file = path.join(gitDir, 'objects', id.slice(0, 2), id.slice(2));
  const bytes = statSync(file, { throwIfNoEntry: false })?.size;
  if (bytes === undefined) return undefined;
  // A small object (most are: just written, in the page cache) is read on this thread: a read on
  // the thread pool is four round trips that cost more than the bytes.
  const stored = bytes < ASYNC_ZLIB_BYTES ? readFileSync(file) : await readFile(file);
  // Small ones inflate on this thread: a round trip to the thread pool costs more.
  const raw = stored.length < ASYNC_ZLIB_BYTES ? inflateSync(stored) : await inflateAsync(stored);
  const nul = raw.indexOf(0);
  const [type, size] = raw.subarray(0, nul).toString('latin1').split(' ');
  const body = raw.subarray(nul + 1);
  if (!type || Number(size) !== body.length) throw new Error(`loose object ${id} in ${gitDir} is corrupt`);
  return { type, body };
}

/** One entry of a tree object. */
export interface TreeEntry {
  mode: string;
  name: string;
  id: string;
}

/** The entries of a tree object's body (`<mode> <name>\0<20-byte id>`, repeated; SHA-1 only). */
export function parseTree(body: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = body.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > body.length) throw new Error('a tree object is corrupt');
    entries.push({
      mode: body.subarray(at, space).toString('latin1'),
      name: body.subarray(space + 1, nul).toString('utf8'),
      id: body.subarray(nul + 1, nul + 21).toString('hex'),
    });
    at = nul + 21;
  }
  return entries;
}
