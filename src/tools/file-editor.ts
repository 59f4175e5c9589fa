// The file editor tool: view, create, str_replace, insert, undo_edit, confined to the workspace.
// Undo history lives beside the worker (per conversation, 10 levels), not in workflow history.
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolResult } from '../types.js';
import { describeInvalid, FileEditorArgs } from './schemas.js';

export const MAX_VIEW_CHARS = 16_000;
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
const UNDO_LEVELS = 10;

export interface FileEditorContext {
  workspace: string;
  /** Folder for this conversation's undo history. */
  undoDir: string;
}

const ok = (content: string): ToolResult => ({ content, isError: false });
const fail = (content: string): ToolResult => ({ content, isError: true });

export async function editFile(rawArgs: unknown, ctx: FileEditorContext): Promise<ToolResult> {
  const parsed = FileEditorArgs.safeParse(rawArgs);
  if (!parsed.success) return fail(describeInvalid('file_editor', parsed.error));
  const args = parsed.data;
  const resolved = await resolveInWorkspace(args.path, ctx.workspace);
  if ('error' in resolved) return fail(resolved.error);
  const file = resolved.path;
  const shown = path.relative(ctx.workspace, file) || '.';

  switch (args.command) {
    case 'view':
      return view(file, shown, args.view_range);
    case 'create': {
      if (args.file_text === undefined) return fail('create needs "file_text" (the whole content of the new file).');
      const existing = await readText(file);
      if (typeof existing === 'string') {
        // Creating the same content again is harmless (a retried call); anything else would lose data.
        if (existing === args.file_text) return ok(`${shown} already has exactly this content.`);
        return fail(`${shown} already exists. Use str_replace or insert to change it, or view it first.`);
      }
      if (existing.error !== 'missing') return fail(existing.error);
      await mkdir(path.dirname(file), { recursive: true });
      await pushUndo(ctx.undoDir, file, null);
      await writeFile(file, args.file_text);
      return ok(`Created ${shown} (${lineCount(args.file_text)} lines).`);
    }
    case 'str_replace': {
      if (args.old_str === undefined || args.old_str === '') return fail('str_replace needs a non-empty "old_str".');
      const text = await readText(file);
      if (typeof text !== 'string') return fail(text.error);
      const count = text.split(args.old_str).length - 1;
      if (count === 0) return fail(`"old_str" does not occur in ${shown}. View the file and copy the exact text, whitespace included.`);
      if (count > 1) {
        const lines = occurrenceLines(text, args.old_str);
        return fail(`"old_str" occurs ${count} times in ${shown} (lines ${lines.join(', ')}); include more context so that it is unique.`);
      }
      const at = text.indexOf(args.old_str);
      const next = text.slice(0, at) + (args.new_str ?? '') + text.slice(at + args.old_str.length);
      await pushUndo(ctx.undoDir, file, text);
      await writeFile(file, next);
      const startLine = text.slice(0, at).split('\n').length;
      return ok(`Edited ${shown}.\n${snippet(next, startLine, lineCount(args.new_str ?? ''))}`);
    }
    case 'insert': {
      if (args.insert_line === undefined) return fail('insert needs "insert_line" (0 inserts at the top).');
      if (args.new_str === undefined) return fail('insert needs "new_str" (the text to insert).');
      const text = await readText(file);
      if (typeof text !== 'string') return fail(text.error);
      const lines = text.split('\n');
      const total = text.endsWith('\n') ? lines.length - 1 : lines.length;
      if (args.insert_line > total) return fail(`insert_line ${args.insert_line} is past the end of ${shown}, which has ${total} lines.`);
      const inserted = args.new_str.endsWith('\n') ? args.new_str.slice(0, -1).split('\n') : args.new_str.split('\n');
      lines.splice(args.insert_line, 0, ...inserted);
      const next = lines.join('\n');
      await pushUndo(ctx.undoDir, file, text);
      await writeFile(file, next);
      return ok(
        `Inserted ${inserted.length} line(s) into ${shown} after line ${args.insert_line}.\n${snippet(next, args.insert_line + 1, inserted.length)}`,
      );
    }
    case 'undo_edit': {
      const previous = await popUndo(ctx.undoDir, file);
      if (previous === undefined) return fail(`There is no edit of ${shown} to undo.`);
      if (previous === null) {
        await rm(file, { force: true });
        return ok(`Undid the creation of ${shown}; the file is removed.`);
      }
      await writeFile(file, previous);
      return ok(`Undid the last edit of ${shown}.`);
    }
  }
}

/** Resolves a path against the workspace and refuses anything that ends up outside it, symlinks included. */
export async function resolveInWorkspace(p: string, workspace: string): Promise<{ path: string } | { error: string }> {
  const root = await realpath(workspace).catch(() => path.resolve(workspace));
  const candidate = path.resolve(root, p);
  // Resolve the deepest existing ancestor so a symlink cannot lead outside.
  let existing = candidate;
  let rest = '';
  for (;;) {
    const real = await realpath(existing).catch(() => undefined);
    if (real !== undefined) {
      existing = real;
      break;
    }
    const parent = path.dirname(existing);
    if (parent === existing) break;
    rest = path.join(path.basename(existing), rest);
    existing = parent;
  }
  const full = rest ? path.join(existing, rest) : existing;
  const rel = path.relative(root, full);
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    return { error: `${p} is outside the workspace (${workspace}); only paths inside it can be used.` };
  }
  return { path: full };
}

async function view(file: string, shown: string, range: [number, number] | undefined): Promise<ToolResult> {
  const info = await stat(file).catch(() => undefined);
  if (!info) return fail(`${shown} does not exist.`);
  if (info.isDirectory()) {
    const entries = await listDir(file, 2);
    return ok(clip(`Files and folders in ${shown} (2 levels, hidden ones left out):\n${entries.join('\n') || '(empty)'}`));
  }
  const text = await readText(file);
  if (typeof text !== 'string') return fail(text.error);
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  let start = 1;
  let end = lines.length;
  if (range) {
    [start, end] = range;
    if (end === -1) end = lines.length;
    if (start > Math.max(lines.length, 1) || end < start) {
      return fail(`view_range [${range.join(', ')}] does not fit ${shown}, which has ${lines.length} lines.`);
    }
    end = Math.min(end, lines.length);
  }
  const body = lines
    .slice(start - 1, end)
    .map((l, i) => `${String(start + i).padStart(6)}\t${l}`)
    .join('\n');
  return ok(clip(`${shown} (lines ${start}-${end} of ${lines.length}):\n${body}`));
}

async function listDir(dir: string, depth: number, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    out.push(`${prefix}${e.name}${e.isDirectory() ? '/' : ''}`);
    if (e.isDirectory() && depth > 1) out.push(...(await listDir(path.join(dir, e.name), depth - 1, `${prefix}${e.name}/`)));
  }
  return out;
}

async function readText(file: string): Promise<string | { error: string }> {
  const info = await stat(file).catch(() => undefined);
  if (!info) return { error: 'missing' };
  if (info.isDirectory()) return { error: `${path.basename(file)} is a directory.` };
  if (info.size > MAX_FILE_BYTES) return { error: `${path.basename(file)} is ${info.size} bytes; files over 10 MB are not opened.` };
  const buf = await readFile(file);
  if (buf.includes(0)) return { error: `${path.basename(file)} looks binary; the editor handles text files only.` };
  return buf.toString('utf8');
}

function clip(text: string): string {
  if (text.length <= MAX_VIEW_CHARS) return text;
  return `${text.slice(0, MAX_VIEW_CHARS)}\n[… clipped at ${MAX_VIEW_CHARS} characters; use view_range to see the rest.]`;
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

function occurrenceLines(text: string, needle: string): number[] {
  const lines: number[] = [];
  let at = text.indexOf(needle);
  while (at !== -1) {
    lines.push(text.slice(0, at).split('\n').length);
    at = text.indexOf(needle, at + 1);
  }
  return lines;
}

function snippet(text: string, firstChanged: number, changedLines: number): string {
  const lines = text.split('\n');
  const from = Math.max(1, firstChanged - 3);
  const to = Math.min(lines.length, firstChanged + Math.max(changedLines, 1) + 2);
  return lines
    .slice(from - 1, to)
    .map((l, i) => `${String(from + i).padStart(6)}\t${l}`)
    .join('\n');
}

// ---- undo history: a JSON file per edited path ----

function undoFile(undoDir: string, file: string): string {
  return path.join(undoDir, `${createHash('sha1').update(file).digest('hex')}.json`);
}

async function readUndo(undoDir: string, file: string): Promise<(string | null)[]> {
  try {
    return JSON.parse(await readFile(undoFile(undoDir, file), 'utf8')) as (string | null)[];
  } catch {
    return [];
  }
}

async function pushUndo(undoDir: string, file: string, previous: string | null): Promise<void> {
  const stack = [...(await readUndo(undoDir, file)), previous].slice(-UNDO_LEVELS);
  await mkdir(undoDir, { recursive: true });
  await writeFile(undoFile(undoDir, file), JSON.stringify(stack));
}

async function popUndo(undoDir: string, file: string): Promise<string | null | undefined> {
  const stack = await readUndo(undoDir, file);
  if (stack.length === 0) return undefined;
  const previous = stack.pop();
  await writeFile(undoFile(undoDir, file), JSON.stringify(stack));
  return previous;
}
