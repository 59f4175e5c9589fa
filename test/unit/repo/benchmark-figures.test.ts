// docs/benchmarks.md keeps its figures in tables; a ratio quoted in its prose (a goal's summary, a
// note under a table) must be one of them, so that a table retaken leaves no stale headline behind.
// A ratio in double quotes is a quotation (a struck claim), not a figure of today.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const BENCHMARKS = path.join(import.meta.dirname, '..', '..', '..', 'docs', 'benchmarks.md');

/** Ratios written as `2.28×` or `0.03–0.08×` (a size such as `50 × 10` has a space and is not one). */
const RATIO = /\d[\d.,]*(?:–\d[\d.,]*)?×/g;

/** The ratios in a Markdown text's table rows, and those in the rest of it (code and quotations left out). */
function ratios(markdown: string): { tables: Set<string>; prose: string[] } {
  const tables = new Set<string>();
  const prose: string[] = [];
  let code = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) code = !code;
    if (code) continue;
    if (line.trimStart().startsWith('|')) for (const r of line.match(RATIO) ?? []) tables.add(r);
    else prose.push(...(line.replace(/`[^`]*`|"[^"]*"/g, '').match(RATIO) ?? []));
  }
  return { tables, prose };
}

test('the check finds a ratio in prose that no table holds', () => {
  const { tables, prose } = ratios(
    ['| what | today |', '|---|---|', '| per step | **2.28×** (50.8 against 22.3 ms) |', '', 'The fair bench gives 3.29×, 50 × 10.'].join(
      '\n',
    ),
  );
  assert.deepEqual([...tables], ['2.28×']);
  assert.deepEqual(prose, ['3.29×']);
});

test("every ratio in docs/benchmarks.md's prose is one of its tables' figures", () => {
  const { tables, prose } = ratios(readFileSync(BENCHMARKS, 'utf8'));
  assert.ok(tables.size > 10, `found ${tables.size} ratios in the tables`);
  const stale = prose.filter((r) => !tables.has(r));
  assert.deepEqual(stale, [], `ratios in the prose that no table holds: ${stale.join(', ')}`);
});
