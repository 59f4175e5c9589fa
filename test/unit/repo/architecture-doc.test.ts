// docs/architecture.md must match the code: the numbers it quotes (its "Numbers this page quotes"
// table, and the same figures in its prose and in docs/live.md) against the constants, and every
// path it names against the tree. A change to either side that the other does not follow fails here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { FLUSH_MS } from '../../../src/live/publisher.js';
import { PAYLOAD_SIZE_THRESHOLD } from '../../../src/storage/local-payloads.js';
import { DEFAULTS } from '../../../src/core/types/workflow.js';
import { MODEL_CALL, TOOL_CALL } from '../../../src/conversation/workflow/activity-options.js';
import { IDLE, MAX_HISTORY, MAX_ITEMS } from '../../../src/live/workflow/live-stream.js';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const doc = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');

/** The code's value of each name the table may quote. */
const CONSTANTS: Record<string, unknown> = {
  FLUSH_MS,
  MAX_ITEMS,
  MAX_HISTORY,
  IDLE,
  'DEFAULTS.continueAsNewEverySteps': DEFAULTS.continueAsNewEverySteps,
  'DEFAULTS.maxIterations': DEFAULTS.maxIterations,
  'DEFAULTS.condenser.maxEvents': DEFAULTS.condenser.maxEvents,
  'DEFAULTS.hostWaitMs': DEFAULTS.hostWaitMs,
  'DEFAULTS.idleTimeoutMs': DEFAULTS.idleTimeoutMs,
  PAYLOAD_SIZE_THRESHOLD,
  'MODEL_CALL.heartbeatTimeout': MODEL_CALL.heartbeatTimeout,
  'TOOL_CALL.heartbeatTimeout': TOOL_CALL.heartbeatTimeout,
};

const UNIT_MS: Record<string, number> = {
  ms: 1,
  second: 1000,
  seconds: 1000,
  minute: 60_000,
  minutes: 60_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** `150 ms` → 150, `15 minutes` → 900000 (durations in ms); `8000 events` → 8000; a number as it is. */
function quantity(value: unknown): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)(?:\s+(\w+))?$/.exec(String(value).trim());
  assert.ok(m, `not a quantity: ${String(value)}`);
  return Number(m[1]) * (m[2] ? (UNIT_MS[m[2]] ?? 1) : 1);
}

function quotedTable(): { what: string; value: string; name: string }[] {
  const section = doc.slice(doc.indexOf('## Numbers this page quotes'));
  assert.ok(section.length > 0, 'docs/architecture.md has its "Numbers this page quotes" section');
  const end = section.indexOf('\n## ', 3);
  return section
    .slice(0, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| what') && !l.startsWith('|---'))
    .map((l) => {
      const [what, value, code] = l
        .split('|')
        .slice(1, 4)
        .map((c) => c.trim());
      return { what: what!, value: value!, name: /^`([^`]+)`/.exec(code!)?.[1] ?? code! };
    });
}

test('quantity reads the forms the table uses', () => {
  assert.equal(quantity('150 ms'), 150);
  assert.equal(quantity('15 minutes'), 900_000);
  assert.equal(quantity('1 second'), 1000);
  assert.equal(quantity('7 days'), 7 * 24 * 60 * 60 * 1000);
  assert.equal(quantity('8000 events'), 8000);
  assert.equal(quantity(2000), 2000);
});

test('every number the page quotes is the code’s, and every constant listed is quoted', () => {
  const rows = quotedTable();
  for (const row of rows) {
    assert.ok(row.name in CONSTANTS, `the table quotes ${row.name}, which this test does not know: add it to CONSTANTS`);
    assert.equal(
      quantity(row.value),
      quantity(CONSTANTS[row.name]),
      `docs/architecture.md says "${row.what}: ${row.value}"; ${row.name} is ${String(CONSTANTS[row.name])}`,
    );
  }
  assert.deepEqual(rows.map((r) => r.name).sort(), Object.keys(CONSTANTS).sort());
});

test('the prose says the same as the table: live lines every FLUSH_MS', () => {
  const live = readFileSync(path.join(ROOT, 'docs', 'live.md'), 'utf8');
  const said = [...`${doc}\n${live}`.matchAll(/publish(?:es)? (?:them|it) every (\d+) ms/g)].map((m) => Number(m[1]));
  assert.ok(said.length >= 2, 'architecture.md and live.md each say how often live lines are published');
  for (const ms of said) assert.equal(ms, FLUSH_MS);
});

test('every path the page names exists', () => {
  const named = new Set<string>();
  for (const m of doc.matchAll(/`((?:src|test|docs|console-page|bench|scripts|examples)\/[^`\s]*)`/g)) named.add(m[1]!);
  // The layout block: a path at the start of each line.
  const layout = doc.slice(doc.indexOf('## Layout'));
  for (const m of layout.matchAll(/^((?:src|test|docs|console-page|bench|scripts|examples)\/\S*)/gm)) named.add(m[1]!.replace(/,$/, ''));
  assert.ok(named.size >= 20, `found ${named.size} paths`);
  for (const p of named) {
    if (/[*<…]/.test(p)) continue; // a pattern, not a path
    assert.ok(existsSync(path.join(ROOT, p)), `docs/architecture.md names ${p}, which does not exist`);
  }
});

test('the runner parts the page lists are the ones that take a slice of the run, and each exists', () => {
  // `export type XRun = Pick<ConversationRun, …>` (possibly with `& OtherRun`) in the runner's files:
  // src/conversation/workflow/runner/ and the workflow/ folders of the capabilities it calls.
  const src = path.join(ROOT, 'src');
  const inCode = new Set<string>();
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && f.split(path.sep).includes('workflow'),
  );
  for (const file of files) {
    const text = readFileSync(path.join(src, file), 'utf8');
    for (const m of text.matchAll(/export type (\w+Run) = Pick<\s*ConversationRun/g)) inCode.add(m[1]!);
  }
  const row = doc.split('\n').find((l) => l.startsWith('| `src/conversation/workflow/runner/`'));
  assert.ok(row, 'docs/architecture.md has a row for src/conversation/workflow/runner/');
  const listed = /\(([^)]*): Picks of `ConversationRun`/.exec(row)?.[1];
  assert.ok(listed, 'the runner row lists the parts\u2019 slices ("…: Picks of `ConversationRun`")');
  const inDoc = new Set([...listed.matchAll(/`(\w+Run)`/g)].map((m) => m[1]!));
  assert.ok(inCode.size >= 9, `found ${inCode.size} slices in the runner`);
  assert.deepEqual([...inDoc].sort(), [...inCode].sort());
});
