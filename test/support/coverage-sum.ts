// Adds up the coverage of a run's groups (test/support/coverage.mjs writes one per group) and says
// it as line and branch figures for src/, counting the files that no test loaded as not run.

/** The lines and branches of one source file, each `[line, 1 when it ran else 0]`. */
export interface FileCoverage {
  lines: [number, 0 | 1][];
  branches: [number, 0 | 1][];
}

/** Coverage by absolute source path. */
export type Coverage = Record<string, FileCoverage>;

/** Covered and total counts. */
export interface Count {
  covered: number;
  total: number;
}

/** What a run covered of src/. */
export interface CoverageSummary {
  /** Over the files some test loaded. */
  lines: Count;
  branches: Count;
  loadedFiles: number;
  /** Source files no test loaded, and their lines. */
  unloaded: { files: number; lines: number };
  /** Lines over all of src/, the unloaded files' lines counted as not run. */
  allLines: Count;
}

// A line or branch ran when it ran in any group; branches are told apart by their line and their
// order on it (Node's report has no other name for a branch).
function union(a: [number, 0 | 1][], b: [number, 0 | 1][]): [number, 0 | 1][] {
  const key = (list: [number, 0 | 1][]) => {
    const seen = new Map<number, number>();
    return list.map(([line, ran]) => {
      const n = seen.get(line) ?? 0;
      seen.set(line, n + 1);
      return [`${line}:${n}`, line, ran] as const;
    });
  };
  const out = new Map<string, [number, 0 | 1]>();
  for (const [k, line, ran] of [...key(a), ...key(b)]) {
    const had = out.get(k);
    out.set(k, [line, had?.[1] === 1 || ran === 1 ? 1 : 0]);
  }
  return [...out.values()].sort((x, y) => x[0] - y[0]);
}

/** The coverage of two groups together. */
export function mergeCoverage(a: Coverage, b: Coverage): Coverage {
  const out: Coverage = { ...a };
  for (const [file, c] of Object.entries(b)) {
    const had = out[file];
    out[file] = had ? { lines: union(had.lines, c.lines), branches: union(had.branches, c.branches) } : c;
  }
  return out;
}

/**
 * The figures of `coverage` for the source files `sources` (path → its line count): those no test
 * loaded are missing from Node's report and count here as lines not run.
 */
export function summarise(coverage: Coverage, sources: Map<string, number>): CoverageSummary {
  const lines = { covered: 0, total: 0 };
  const branches = { covered: 0, total: 0 };
  let loadedFiles = 0;
  for (const [file, c] of Object.entries(coverage)) {
    if (!sources.has(file)) continue;
    loadedFiles++;
    lines.total += c.lines.length;
    lines.covered += c.lines.filter(([, ran]) => ran === 1).length;
    branches.total += c.branches.length;
    branches.covered += c.branches.filter(([, ran]) => ran === 1).length;
  }
  const unloaded = { files: 0, lines: 0 };
  for (const [file, count] of sources) {
    if (coverage[file]) continue;
    unloaded.files++;
    unloaded.lines += count;
  }
  return { lines, branches, loadedFiles, unloaded, allLines: { covered: lines.covered, total: lines.total + unloaded.lines } };
}

/** `72.4 % (1,234 of 1,705)`. */
export function percent(c: Count): string {
  const p = c.total === 0 ? 100 : (100 * c.covered) / c.total;
  return `${p.toFixed(1)} % (${c.covered.toLocaleString('en-US')} of ${c.total.toLocaleString('en-US')})`;
}
