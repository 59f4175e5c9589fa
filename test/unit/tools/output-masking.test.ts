// Secrets in a long command output: the full-output file is masked like the observation, and a
// secret that the head/tail cut went through leaves no part of itself. Real bash processes.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SECRET_MASK, redact, redactPiece } from '../../../src/security/redact.js';
import { commandBaseEnv, MAX_OUTPUT_CHARS, runTerminal } from '../../../src/tools/terminal.js';
import type { TerminalState } from '../../../src/core/types.js';

const SECRET = 'Zq7-w0rker-PQ9x-vALue-81f3c';
const HALF = MAX_OUTPUT_CHARS / 2;

/** Runs a command printing `text` exactly (from a file: no shell quoting), with SECRET as the worker's secret. */
async function run(text: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'mask-'));
  const outputDir = path.join(dir, 'outputs');
  const source = path.join(dir, 'printed.txt');
  await (await import('node:fs/promises')).writeFile(source, text);
  const state: TerminalState = { cwd: dir, env: {} };
  const r = await runTerminal({ command: `cat ${source}` }, state, {
    workspace: dir,
    baseEnv: commandBaseEnv(process.env),
    secrets: [SECRET],
    outputDir,
    spawnHelper: false,
  });
  const files = await readdir(outputDir).catch(() => [] as string[]);
  const spill = files.length ? await readFile(path.join(outputDir, files[0]!), 'utf8') : undefined;
  await rm(dir, { recursive: true, force: true });
  return { content: r.content, spill };
}

/** Whether `text` holds any piece of SECRET of 4 characters or more. */
function leaks(text: string): string | undefined {
  for (let i = 0; i + 4 <= SECRET.length; i++) {
    const piece = SECRET.slice(i, i + 4);
    if (text.includes(piece)) return piece;
  }
  return undefined;
}

test('the full-output file is masked like the observation', async () => {
  // The secret in the omitted middle, and in the shown head.
  const text = `${SECRET}\n${'a'.repeat(HALF)}\n${SECRET}\n${'b'.repeat(HALF)}\n`;
  const { content, spill } = await run(text);
  assert.ok(spill !== undefined, 'the long output was kept in a file');
  assert.equal(leaks(spill), undefined, 'the file holds no part of the secret');
  assert.equal(spill.split(SECRET_MASK).length - 1, 2, 'both places are masked');
  assert.equal(leaks(content), undefined);
  assert.match(content, /The full output is in .*output-\d+\.log/);
});

test('a secret the head/tail cut goes through leaves no part of itself, at either edge', async () => {
  for (const at of [4, 10, SECRET.length - 4]) {
    // The head ends `at` characters into the secret.
    const head = `${'a'.repeat(HALF - at)}${SECRET}${'b'.repeat(HALF + 1000)}`;
    const r1 = await run(head);
    assert.equal(leaks(r1.content), undefined, `head cut ${at} characters in`);
    // The tail starts `at` characters before the secret's end.
    const tail = `${'c'.repeat(HALF + 1000)}${SECRET}${'d'.repeat(HALF - at)}`;
    const r2 = await run(tail);
    assert.equal(leaks(r2.content), undefined, `tail cut ${at} characters before its end`);
    assert.ok(r1.content.includes(SECRET_MASK) && r2.content.includes(SECRET_MASK));
  }
});

test('redactPiece: masks whole secrets anywhere and pieces only at a cut edge', () => {
  const s = 'abcdefghij';
  assert.equal(redactPiece(`x ${s} y abcd`, [s], { after: true }), `x ${SECRET_MASK} y ${SECRET_MASK}`);
  assert.equal(redactPiece(`ghij y ${s}`, [s], { before: true }), `${SECRET_MASK} y ${SECRET_MASK}`);
  // Not at a cut: pieces stay (they are not a secret); three characters or fewer stay even at a cut.
  assert.equal(redactPiece('x abcd', [s], {}), 'x abcd');
  assert.equal(redactPiece('x abc', [s], { after: true }), 'x abc');
  assert.equal(redactPiece('hij x', [s], { before: true }), 'hij x');
  // A provider-style key cut short at the end.
  assert.equal(redactPiece('key: sk-ab', [], { after: true }), `key: ${SECRET_MASK}`);
  assert.equal(redact('key: sk-ab', []), 'key: sk-ab');
  // The longest piece wins when secrets share a start.
  assert.equal(redactPiece('x 1234567', ['12345678', '1234xx'], { after: true }), `x ${SECRET_MASK}`);
});
