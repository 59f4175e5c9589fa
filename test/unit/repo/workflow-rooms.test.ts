// The workflow room holds: the workflow bundle's real file list (scripts/workflow-files.mjs, the same
// entry point the worker bundles) reaches outside the room (the workflow/ folders of src/) only into
// the pure modules allowed,
// imports no package but Temporal's workflow side and zod, lint bans Node in every one of its files,
// and src/ has no import circle (type imports included).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
// @ts-expect-error: a plain .mjs script (no types), shared with eslint.config.js
import { ALLOWED_OUTSIDE, ALLOWED_PACKAGES, inWorkflowRoom, workflowBundle } from '../../../scripts/workflow-files.mjs';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const bundle = (workflowBundle as () => { files: string[]; packages: Record<string, string[]> })();
const allowedOutside = new Set(ALLOWED_OUTSIDE as string[]);
const inRoom = inWorkflowRoom as (file: string) => boolean;

test('the room is the workflow/ folders of src/', () => {
  assert.ok(inRoom('src/conversation/workflow/conversation.ts') && inRoom('src/conversation/workflow/runner/turn.ts'));
  assert.ok(inRoom('src/time-travel/workflow/rewind-rules.ts'));
  assert.ok(!inRoom('src/conversation/activities.ts') && !inRoom('src/tools/in-workflow.ts') && !inRoom('test/workflow/x.ts'));
});

test('the bundle reaches outside the workflow/ folders only into the allowed pure modules', () => {
  assert.ok(bundle.files.includes('src/conversation/workflow/conversation.ts'), 'the list is the bundle’s');
  assert.ok(bundle.files.length >= 40, `${bundle.files.length} files`);
  const outside = bundle.files.filter((f) => !inRoom(f));
  assert.deepEqual(
    outside.filter((f) => !allowedOutside.has(f)),
    [],
    'a workflow file imports (at run time) a module outside the room: import only its types, or allow it in scripts/workflow-files.mjs if it is pure',
  );
  for (const f of allowedOutside) assert.ok(existsSync(path.join(ROOT, f)), `scripts/workflow-files.mjs allows ${f}, which does not exist`);
});

test('the bundle imports no package but the allowed ones (no Node built-in)', () => {
  const allowed = new Set(ALLOWED_PACKAGES as string[]);
  for (const [file, packages] of Object.entries(bundle.packages)) {
    for (const p of packages) assert.ok(allowed.has(p), `${file} imports ${p}`);
  }
});

test('lint bans Node imports in every file of the bundle', async () => {
  const eslint = new ESLint({ cwd: ROOT });
  for (const file of bundle.files) {
    const config = (await eslint.calculateConfigForFile(path.join(ROOT, file))) as { rules?: Record<string, unknown> };
    const rule = config.rules?.['@typescript-eslint/no-restricted-imports'];
    assert.ok(Array.isArray(rule) && JSON.stringify(rule).includes('node:*'), `${file}: no Node ban`);
    if (inRoom(file))
      assert.equal(config.rules?.['workflow-room/runtime-imports']?.toString().startsWith('2'), true, `${file}: no room rule`);
  }
});

/** Every relative import of a TypeScript file (type imports and re-exports included), as repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)) {
    out.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!.replace(/\.js$/, '.ts'))));
  }
  return out;
}

/** The import circles among `files` (each found once, as the path that closes it). */
function circles(files: readonly string[], edges: (file: string) => string[] = importsOf): string[][] {
  const inRoom = new Set(files);
  const graph = new Map(files.map((f) => [f, edges(f).filter((t) => inRoom.has(t))]));
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === 'open') found.push([...stack.slice(stack.indexOf(t)), t]);
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return found;
}

test('circles are found (the check itself)', () => {
  assert.ok(importsOf('src/conversation/workflow/conversation.ts').includes('src/conversation/workflow/runner/turn.ts'));
  // A circle through two real files: conversation.ts reaches turn.ts, so turn.ts reaching back closes one.
  const withBackEdge = (f: string) =>
    f === 'src/conversation/workflow/runner/turn.ts' ? [...importsOf(f), 'src/conversation/workflow/conversation.ts'] : importsOf(f);
  assert.ok(circles(['src/conversation/workflow/conversation.ts', 'src/conversation/workflow/runner/turn.ts'], withBackEdge).length > 0);
});

test('src/ has no import circle, type imports included', () => {
  const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.posix.join('src', f.split(path.sep).join('/')));
  assert.ok(files.includes('src/testing/gates.ts') && files.includes('src/conversation/workflow/conversation.ts'), 'the whole of src/');
  assert.deepEqual(
    circles(files).map((c) => c.join(' → ')),
    [],
  );
});
