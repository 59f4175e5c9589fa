// Small text helpers shared by the SDK, the CLI and the workflow. Pure, no Node imports.

/** `s` on one line (runs of whitespace become one space), cut to at most `n` characters with "…". */
export function oneLine(s: string, n: number): string {
  return cut(s.replace(/\s+/g, ' ').trim(), n);
}

/** `s` cut to at most `n` characters, ending in "…" when it was longer (whitespace kept). */
export function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * The thinking text people see for a reply's reasoning: Anthropic's thinking, "(redacted thinking)",
 * and OpenAI's reasoning summaries (an item without one, encrypted only, shows nothing).
 */
export function reasoningText(
  blocks:
    | readonly (
        | { type: 'thinking'; thinking: string }
        | { type: 'redacted_thinking' }
        | { type: 'openai_reasoning'; item: { summary: readonly { text: string }[] } }
      )[]
    | undefined,
): string {
  return (blocks ?? [])
    .flatMap((b) => {
      if (b.type === 'thinking') return [b.thinking];
      if (b.type === 'redacted_thinking') return ['(redacted thinking)'];
      return b.item.summary.map((s) => s.text).filter((t) => t !== '');
    })
    .join('\n');
}

/**
 * A moment as people see it in the CLI and the console, one format everywhere: ISO 8601 in UTC to
 * the second (`2026-01-02T03:04:05Z`); what is not a date is shown as given.
 */
export function shownTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19)}Z`;
}
