// src/tools/file-editor.ts on its own: real files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { open, readFile, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { conversationFolder } from '../../../src/conversation/conversation-id.js';
import { editFile } from '../../../src/tools/file-editor.js';
import type { ToolResult } from '../../../src/core/types.js';
import { tempDir } from '../../support/temp-dirs.js';

const tmp = tempDir;

/**
 * A blocking open of a FIFO never returns while no writer opens it (the bug): the call must come back
 * with its answer with no writer ever there. The deadline is only there to turn "never" into a
 * failure (generous for a loaded machine); then the FIFO is opened for writing, so that the stuck
 * open returns and the process can end.
 */
const NEVER_MS = 60_000;

/** `call`'s result; when it has not come back by NEVER_MS, it blocked on `fifo`: unblock it and fail. */
async function returnsOrUnblock(call: Promise<ToolResult>, fifo: string): Promise<ToolResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), NEVER_MS)));
  const r = await Promise.race([call, deadline]);
  clearTimeout(timer);
  if (r !== 'hung') return r;
  const w = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
  await w?.close();
  await call.catch(() => undefined);
  assert.fail('the call did not come back while the FIFO had no writer: it blocked on it');
}

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
    assert.match(r.content, /link is a symbolic link; file_editor does not follow links/);
  });

  // Finding: "file_editor writes through a dangling symlink".
  test('create on a dangling link to a file outside is refused; nothing is written outside', async () => {
    const { workspace, ctx } = await setup();
    const outside = await tmp('fe-outside-');
    await symlink(path.join(outside, 'planted.txt'), path.join(workspace, 'x'));
    const r = await editFile({ command: 'create', path: 'x', file_text: 'pwned\n' }, ctx);
    assert.equal(r.isError, true, r.content);
    assert.match(r.content, /x is a symbolic link/);
    assert.ok(!existsSync(path.join(outside, 'planted.txt')));
    // Nor through a linked parent directory (its missing file would be made outside).
    await symlink(outside, path.join(workspace, 'd'));
    const r2 = await editFile({ command: 'create', path: 'd/new.txt', file_text: 'pwned\n' }, ctx);
    assert.equal(r2.isError, true, r2.content);
    assert.ok(!existsSync(path.join(outside, 'new.txt')));
  });

  // Finding: "undo_edit after swapping a file for a link writes outside".
  test('undo_edit after the file was swapped for a link is refused; the link target is untouched', async () => {
    const { workspace, ctx } = await setup();
    const outside = await tmp('fe-outside-');
    await writeFile(path.join(outside, 'victim.txt'), 'victim\n');
    assert.equal((await editFile({ command: 'create', path: 'a.txt', file_text: 'one\n' }, ctx)).isError, false);
    assert.equal((await editFile({ command: 'str_replace', path: 'a.txt', old_str: 'one', new_str: 'two' }, ctx)).isError, false);
    await rm(path.join(workspace, 'a.txt'));
    await symlink(path.join(outside, 'victim.txt'), path.join(workspace, 'a.txt'));
    let r = await editFile({ command: 'undo_edit', path: 'a.txt' }, ctx);
    assert.equal(r.isError, true, r.content);
    assert.match(r.content, /symbolic link/);
    assert.equal(await readFile(path.join(outside, 'victim.txt'), 'utf8'), 'victim\n');
    // To a missing file outside: not created either.
    await rm(path.join(workspace, 'a.txt'));
    await symlink(path.join(outside, 'made.txt'), path.join(workspace, 'a.txt'));
    r = await editFile({ command: 'undo_edit', path: 'a.txt' }, ctx);
    assert.equal(r.isError, true, r.content);
    assert.ok(!existsSync(path.join(outside, 'made.txt')));
    // The refused undo is still there: with the file back, it applies.
    await rm(path.join(workspace, 'a.txt'));
    await writeFile(path.join(workspace, 'a.txt'), 'two\n');
    r = await editFile({ command: 'undo_edit', path: 'a.txt' }, ctx);
    assert.equal(r.isError, false, r.content);
    assert.equal(await readFile(path.join(workspace, 'a.txt'), 'utf8'), 'one\n');
  });

  // Finding: "A FIFO hangs the worker".
  test('view, str_replace and insert of a FIFO return an error with no writer ever there', async () => {
    const { workspace, ctx } = await setup();
    const pipe = path.join(workspace, 'pipe');
    execFileSync('mkfifo', [pipe]);
    const calls: unknown[] = [
      { command: 'view', path: 'pipe' },
      { command: 'str_replace', path: 'pipe', old_str: 'a', new_str: 'b' },
      { command: 'insert', path: 'pipe', insert_line: 0, new_str: 'b' },
      { command: 'create', path: 'pipe', file_text: 'b' },
    ];
    for (const args of calls) {
      const r = await returnsOrUnblock(editFile(args, ctx), pipe);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(r.content, /pipe is a FIFO \(named pipe\); file_editor reads and writes regular files only/, JSON.stringify(args));
    }
  });

  test('a directory view shows links as links and does not descend into them', async () => {
    const { workspace, ctx } = await setup();
    const outside = await tmp('fe-outside-');
    await writeFile(path.join(outside, 'outside-file.txt'), '');
    await mkdir(path.join(workspace, 'src'));
    await symlink(outside, path.join(workspace, 'out'));
    const r = await editFile({ command: 'view', path: '.' }, ctx);
    assert.equal(r.isError, false, r.content);
    assert.match(r.content, /^out -> \(link\)$/m);
    assert.doesNotMatch(r.content, /outside-file/);
  });

  test('NUL, `..` and absolute paths outside are refused', async () => {
    const { ctx } = await setup();
    for (const p of ['a\0b', '../x', 'a/../../x', '/tmp/x']) {
      const r = await editFile({ command: 'create', path: p, file_text: 'x' }, ctx);
      assert.equal(r.isError, true, p);
      assert.match(r.content, /outside the workspace|NUL/, p);
    }
  });

  test('the undo folder cannot be moved by the conversation id', () => {
    // The worker names it with conversationFolder (src/tools/builtin.ts), as it does the outputs folder.
    const undo = (id: string) => conversationFolder(path.join('/h', 'undo'), id);
    assert.deepEqual(undo('conv.sub-1'), { dir: path.join('/h', 'undo', 'conv.sub-1') });
    for (const id of ['../../etc', 'a/b', '..', '.', '', 'a\0b', 'a\\b']) {
      const r = undo(id);
      assert.ok('refused' in r && /is not valid/.test(r.refused), JSON.stringify(id));
    }
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

describe('file_editor view of an image', () => {
  const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

  test('a PNG is shown as an image (the bytes for the tool to store), never as text', async () => {
    const workspace = await tmp('fe-img-');
    const undoDir = await tmp('fe-undo-');
    await writeFile(path.join(workspace, 'shot.png'), PNG);
    const r = await editFile({ command: 'view', path: 'shot.png' }, { workspace, undoDir });
    assert.equal(r.isError, false);
    assert.match(r.content, /shot\.png is an image \(image\/png, 20 bytes\), shown to you/);
    assert.deepEqual(r.image && { ...r.image, bytes: Buffer.from(r.image.bytes) }, { bytes: PNG, mimeType: 'image/png' });
  });

  test('an image over 5 MB is refused with its size; other binary files as before', async () => {
    const workspace = await tmp('fe-img-');
    const undoDir = await tmp('fe-undo-');
    const big = Buffer.alloc(5 * 1024 * 1024 + 1);
    PNG.copy(big);
    await writeFile(path.join(workspace, 'big.png'), big);
    await writeFile(path.join(workspace, 'blob.png'), Buffer.from([1, 0, 2, 0]));
    const r = await editFile({ command: 'view', path: 'big.png' }, { workspace, undoDir });
    assert.equal(r.isError, true);
    assert.match(r.content, /big\.png is an image \(image\/png\) of 5242881 bytes; images over 5242880 bytes \(5 MB\) cannot be shown/);
    assert.equal(r.image, undefined);
    const blob = await editFile({ command: 'view', path: 'blob.png' }, { workspace, undoDir });
    assert.match(blob.content, /looks binary/);
  });
});
