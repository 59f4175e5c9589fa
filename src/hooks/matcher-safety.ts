// Whether a hook matcher's regular expression is safe to run inside workflow code. JavaScript's
// regex engine backtracks: `(a+)+$` against a long name takes exponential time, and in a workflow
// task that trips the deadlock detector and fails the task. A conservative static check, on the
// pattern's text, refuses what can backtrack badly; matchers are tool names, so nothing useful is
// lost. Pure and without imports: the workflow uses it too.

/** The longest matcher accepted (tool-name patterns are short). */
export const MAX_MATCHER_LENGTH = 256;

/** The most unbounded repeats (`*`, `+`, `{n,}`) a matcher may have: each one multiplies the work (`.*.*.*.*x`). */
export const MAX_MATCHER_REPEATS = 3;

interface Group {
  /** A quantifier (`*`, `+`, `?`, `{…}`) somewhere inside, nested groups included. */
  quantified: boolean;
  /** An alternation `|` somewhere inside, nested groups included. */
  alternation: boolean;
}

/** `{n}`, `{n,}` or `{n,m}` at `i`: its length, else 0 (then `{` is a literal character). */
function braceQuantifier(p: string, i: number): number {
  const m = /^\{\d+(,\d*)?\}/.exec(p.slice(i, i + 24));
  return m ? m[0].length : 0;
}

/**
 * Why the regular expression `source` could backtrack catastrophically, or undefined when it
 * cannot by this check: a repeated group (`(…)*`, `(…)+`, `(…){n,}`) that holds a quantifier or an
 * alternation (`(a+)+`, `(a*)*`, `(a|aa)+`, `(\w+\s?)*`), a backreference (`\1`, `\k<name>`), more
 * than {@link MAX_MATCHER_REPEATS} unbounded repeats, or a pattern longer than
 * {@link MAX_MATCHER_LENGTH}. Deliberately stricter than needed.
 */
export function unsafeMatcherReason(source: string): string | undefined {
  if (source.length > MAX_MATCHER_LENGTH) return `is longer than ${MAX_MATCHER_LENGTH} characters`;
  const p = source;
  const stack: Group[] = [{ quantified: false, alternation: false }];
  const top = () => stack[stack.length - 1]!;
  let repeats = 0;
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '\\') {
      const next = p[i + 1] ?? '';
      if (/[1-9]/.test(next) || (next === 'k' && p[i + 2] === '<')) return 'uses a backreference, which can take exponential time';
      i += 2;
      continue;
    }
    if (c === '[') {
      // A character class: skip to its closing `]` (escapes inside; `[]` and `[^]` are whole classes in JavaScript).
      i++;
      if (p[i] === '^') i++;
      while (i < p.length && p[i] !== ']') i += p[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === '(') {
      stack.push({ quantified: false, alternation: false });
      i++;
      // `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`: the group's opening, not an atom.
      if (p[i] === '?') {
        i++;
        if (p[i] === '<' && p[i + 1] !== '=' && p[i + 1] !== '!') {
          while (i < p.length && p[i] !== '>') i++;
        }
        i++;
      }
      continue;
    }
    if (c === ')') {
      const inner = stack.length > 1 ? stack.pop()! : { quantified: false, alternation: false };
      i++;
      const q = p[i] === '*' || p[i] === '+' ? 1 : p[i] === '{' ? braceQuantifier(p, i) : 0;
      const repeated = q > 0;
      if (repeated && (inner.quantified || inner.alternation)) {
        return 'repeats a group that holds a quantifier or an alternation (like (a+)+ or (a|aa)+), which can take exponential time';
      }
      const outer = top();
      outer.quantified ||= inner.quantified || repeated || p[i] === '?';
      outer.alternation ||= inner.alternation;
      if (p[i] === '*' || p[i] === '+' || (q > 1 && /,\}$/.test(p.slice(i, i + q)))) repeats++;
      if (q > 0) i += q;
      else if (p[i] === '?') i++;
      if (p[i] === '?') i++; // lazy
      continue;
    }
    if (c === '|') {
      top().alternation = true;
      i++;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      top().quantified = true;
      if (c !== '?') repeats++;
      i++;
      continue;
    }
    if (c === '{') {
      const q = braceQuantifier(p, i);
      if (q > 0) top().quantified = true;
      if (q > 0 && /,\}$/.test(p.slice(i, i + q))) repeats++;
      i += q || 1;
      continue;
    }
    i++;
  }
  return repeats > MAX_MATCHER_REPEATS
    ? `has more than ${MAX_MATCHER_REPEATS} unbounded repeats (*, +, {n,}), which can take a long time`
    : undefined;
}
