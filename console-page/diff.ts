// A file edit as a unified diff, from the file_editor call's arguments (what it replaced and with
// what) and, once it has landed, its observation (which says at which line). Pure (no DOM): the page
// shows each line as text.
import { structuredPatch } from 'diff';

/** One line of a file edit shown as a diff: `@` is a hunk's header (`@@ -3,1 +3,2 @@`). */
export interface DiffLine {
  sign: '+' | '-' | ' ' | '@';
  text: string;
}

/** The numbered lines of a file_editor observation's snippet (`     3\tline`), in order. */
function snippetLines(observation: string): { n: number; text: string }[] {
  const out: { n: number; text: string }[] = [];
  for (const line of observation.split('\n')) {
    const m = /^\s*(\d+)\t(.*)$/.exec(line);
    if (m && (out.length === 0 || Number(m[1]) === out.at(-1)!.n + 1)) out.push({ n: Number(m[1]), text: m[2]! });
  }
  return out;
}

/**
 * A str_replace as whole lines of the file: its observation shows the edited lines after the edit
 * (three lines of context before them unless the file begins sooner), so the replacement is found
 * there and the replaced text put back. Undefined when the snippet does not say (then the diff is
 * of the fragments).
 */
function wholeLines(oldStr: string, newStr: string, observation: string | undefined) {
  if (!observation || newStr === '') return undefined;
  const lines = snippetLines(observation);
  if (lines.length === 0) return undefined;
  const joined = lines.map((l) => l.text).join('\n');
  // The edit began on the fourth line shown, or sooner when the file begins within the context.
  const lastStartIndex = Math.min(3, lines.length - 1);
  const firstStartIndex = lines[0]!.n > 1 ? lastStartIndex : 0;
  let at = joined.indexOf(newStr);
  const lineIndexOf = (offset: number) => joined.slice(0, offset).split('\n').length - 1;
  while (at >= 0 && lineIndexOf(at) < firstStartIndex) at = joined.indexOf(newStr, at + 1);
  if (at < 0 || lineIndexOf(at) > lastStartIndex) return undefined;
  const lineStart = joined.lastIndexOf('\n', at - 1) + 1;
  const end = joined.indexOf('\n', at + newStr.length);
  const lineEnd = end < 0 ? joined.length : end;
  return {
    before: joined.slice(lineStart, at) + oldStr + joined.slice(at + newStr.length, lineEnd),
    after: joined.slice(lineStart, lineEnd),
    firstLine: lines[lineIndexOf(at)]!.n,
  };
}

/** The text as whole lines (a last line without its newline gets one: fragments are compared as lines). */
const asLines = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);

/**
 * The hunks of `before` → `after`, their line numbers moved to `firstLine` in the file when known
 * (without it the header has no numbers: the fragment's own would mislead).
 */
function hunks(path: string, before: string, after: string, firstLine: number | undefined): DiffLine[] {
  const patch = structuredPatch(path, path, asLines(before), asLines(after), '', '', { context: 3 });
  const out: DiffLine[] = [];
  for (const h of patch.hunks) {
    // An empty side names the line before it, as unified diffs do (`-0,0` for a new file).
    const at = (start: number, count: number) => `${start + (firstLine ?? 1) - (count === 0 ? 2 : 1)},${count}`;
    out.push({
      sign: '@',
      text: firstLine !== undefined ? `@@ -${at(h.oldStart, h.oldLines)} +${at(h.newStart, h.newLines)} @@ ${path}` : `@@ ${path}`,
    });
    for (const line of h.lines) {
      const sign = line[0];
      // "\ No newline at end of file" cannot occur (asLines), and nothing else is a diff line.
      if (sign === '+' || sign === '-' || sign === ' ') out.push({ sign, text: line.slice(1) });
    }
  }
  return out;
}

/**
 * What a file_editor call changes, as a unified diff (undefined for a view, an undo, or arguments
 * that say nothing). `observation` is the call's result once it has landed: it gives line numbers.
 */
export function fileEditDiff(args: unknown, observation?: string): DiffLine[] | undefined {
  if (!args || typeof args !== 'object') return undefined;
  const a = args as Record<string, unknown>;
  const path = typeof a.path === 'string' ? a.path : 'file';
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  switch (a.command) {
    case 'create': {
      const text = str(a.file_text);
      return text === undefined ? undefined : hunks(path, '', text, 1);
    }
    case 'str_replace': {
      const before = str(a.old_str);
      if (before === undefined) return undefined;
      const after = str(a.new_str) ?? '';
      const whole = wholeLines(before, after, observation);
      return whole ? hunks(path, whole.before, whole.after, whole.firstLine) : hunks(path, before, after, undefined);
    }
    case 'insert': {
      const text = str(a.new_str) ?? str(a.text);
      if (text === undefined) return undefined;
      const line = typeof a.insert_line === 'number' && Number.isInteger(a.insert_line) ? a.insert_line : undefined;
      // Inserted after `line`: the new lines begin at line + 1.
      return hunks(path, '', text, line !== undefined ? line + 1 : undefined);
    }
    default:
      return undefined;
  }
}
