// A step's pack without a git process. A checkpoint that follows the last shipped one (its only
// parent) adds its commit, the trees along the changed paths and the changed files' blobs, and a
// snapshot has just written all of them as loose objects: they are read here, diffed against the
// parent's trees, and written as a pack of whole objects (gitformat-pack, version 2). A
// `git pack-objects` process cost more than the rest of a step's shipping together. A file whose
// new bytes another path had before is shipped again (git would not): a few bytes, never a gap.
// When an object the walk needs is not loose (packed by a restore, borrowed from the user's
// repository) the answer is undefined and the caller asks git, which is always right.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { deflate, deflateSync } from 'node:zlib';
import { ASYNC_ZLIB_BYTES, parseTree, readLooseObject, type GitObject, type TreeEntry } from '../time-travel/objects.js';

const deflateAsync = promisify(deflate);

/** Pack entry types (gitformat-pack: OBJ_COMMIT, OBJ_TREE, OBJ_BLOB). */
const PACK_TYPE: Record<string, number> = { commit: 1, tree: 2, blob: 3 };
const TREE_MODE = '40000';
const GITLINK_MODE = '160000';

/** An entry's header: the type and the size, 4 bits in the first byte, then 7 bits a byte. */
export function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** A version-2 pack of whole objects (no deltas), with its SHA-1 trailer. */
export async function writePack(objects: readonly GitObject[]): Promise<Buffer> {
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(objects.length, 8);
  const parts: Buffer[] = [head];
  for (const o of objects) {
    const type = PACK_TYPE[o.type];
    if (type === undefined) throw new Error(`a pack of whole objects holds no ${o.type}`);
    parts.push(entryHeader(type, o.body.length), o.body.length < ASYNC_ZLIB_BYTES ? deflateSync(o.body) : await deflateAsync(o.body));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

/**
 * The objects `commit` adds to `since` when `since` is its only parent, read as loose objects
 * of a SHA-1 repository; undefined when that does not hold or one of them is not loose.
 */
export async function objectsSince(gitDir: string, commit: string, since: string): Promise<GitObject[] | undefined> {
  const c = await readLooseObject(gitDir, commit);
  if (c?.type !== 'commit') return undefined;
  const headers = c.body.subarray(0, c.body.indexOf('\n\n')).toString('utf8').split('\n');
  const parents = headers.filter((l) => l.startsWith('parent ')).map((l) => l.slice(7));
  const tree = headers.find((l) => l.startsWith('tree '))?.slice(5);
  if (!tree || parents.length !== 1 || parents[0] !== since) return undefined;
  const p = await readLooseObject(gitDir, since);
  const parentTree = p?.type === 'commit' ? /^tree ([0-9a-f]{40})$/m.exec(p.body.toString('latin1'))?.[1] : undefined;
  if (!parentTree) return undefined;
  const found = new Map<string, GitObject>([[commit, c]]);
  return (await addTree(gitDir, tree, parentTree, found)) ? [...found.values()] : undefined;
}

/** Adds `id` and what it has that `was` lacks, path by path; false when an object is not loose. */
async function addTree(gitDir: string, id: string, was: string | undefined, found: Map<string, GitObject>): Promise<boolean> {
  if (id === was || found.has(id)) return true;
  const tree = await readLooseObject(gitDir, id);
  if (tree?.type !== 'tree') return false;
  found.set(id, tree);
  const before = new Map<string, TreeEntry>();
  if (was) {
    const old = await readLooseObject(gitDir, was);
    if (old?.type !== 'tree') return false;
    for (const e of parseTree(old.body)) before.set(e.name, e);
  }
  for (const e of parseTree(tree.body)) {
    const prior = before.get(e.name);
    if (prior?.id === e.id || e.mode === GITLINK_MODE || found.has(e.id)) continue; // a submodule's commit is not in this repository
    if (e.mode === TREE_MODE) {
      if (!(await addTree(gitDir, e.id, prior?.mode === TREE_MODE ? prior.id : undefined, found))) return false;
      continue;
    }
    const blob = await readLooseObject(gitDir, e.id);
    if (blob?.type !== 'blob') return false;
    found.set(e.id, blob);
  }
  return true;
}
