// A test must be able to fail (CONTRIBUTING.md): every test's body checks something. Each
// `test(…)` / `it(…)` callback in test/ must call an assertion: `assert` or one of its methods,
// `expect`, `t.plan`, a helper named `assert…` or `expect…`, or one of CHECKING_HELPERS. A body that
// only runs code passes however slowly or wrongly that code behaves.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const TEST_DIR = path.join(import.meta.dirname, '..', '..');

/**
 * Helpers that fail the test when what they wait for never holds: `waitFor` (test/support/harness.ts,
 * and Playwright's locator.waitFor) throws at its deadline; `plan` is node:test's `t.plan`.
 */
const CHECKING_HELPERS = new Set(['waitFor', 'plan']);

/** The names along a callee, innermost last: `assert.equal` → ['equal', 'assert']; `page.x().waitFor` → ['waitFor', 'x', 'page']. */
function calleeNames(e: ts.Expression): string[] {
  if (ts.isIdentifier(e)) return [e.text];
  if (ts.isPropertyAccessExpression(e)) return [e.name.text, ...calleeNames(e.expression)];
  if (ts.isCallExpression(e) || ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAwaitExpression(e))
    return calleeNames(e.expression);
  return [];
}

/** Whether `node` calls an assertion anywhere inside it (helpers defined in the body included). */
function checks(node: ts.Node): boolean {
  if (ts.isCallExpression(node)) {
    const names = calleeNames(node.expression);
    const called = names[0] ?? '';
    // assert(…), assert.equal(…), t.assert.ok(…), expect(…).toBe(…), assertSame(…), x.waitFor(…)
    if (names.some((n) => n === 'assert' || n === 'expect') || /^(assert|expect)([A-Z_]|$)/.test(called) || CHECKING_HELPERS.has(called))
      return true;
  }
  return ts.forEachChild(node, checks) ?? false;
}

/** `test(…)`, `it(…)`, `test.only(…)`, `t.test(…)`: the calls that declare a test with a body that runs. */
function declaresTest(call: ts.CallExpression): boolean {
  const c = call.expression;
  if (ts.isIdentifier(c)) return c.text === 'test' || c.text === 'it';
  return ts.isPropertyAccessExpression(c) && ts.isIdentifier(c.expression) && ['test', 'it', 't'].includes(c.expression.text)
    ? ['only', 'test'].includes(c.name.text)
    : false;
}

/** The tests in `source` whose body calls no assertion: `file:line name`. */
function testsThatAssertNothing(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && declaresTest(node)) {
      const body = node.arguments.find((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a));
      if (body && !checks(body)) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        found.push(`${file}:${line} ${node.arguments[0]?.getText(sf) ?? ''}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' || e.name === 'histories' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

test('the check tells a test that asserts from one that only runs code', () => {
  const source = `
    test('asserts', () => assert.equal(f(), 1));
    test('asserts through a helper of its own', async () => { const same = (x) => assert.deepEqual(x, []); same(g()); });
    test('waits for a condition', async () => { await waitFor('it', () => done); });
    test('plans', (t) => { t.plan(1); g(t); });
    test('uses the context', (t) => { t.assert.ok(f()); });
    test('keeps what it expected', () => { const expected = []; expected.push(f()); });
    test('runs code only', () => { f(); }); // assert is only in this comment
    it('awaits only', async () => { await g(); });
  `;
  assert.deepEqual(testsThatAssertNothing('sample.ts', source), [
    "sample.ts:7 'keeps what it expected'",
    "sample.ts:8 'runs code only'",
    "sample.ts:9 'awaits only'",
  ]);
});

test('every test in test/ asserts something', () => {
  const files = testFiles(TEST_DIR);
  assert.ok(files.length > 100, `found ${files.length} test files under ${TEST_DIR}`);
  const silent = files.flatMap((f) => testsThatAssertNothing(path.relative(TEST_DIR, f), readFileSync(f, 'utf8')));
  assert.deepEqual(silent, [], `tests that check nothing (give each an assertion):\n${silent.join('\n')}`);
});
