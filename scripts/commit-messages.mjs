#!/usr/bin/env node
// The commit message habit (CONTRIBUTING.md): a subject of at most 72 characters, then a blank line
// and a body. Checks every commit since the habit began (CI), or one message file (the commit-msg
// hook in .githooks/). Older commits are history and stay as they are.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** The last commit made before the habit: everything after it is checked. */
export const HABIT_SINCE = '52725a151bd441bf8ad49eb29a94cab5f8c7f57e';

/** The most characters a subject may have. */
export const SUBJECT_MAX = 72;

/**
 * What is wrong with one commit message (its lines as git stores them, comments already dropped);
 * empty when nothing is.
 * @param {string} message
 * @returns {string[]}
 */
export function messageProblems(message) {
  const lines = message.replace(/\s+$/, '').split('\n');
  const subject = lines[0] ?? '';
  const problems = [];
  if (subject.trim() === '') problems.push('the subject is empty');
  if ([...subject].length > SUBJECT_MAX)
    problems.push(`the subject has ${[...subject].length} characters (at most ${SUBJECT_MAX}): move the rest to the body`);
  if (/\.\s*$/.test(subject) && !/\.\.\.\s*$/.test(subject)) problems.push('the subject ends with a period');
  if (lines.length > 1 && lines[1]?.trim() !== '') problems.push('no blank line between the subject and the body');
  return problems;
}

/** Each commit after HABIT_SINCE (or HEAD alone when that commit is not in this clone) with its problems. */
function checkHistory() {
  const git = (...args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  let range = `${HABIT_SINCE}..HEAD`;
  try {
    git('cat-file', '-e', `${HABIT_SINCE}^{commit}`);
  } catch {
    range = '-1';
    console.log(`commit messages: ${HABIT_SINCE.slice(0, 7)} is not in this clone (shallow?): checking HEAD only`);
  }
  const log = git('log', '--format=%H%x00%B%x01', range);
  let bad = 0;
  let count = 0;
  for (const entry of log.split('\x01')) {
    const [hash, body] = entry.replace(/^\n/, '').split('\x00');
    if (!hash || body === undefined) continue;
    count++;
    for (const problem of messageProblems(body)) {
      bad++;
      console.error(`${hash.slice(0, 7)} ${body.split('\n')[0]}\n  ${problem}`);
    }
  }
  console.log(`commit messages: ${count} checked, ${bad} problem(s)`);
  return bad === 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2] === '--message-file' ? process.argv[3] : undefined;
  if (file) {
    const message = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .join('\n');
    const problems = messageProblems(message);
    for (const p of problems) console.error(`commit message: ${p}`);
    process.exit(problems.length ? 1 : 0);
  }
  process.exit(checkHistory() ? 0 : 1);
}
