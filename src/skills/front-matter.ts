// The front matter of a SKILL.md: the lines between a first `---` line and the next, read by the
// `yaml` package (YAML 1.2 core schema), so nested maps and lists (`metadata`, `allowed-tools`) are
// kept as they are written. Pure: no I/O; read-skills.ts reads the file and checks the fields.
import { parseDocument } from 'yaml';

/** The front matter's fields (any YAML values, nested ones kept) and the text after it, or why it cannot be read. */
export type FrontMatter = { ok: true; fields: Record<string, unknown>; body: string } | { ok: false; error: string };

/** Reads the front matter of a Markdown text. Never throws. */
export function parseFrontMatter(text: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---')
    return { ok: false, error: 'it does not start with a front matter (a line "---", then name: and description:, then "---")' };
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === '---' || l.trim() === '...'));
  if (end < 0) return { ok: false, error: 'its front matter has no closing "---" line' };
  const body = lines.slice(end + 1).join('\n');
  const doc = parseDocument(lines.slice(1, end).join('\n'), { prettyErrors: true, uniqueKeys: true });
  const problem = doc.errors[0];
  if (problem) {
    // The file's line: the front matter starts on line 2.
    const line = (problem.linePos?.[0].line ?? 0) + 1;
    const what = problem.message.split(' at line ')[0]!.split('\n')[0]!;
    const hint =
      problem.code === 'BLOCK_AS_IMPLICIT_KEY' || problem.code === 'MULTILINE_IMPLICIT_KEY' ? ' (quote a value that holds ": ")' : '';
    return { ok: false, error: `front matter line ${line} is not valid YAML: ${what}${hint}` };
  }
  let value: unknown;
  try {
    // maxAliasCount bounds what a hostile file's aliases can expand to.
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { ok: false, error: `its front matter cannot be read: ${(err as Error).message}` };
  }
  if (value === null || value === undefined) return { ok: true, fields: {}, body };
  if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'its front matter is not a map of "key: value" lines' };
  return { ok: true, fields: value as Record<string, unknown>, body };
}
