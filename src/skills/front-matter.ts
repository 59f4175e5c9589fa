// The front matter of a SKILL.md: the lines between a first `---` line and the next, read by the
// `yaml` package (YAML 1.2 core schema), so nested maps and lists (`metadata`, `allowed-tools`) are
// kept as they are written. One leniency: a top-level plain value holding ": " on one line
// (`description: Use when: asked`) is read as its text, as skill files are often written.
// Pure: no I/O; read-skills.ts reads the file and checks the fields.
import { parseDocument } from 'yaml';

/** The front matter's fields (any YAML values, nested ones kept) and the text after it, or why it cannot be read. */
export type FrontMatter = { ok: true; fields: Record<string, unknown>; body: string } | { ok: false; error: string };

/** What the yaml package says of `key: a value: with a colon`. */
const COLON_ERRORS = new Set<string>(['BLOCK_AS_IMPLICIT_KEY', 'MULTILINE_IMPLICIT_KEY']);

/** Reads the front matter of a Markdown text. Never throws. */
export function parseFrontMatter(text: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---')
    return { ok: false, error: 'it does not start with a front matter (a line "---", then name: and description:, then "---")' };
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === '---' || l.trim() === '...'));
  if (end < 0) return { ok: false, error: 'its front matter has no closing "---" line' };
  const body = lines.slice(end + 1).join('\n');
  const yamlText = lines.slice(1, end).join('\n');
  let doc = parseDocument(yamlText, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.some((e) => COLON_ERRORS.has(e.code))) {
    // `description: Use when: asked` is not YAML, but skill files are often written so (and read so
    // by the subset reader before this): quote such plain one-line values and read it again.
    const retry = parseDocument(quotePlainColons(yamlText), { prettyErrors: true, uniqueKeys: true });
    if (retry.errors.length === 0) doc = retry;
  }
  const problem = doc.errors[0];
  if (problem) {
    // The file's line: the front matter starts on line 2.
    const line = (problem.linePos?.[0].line ?? 0) + 1;
    const what = problem.message.split(' at line ')[0]!.split('\n')[0]!;
    const hint = COLON_ERRORS.has(problem.code) ? ' (quote a value that holds ": ")' : '';
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

/** Top-level `key: plain value: with a colon` lines with the value single-quoted; other lines as they are. */
function quotePlainColons(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const m = /^([A-Za-z0-9_.-]+):[ \t]+(.*:[ \t].*)$/.exec(line);
      if (!m || /^["'[{|>&*!%@`#]/.test(m[2]!)) return line;
      // A plain value ends where a comment (" #") starts, as in YAML.
      return `${m[1]}: '${m[2]!
        .replace(/[ \t]+#.*$/, '')
        .trimEnd()
        .replace(/'/g, "''")}'`;
    })
    .join('\n');
}
