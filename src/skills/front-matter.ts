// The front matter of a SKILL.md: the lines between a first `---` line and the next. A small,
// forgiving reader of the YAML subset skill files use (no YAML dependency): top-level `key: value`
// with plain, 'single' or "double" quoted values, `|` and `>` block scalars, plain values continued
// on indented lines; nested maps and lists (metadata, allowed-tools) are skipped. Pure.

/** The top-level scalar fields of a front matter, or why it cannot be read. */
export type FrontMatter = { ok: true; fields: Record<string, string>; body: string } | { ok: false; error: string };

const KEY_LINE = /^([A-Za-z0-9_.-]+)\s*:(?:\s+(.*))?$/;

/** Reads the front matter of a Markdown text. */
export function parseFrontMatter(text: string): FrontMatter {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---')
    return { ok: false, error: 'it does not start with a front matter (a line "---", then name: and description:, then "---")' };
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === '---' || l.trim() === '...'));
  if (end < 0) return { ok: false, error: 'its front matter has no closing "---" line' };
  const fm = lines.slice(1, end);
  const fields: Record<string, string> = {};
  let i = 0;
  while (i < fm.length) {
    const line = fm[i]!;
    if (line.trim() === '' || line.trimStart().startsWith('#') || /^\s/.test(line) || line.startsWith('- ') || line === '-') {
      i++; // blank, comment, or part of a nested value we skip
      continue;
    }
    const m = KEY_LINE.exec(line.trimEnd());
    if (!m) return { ok: false, error: `front matter line ${i + 2} is not "key: value": ${JSON.stringify(line.slice(0, 80))}` };
    const key = m[1]!;
    const raw = (m[2] ?? '').trim();
    // The indented lines that follow belong to this key.
    let j = i + 1;
    while (j < fm.length && (fm[j]!.trim() === '' || /^\s/.test(fm[j]!) || fm[j]!.startsWith('- ') || fm[j] === '-')) j++;
    const rest = fm.slice(i + 1, j);
    i = j;
    const value = scalar(raw, rest);
    if (typeof value === 'object') return { ok: false, error: `front matter "${key}": ${value.error}` };
    if (value !== undefined) fields[key] = value;
  }
  return { ok: true, fields, body: lines.slice(end + 1).join('\n') };
}

/** A key's value from its own line and the lines under it; undefined for nested maps and lists. */
function scalar(raw: string, rest: string[]): string | undefined | { error: string } {
  const block = /^([|>])([+-]?)\d*([+-]?)(\s+#.*)?$/.exec(raw);
  if (block) {
    const chomp = block[2] || block[3];
    const content = dedent(rest);
    let text = block[1] === '|' ? content.join('\n') : fold(content);
    text = chomp === '+' ? `${text}\n` : text.replace(/\n+$/, '');
    return chomp === '-' || chomp === '+' ? text : text.replace(/\s+$/, '');
  }
  if (raw.startsWith('"')) {
    const close = findClosingDouble(raw);
    if (close < 0) return { error: 'a double-quoted value must end on its line' };
    try {
      return JSON.parse(raw.slice(0, close + 1)) as string;
    } catch {
      return raw.slice(1, close); // YAML escapes JSON does not know: keep the text as it is
    }
  }
  if (raw.startsWith("'")) {
    const m = /^'((?:[^']|'')*)'/.exec(raw);
    if (!m) return { error: 'a single-quoted value must end on its line' };
    return m[1]!.replace(/''/g, "'");
  }
  const plain = raw.replace(/\s+#.*$/, '');
  const more = rest.filter((l) => l.trim() !== '');
  if (plain === '') {
    // A nested map or list (metadata:, allowed-tools:) is not a scalar; an indented plain text is.
    if (more.length === 0 || more.some((l) => /^\s*(- |-$)/.test(l) || /^\s*[A-Za-z0-9_.-]+\s*:(\s|$)/.test(l))) return undefined;
    return fold(dedent(rest));
  }
  return more.length ? `${plain} ${fold(dedent(rest))}`.trim() : plain;
}

function findClosingDouble(raw: string): number {
  for (let k = 1; k < raw.length; k++) {
    if (raw[k] === '\\') k++;
    else if (raw[k] === '"') return k;
  }
  return -1;
}

function dedent(lines: string[]): string[] {
  const indents = lines.filter((l) => l.trim() !== '').map((l) => /^\s*/.exec(l)![0].length);
  const n = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(n));
}

/** YAML folding: lines of a paragraph joined by spaces, blank lines kept as newlines. */
function fold(lines: string[]): string {
  const out: string[] = [];
  let para: string[] = [];
  for (const l of lines) {
    if (l.trim() === '') {
      if (para.length) out.push(para.join(' '));
      para = [];
      out.push('');
    } else para.push(l.trim());
  }
  if (para.length) out.push(para.join(' '));
  return out
    .join('\n')
    .replace(/\n{2,}/g, (m) => '\n'.repeat(m.length - 1))
    .trim();
}
