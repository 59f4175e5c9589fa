// The file editor tool: view, create, str_replace, insert, undo_edit, confined to the workspace.
// Every path goes through the workspace resolver (security/workspace-fs.ts): never outside the
// workspace, never through a link, regular files only (a FIFO or device is refused, never opened
// blocking). Undo history lives beside the worker (per conversation, 10 levels), not in workflow
// history; undo writes through the same resolver.
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PathRefused, WorkspaceFs, type WorkspaceFile, type WorkspacePath } from '../security/workspace-fs.js';
import type { ImageMimeType, ToolResult } from '../core/types.js';
import { sniffImage } from '../images/sniff.js';
import { MAX_IMAGE_BYTES } from '../images/workflow/image-refs.js';
import { describeInvalid, FileEditorArgs } from './schemas.js';

export const MAX_VIEW_CHARS = 16_000;
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
const UNDO_LEVELS = 10;

export interface FileEditorContext {
  workspace: string;
  /** Folder for this conversation's undo history (builtin.ts names it with conversationFolder). */
  undoDir: string;
}

const ok = (content: string): ToolResult => ({ content, isError: false });
const fail = (content: string): ToolResult => ({ content, isError: true });

/** What the editor gives back: a result, and for `view` of an image, the image's bytes (the tool stores them). */
export type EditorResult = ToolResult & { image?: { bytes: Uint8Array; mimeType: ImageMimeType } };

export async function editFile(rawArgs: unknown, ctx: FileEditorContext): Promise<EditorResult> {
  const parsed = FileEditorArgs.safeParse(rawArgs);
  if (!parsed.success) return fail(describeInvalid('file_editor', parsed.error));
  try {
    const ws = await WorkspaceFs.open(ctx.workspace);
    return await run(parsed.data, ws, ws.resolve(parsed.data.path), ctx);
  } catch (err) {
    if (err instanceof PathRefused) return fail(err.message);
    throw err;
  }
}

type Args = ReturnType<typeof FileEditorArgs.parse>;

async function run(args: Args, ws: WorkspaceFs, target: WorkspacePath, ctx: FileEditorContext): Promise<EditorResult> {
  const shown = target.shown;
  const file = target.abs;
  switch (args.command) {
    case 'view':
      return view(ws, target, args.view_range);
    case 'create': {
      if (args.file_text === undefined) return fail('create needs "file_text" (the whole content of the new file).');
      const made = await ws.create(target);
      if (made === 'exists') {
        const existing = await readText(ws, target);
        if (typeof existing !== 'string') return fail(existing.error);
        // Creating the same content again is harmless (a retried call); anything else would lose data.
        if (existing === args.file_text) return ok(`${shown} already has exactly this content.`);
        return fail(`${shown} already exists. Use str_replace or insert to change it, or view it first.`);
      }
      try {
        try {
          await pushUndo(ctx.undoDir, file, null);
        } catch (err) {
          await made.close();
          await ws.remove(target).catch(() => undefined);
          throw err;
        }
        await made.replace(args.file_text);
      } finally {
        await made.close();
      }
      return ok(`Created ${shown} (${lineCount(args.file_text)} lines).`);
    }
    case 'str_replace': {
      if (args.old_str === undefined || args.old_str === '') return fail('str_replace needs a non-empty "old_str".');
      return withText(ws, target, async (text, f) => {
        const count = text.split(args.old_str!).length - 1;
        if (count === 0) return fail(`"old_str" does not occur in ${shown}. View the file and copy the exact text, whitespace included.`);
        if (count > 1) {
          const lines = occurrenceLines(text, args.old_str!);
          return fail(
            `"old_str" occurs ${count} times in ${shown} (lines ${lines.join(', ')}); include more context so that it is unique.`,
          );
        }
        const at = text.indexOf(args.old_str!);
        const next = text.slice(0, at) + (args.new_str ?? '') + text.slice(at + args.old_str!.length);
        await pushUndo(ctx.undoDir, file, text);
        await f.replace(next);
        const startLine = text.slice(0, at).split('\n').length;
        return ok(`Edited ${shown}.\n${snippet(next, startLine, lineCount(args.new_str ?? ''))}`);
      });
    }
    case 'insert': {
      if (args.insert_line === undefined) return fail('insert needs "insert_line" (0 inserts at the top).');
      if (args.new_str === undefined) return fail('insert needs "new_str" (the text to insert).');
      const insertLine = args.insert_line;
      const newStr = args.new_str;
      return withText(ws, target, async (text, f) => {
        const lines = text.split('\n');
        const total = text.endsWith('\n') ? lines.length - 1 : lines.length;
        if (insertLine > total) return fail(`insert_line ${insertLine} is past the end of ${shown}, which has ${total} lines.`);
        const inserted = newStr.endsWith('\n') ? newStr.slice(0, -1).split('\n') : newStr.split('\n');
        lines.splice(insertLine, 0, ...inserted);
        const next = lines.join('\n');
        await pushUndo(ctx.undoDir, file, text);
        await f.replace(next);
        return ok(
          `Inserted ${inserted.length} line(s) into ${shown} after line ${insertLine}.\n${snippet(next, insertLine + 1, inserted.length)}`,
        );
      });
    }
    case 'undo_edit': {
      const stack = await readUndo(ctx.undoDir, file);
      if (stack.length === 0) return fail(`There is no edit of ${shown} to undo.`);
      const previous = stack[stack.length - 1]!;
      // Through the resolver like any edit: a file swapped for a link since is refused, not followed.
      if (previous === null) {
        await ws.remove(target);
      } else {
        const f = await ws.open(target, { write: true, create: true });
        try {
          await f.replace(previous);
        } finally {
          await f.close();
        }
      }
      await writeUndo(ctx.undoDir, file, stack.slice(0, -1));
      return previous === null ? ok(`Undid the creation of ${shown}; the file is removed.`) : ok(`Undid the last edit of ${shown}.`);
    }
  }
}

/** Opens the text file at `target` for writing, hands its text to `fn`, closes it. */
async function withText(
  ws: WorkspaceFs,
  target: WorkspacePath,
  fn: (text: string, f: WorkspaceFile) => Promise<ToolResult>,
): Promise<ToolResult> {
  const f = await ws.open(target, { write: true });
  try {
    const text = await textOf(f, target);
    if (typeof text !== 'string') return fail(text.error);
    return await fn(text, f);
  } finally {
    await f.close();
  }
}

async function view(ws: WorkspaceFs, target: WorkspacePath, range: [number, number] | undefined): Promise<EditorResult> {
  const shown = target.shown;
  const info = await ws.lstat(target);
  if (!info) return fail(`${shown} does not exist.`);
  if (info.isDirectory()) {
    const entries = await ws.list(target, 2);
    return ok(
      clip(
        `Files and folders in ${shown} (2 levels, hidden ones left out; links are shown, not followed):\n${entries.join('\n') || '(empty)'}`,
      ),
    );
  }
  const image = await readImage(ws, target);
  if (image) return image;
  const text = await readText(ws, target);
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

/** A PNG, JPEG, GIF or WebP file (by its first bytes) as an image for the model; undefined for any other file. */
async function readImage(ws: WorkspaceFs, target: WorkspacePath): Promise<EditorResult | undefined> {
  const f = await ws.open(target);
  try {
    const head = await f.read(16);
    const mimeType = sniffImage(head);
    if (!mimeType) return undefined;
    const shown = target.shown;
    if (f.size > MAX_IMAGE_BYTES)
      return fail(`${shown} is an image (${mimeType}) of ${f.size} bytes; images over ${MAX_IMAGE_BYTES} bytes (5 MB) cannot be shown.`);
    const bytes = await f.read(MAX_IMAGE_BYTES + 1);
    if (bytes.length > MAX_IMAGE_BYTES) return fail(`${shown} is an image (${mimeType}) over 5 MB; it cannot be shown.`);
    return {
      content: `${shown} is an image (${mimeType}, ${bytes.length} bytes), shown to you with this result.`,
      isError: false,
      image: { bytes, mimeType },
    };
  } finally {
    await f.close();
  }
}

async function readText(ws: WorkspaceFs, target: WorkspacePath): Promise<string | { error: string }> {
  const f = await ws.open(target);
  try {
    return await textOf(f, target);
  } finally {
    await f.close();
  }
}

async function textOf(f: WorkspaceFile, target: WorkspacePath): Promise<string | { error: string }> {
  const name = target.shown;
  if (f.size > MAX_FILE_BYTES) return { error: `${name} is ${f.size} bytes; files over 10 MB are not opened.` };
  const buf = await f.read(MAX_FILE_BYTES + 1);
  if (buf.length > MAX_FILE_BYTES) return { error: `${name} is over 10 MB; files over 10 MB are not opened.` };
  if (buf.includes(0)) return { error: `${name} looks binary; the editor handles text files only.` };
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

async function writeUndo(undoDir: string, file: string, stack: (string | null)[]): Promise<void> {
  await mkdir(undoDir, { recursive: true });
  await writeFile(undoFile(undoDir, file), JSON.stringify(stack));
}

async function pushUndo(undoDir: string, file: string, previous: string | null): Promise<void> {
  await writeUndo(undoDir, file, [...(await readUndo(undoDir, file)), previous].slice(-UNDO_LEVELS));
}
