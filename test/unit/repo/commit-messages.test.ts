// The commit message habit (scripts/commit-messages.mjs, CONTRIBUTING.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
// @ts-expect-error: a plain .mjs script (no types), shared with the commit-msg hook and CI
import { messageProblems, SUBJECT_MAX } from '../../../scripts/commit-messages.mjs';

const problems = messageProblems as (message: string) => string[];

test('a short subject, a blank line, a body: no problem', () => {
  assert.deepEqual(problems('Cut the step time\n\nThe why, and 76 -> 30 ms a step.\n'), []);
  assert.deepEqual(problems('Cut the step time'), []);
  assert.deepEqual(problems(`${'x'.repeat(SUBJECT_MAX as number)}\n`), []);
});

test('what breaks the habit is named', () => {
  assert.match(problems(`${'x'.repeat(73)}\n\nbody`).join(), /73 characters \(at most 72\)/);
  assert.match(problems('Cut the step time.').join(), /ends with a period/);
  assert.match(problems('Cut the step time\nand the body at once').join(), /no blank line/);
  assert.match(problems('\n\nonly a body').join(), /subject is empty/);
  // Characters, not bytes: 72 accented letters pass.
  assert.deepEqual(problems('é'.repeat(72)), []);
});
