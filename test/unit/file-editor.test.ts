// src/tools/file-editor.ts on its own: real files.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { editFile } from '../../src/tools/file-editor.js';

const tmp = (p: string) => mkdtemp(path.join(tmpdir(), p));

describe('file_editor', () => {
  async function setup() {
    const workspace = await tmp('fe-ws-');
    const undoDir = await tmp('fe-undo-');
    return { workspace, ctx: { workspace, undoDir } };
  }

  test('create, view with line numbers, str_replace, insert, undo_edit', async () => {
    const { workspace, ctx } = await setup();
    let r = await editFile({ command: 'create', path: 'src/a.txt', file_text: 'one\ntwo\nthree\n' }, ctx);
    assert.equal(r.isError, false, r.content);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'one\ntwo\nthree\n');

    r = await editFile({ command: 'view', path: path.join(workspace, 'src/a.txt') }, ctx);
    assert.match(r.content, /^\s+1\tone$/m);
    assert.match(r.content, /^\s+3\tthree$/m);
    r = await editFile({ command: 'view', path: 'src/a.txt', view_range: [2, -1] }, ctx);
    assert.doesNotMatch(r.content, /\tone/);
    assert.match(r.content, /\s+2\ttwo/);

    r = await editFile({ command: 'str_replace', path: 'src/a.txt', old_str: 'two', new_str: 'TWO' }, ctx);
    assert.equal(r.isError, false, r.content);
    r = await editFile({ command: 'insert', path: 'src/a.txt', insert_line: 0, new_str: 'zero' }, ctx);
    assert.equal(r.isError, false, r.content);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'zero\none\nTWO\nthree\n');

    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.equal(await readFile(path.join(workspace, 'src/a.txt'), 'utf8'), 'one\ntwo\nthree\n');
    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.match(r.content, /removed/);
    r = await editFile({ command: 'undo_edit', path: 'src/a.txt' }, ctx);
    assert.equal(r.isError, true);
  });

  test('directory view lists two levels and leaves hidden files out', async () => {
    const { workspace, ctx } = await setup();
    await mkdir(path.join(workspace, 'pkg/inner/deep'), { recursive: true });
    await writeFile(path.join(workspace, 'pkg/inner/x.ts'), '');
    await writeFile(path.join(workspace, '.secret'), '');
    const r = await editFile({ command: 'view', path: '.' }, ctx);
    assert.match(r.content, /pkg\//);
    assert.match(r.content, /pkg\/inner\//);
    assert.doesNotMatch(r.content, /x\.ts/);
    assert.doesNotMatch(r.content, /\.secret/);
  });

  test('errors are observations, not exceptions', async () => {
    const { workspace, ctx } = await setup();
    await writeFile(path.join(workspace, 'dup.txt'), 'a\nb\na\n');
    const cases: [unknown, RegExp][] = [
      [{ command: 'str_replace', path: 'dup.txt', old_str: 'a', new_str: 'c' }, /occurs 2 times.*lines 1, 3/],
      [{ command: 'str_replace', path: 'dup.txt', old_str: 'zzz', new_str: 'c' }, /does not occur/],
      [{ command: 'create', path: 'dup.txt', file_text: 'other' }, /already exists/],
      [{ command: 'view', path: 'missing.txt' }, /does not exist/],
      [{ command: 'insert', path: 'dup.txt', insert_line: 99, new_str: 'x' }, /past the end/],
      [{ command: 'explode', path: 'dup.txt' }, /Invalid arguments for file_editor: command/],
      [{ path: 'dup.txt' }, /Invalid arguments/],
      [{ command: 'view', path: '/etc/passwd' }, /outside the workspace/],
      [{ command: 'view', path: '../../etc/passwd' }, /outside the workspace/],
      [{ command: 'create', path: '../escape.txt', file_text: 'x' }, /outside the workspace/],
    ];
    for (const [args, expected] of cases) {
      const r = await editFile(args, ctx);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(r.content, expected, JSON.stringify(args));
    }
    // Creating identical content again is fine (a retried call).
    const again = await editFile({ command: 'create', path: 'dup.txt', file_text: 'a\nb\na\n' }, ctx);
    assert.equal(again.isError, false);
  });

  test('a symlink cannot lead out of the workspace', async () => {
    const { workspace, ctx } = await setup();
    const outside = await tmp('fe-outside-');
    await writeFile(path.join(outside, 'target.txt'), 'secret');
    await symlink(outside, path.join(workspace, 'link'));
    const r = await editFile({ command: 'view', path: 'link/target.txt' }, ctx);
    assert.equal(r.isError, true);
    assert.match(r.content, /outside the workspace/);
  });

  test('binary and huge files are refused, long views clipped', async () => {
    const { workspace, ctx } = await setup();
    await writeFile(path.join(workspace, 'bin.dat'), Buffer.from([1, 0, 2]));
    assert.match((await editFile({ command: 'view', path: 'bin.dat' }, ctx)).content, /binary/);
    await writeFile(path.join(workspace, 'big.txt'), 'x'.repeat(11 * 1024 * 1024));
    assert.match((await editFile({ command: 'view', path: 'big.txt' }, ctx)).content, /over 10 MB/);
    await writeFile(path.join(workspace, 'long.txt'), 'line\n'.repeat(10_000));
    assert.match((await editFile({ command: 'view', path: 'long.txt' }, ctx)).content, /clipped at 16000/);
  });
});
