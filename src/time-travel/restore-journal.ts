// Putting a workspace back as a checkpoint (a rewind), crash-safe: the work is written down first
// as a journal (`restore-<conversation>.json` in the shadow repository), so a re-run after a crash
// finishes the same restore. Every write goes through the workspace resolver (WorkspaceFs).
import { open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceFs } from '../security/workspace-fs.js';
import { CheckpointError, splitZ } from './git.js';
import { encodeRefPart, type RepoCore } from './repo-core.js';
import { take } from './snapshot.js';
import type { CheckpointInfo, RestoreResult } from './types.js';

/** One line of `diff-tree -r -z` raw output. */
interface DiffEntry {
  srcMode: string;
  dstMode: string;
  dst: string;
  status: string;
  path: string;
}

/** What a restore in progress writes down first, so that a re-run after a crash finishes the same work. */
interface Journal {
  rewindId: string;
  before: CheckpointInfo;
  target: string;
  kept: string[];
}

/**
 * Puts the workspace back as checkpoint `commit`: files added since are removed, changed and
 * deleted ones written back (each via a temporary file renamed into place). Ignored files,
 * skipped big files and any `.git` are never touched. First records the workspace as it is
 * (`before`, kind 'before-rewind', ref rewind/<rewindId>), then a journal; a re-run after a
 * crash (same conversation) finishes the journal's restore, and a retry with the same rewindId
 * reuses `before`. Afterwards the conversation's head is `commit`, and when `commit` is its
 * step-N checkpoint the step refs after N are set aside under rewound/<rewindId>/.
 */
export function restore(repo: RepoCore, conversationId: string, commit: string, rewindId: string): Promise<RestoreResult> {
  return repo.serial(conversationId, async () => {
    repo.clean.delete(conversationId);
    const journalPath = repo.journalFile(conversationId);
    let journal = await readJournal(journalPath);
    if (!journal || journal.rewindId !== rewindId || !sameCommit(journal.target, commit)) {
      if (journal) await applyJournal(repo, conversationId, journal); // an older restore left half done: finish it first
      const target = await repo.info(commit);
      const beforeRef = `${repo.ns(conversationId)}/rewind/${encodeRefPart(rewindId)}`;
      const had = (await repo.refs([beforeRef])).get(beforeRef);
      const headRef = `${repo.ns(conversationId)}/head`;
      const head = (await repo.refs([headRef])).get(headRef);
      const atStep = head ? (await repo.info(head)).step : 0;
      const before = had ? await repo.info(had) : await take(repo, conversationId, atStep, 'before-rewind', beforeRef);
      const kept = await keptPaths(repo, before.commit, target.commit);
      journal = { rewindId, before, target: target.commit, kept };
      await writeJournal(journalPath, journal);
    }
    return applyJournal(repo, conversationId, journal);
  });
}

/** Paths the restore would write that the workspace has outside the "before" checkpoint (ignored or skipped). */
async function keptPaths(repo: RepoCore, before: string, target: string): Promise<string[]> {
  const kept: string[] = [];
  const ws = await workspaceFs(repo);
  for (const e of await diff(repo, before, target)) {
    if (e.status !== 'A') continue;
    // Links not followed: behind a linked directory is not in the workspace.
    const st = await ws.lstatEntry(e.path);
    if (st) kept.push(e.path);
  }
  return kept;
}

/** The workspace as the path resolver sees it (security/workspace-fs.ts). */
function workspaceFs(repo: RepoCore): Promise<WorkspaceFs> {
  return WorkspaceFs.open(repo.workspace, { who: 'restore' });
}

async function diff(repo: RepoCore, a: string, b: string): Promise<DiffEntry[]> {
  const parts = splitZ((await repo.run(['diff-tree', '-r', '-z', '--no-renames', a, b])).stdout);
  const entries: DiffEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [srcMode, dstMode, , dst, status] = parts[i]!.slice(1).split(' ');
    entries.push({ srcMode: srcMode!, dstMode: dstMode!, dst: dst!, status: status![0]!, path: parts[i + 1]! });
  }
  return entries;
}

async function applyJournal(repo: RepoCore, conversationId: string, journal: Journal): Promise<RestoreResult> {
  const kept = new Set(journal.kept);
  const entries = (await diff(repo, journal.before.commit, journal.target)).filter((e) => !kept.has(e.path));
  let written = 0;
  let removed = 0;
  const blocked: string[] = [];
  // Every write and removal goes through the workspace resolver: never through a link, never
  // outside (a link where a directory must be is replaced by the directory).
  const ws = await workspaceFs(repo);
  // Removals first, so that a file can become a directory and back.
  const dirs = new Set<string>();
  for (const e of entries) {
    const gone = e.status === 'D' || (e.status === 'T' && e.dstMode === '160000');
    if (gone || e.status === 'T') {
      if (e.srcMode !== '160000') await ws.removeEntry(e.path);
      if (gone) removed++;
      dirs.add(path.posix.dirname(e.path));
    }
  }
  for (const d of [...dirs].sort((a, b) => b.length - a.length)) if (d !== '.') await ws.removeEmptyDirs(d);
  const writes = entries.filter((e) => e.status !== 'D' && e.dstMode !== '160000');
  for (let i = 0; i < writes.length; i += 256) {
    const batch = writes.slice(i, i + 256);
    const blobs = await readBlobs(
      repo,
      batch.map((e) => e.dst),
    );
    for (const e of batch) {
      const ok = await writeEntry(ws, e, blobs.get(e.dst)!);
      if (ok) written++;
      else blocked.push(e.path);
      if (repo.killAfterWrites && written >= repo.killAfterWrites) process.kill(process.pid, 'SIGKILL');
    }
  }
  // The index now describes the target; stat data of entries that did not change is kept.
  const index = repo.indexFile(conversationId);
  await repo.run(['read-tree', '--reset', journal.target], { index });
  const ns = repo.ns(conversationId);
  const target = await repo.info(journal.target);
  const tx = ['start', `update ${ns}/head ${journal.target}`];
  if (target.kind === 'step') {
    const later = [...(await repo.refs([`${ns}/`]))].filter(([name]) => {
      const m = /\/step-(\d+)$/.exec(name);
      return m && name === `${ns}/step-${m[1]}` && Number(m[1]) > target.step;
    });
    for (const [name, sha] of later) {
      tx.push(`update ${ns}/rewound/${encodeRefPart(journal.rewindId)}/${name.slice(ns.length + 1)} ${sha}`, `delete ${name} ${sha}`);
    }
  }
  tx.push('commit', '');
  await repo.run(['update-ref', '--stdin'], { input: tx.join('\n') });
  await rm(repo.journalFile(conversationId), { force: true });
  return {
    before: journal.before,
    restored: journal.target,
    ...(target.kind === 'step' ? { step: target.step } : {}),
    written,
    removed,
    kept: [...journal.kept, ...blocked],
  };
}

/** Blob contents by id, read with one `cat-file --batch`. */
async function readBlobs(repo: RepoCore, ids: readonly string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(ids)];
  const out = (await repo.run(['cat-file', '--batch'], { input: unique.map((s) => `${s}\n`).join('') })).stdout;
  const map = new Map<string, Buffer>();
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(10, at);
    const [sha, type, size] = out.subarray(at, nl).toString('utf8').split(' ');
    if (type === 'missing' || !sha || !size)
      throw new CheckpointError('not_found', `object ${sha} is missing from the shadow repository of ${repo.workspace}`);
    const n = Number(size);
    map.set(sha, out.subarray(nl + 1, nl + 1 + n));
    at = nl + 1 + n + 1;
  }
  return map;
}

function sameCommit(a: string, b: string): boolean {
  return a === b || (b.length >= 7 && a.startsWith(b));
}

async function readJournal(file: string): Promise<Journal | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Journal;
  } catch {
    return undefined;
  }
}

async function writeJournal(file: string, journal: Journal): Promise<void> {
  const tmp = `${file}.tmp`;
  const h = await open(tmp, 'w');
  try {
    await h.writeFile(JSON.stringify(journal));
    await h.sync();
  } finally {
    await h.close();
  }
  await rename(tmp, file);
}

/** Writes one entry via a temporary file renamed into place; false when something the checkpoint does not own is in the way. */
function writeEntry(ws: WorkspaceFs, e: DiffEntry, content: Buffer): Promise<boolean> {
  return ws.putEntry(
    e.path,
    content,
    e.dstMode === '120000' ? { linkTarget: content.toString('utf8') } : { mode: e.dstMode === '100755' ? 0o777 : 0o666 },
  );
}
