// Small text helpers shared by the SDK, the CLI and the workflow. Pure, no Node imports.

/** `s` on one line (runs of whitespace become one space), cut to at most `n` characters with "…". */
export function oneLine(s: string, n: number): string {
  return cut(s.replace(/\s+/g, ' ').trim(), n);
}

/** `s` cut to at most `n` characters, ending in "…" when it was longer (whitespace kept). */
export function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
