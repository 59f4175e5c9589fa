// src/security/workspace-fs.ts: the path rule "never outside the workspace, never through a link",
// against real files, links and FIFOs in temporary directories.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { PathRefused, WorkspaceFs, resolveLexically } from '../../../src/security/workspace-fs.js';

const made: string[] = [];
after(async () => {
  for (const d of made) await rm(d, { recursive: true, force: true });
});

/** A base directory with `ws/` (the workspace) and `outside/` beside it. */
async function setup() {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), 'wsfs-')));
  made.push(base);
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(ws);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'secret\n');
  return { base, ws, outside, fs: await WorkspaceFs.open(ws) };
}

const refused = (reason: string) => (err: unknown) => err instanceof PathRefused && err.reason === reason;

describe('resolveLexically (pure)', () => {
  const root = '/w/real';
  const given = '/w/alias';
  test('relative and absolute paths inside resolve; `a/../b` is `b`', () => {
    assert.deepEqual(resolveLexically(root, given, 'src/a.ts').parts, ['src', 'a.ts']);
    assert.equal(resolveLexically(root, given, 'src/a.ts').abs, '/w/real/src/a.ts');
    assert.deepEqual(resolveLexically(root, given, '/w/real/x').parts, ['x']);
    assert.deepEqual(resolveLexically(root, given, '/w/alias/x/y').parts, ['x', 'y']);
    assert.deepEqual(resolveLexically(root, given, 'a/../b').parts, ['b']);
    assert.deepEqual(resolveLexically(root, given, '..config').parts, ['..config'], 'a name that starts with .. is inside');
    assert.equal(resolveLexically(root, given, '.').shown, '.');
    assert.equal(resolveLexically(root, given, '').shown, '.');
  });
  test('`..`, absolute paths outside and NUL are refused', () => {
    for (const p of ['..', '../x', 'a/../../x', '/etc/passwd', '/w/realx/y', '/w', '/w/real/../other']) {
      assert.throws(() => resolveLexically(root, given, p), refused('outside'), p);
    }
    assert.throws(() => resolveLexically(root, given, 'a\0b'), refused('nul'));
  });
});

describe('WorkspaceFs', () => {
  test('the root may be given through a link; paths under either name work', async () => {
    const { base, ws } = await setup();
    await symlink(ws, path.join(base, 'alias'));
    const fs = await WorkspaceFs.open(path.join(base, 'alias'));
    assert.equal(fs.root, ws);
    const made = await fs.create(fs.resolve(path.join(base, 'alias', 'new.txt')));
    assert.notEqual(made, 'exists');
    if (made !== 'exists') {
      await made.replace('hi\n');
      await made.close();
    }
    assert.equal(await readFile(path.join(ws, 'new.txt'), 'utf8'), 'hi\n');
  });

  test('create through a dangling link is refused and writes nothing outside', async () => {
    const { ws, outside, fs } = await setup();
    await symlink(path.join(outside, 'planted.txt'), path.join(ws, 'x'));
    assert.equal(await fs.create(fs.resolve('x')), 'exists');
    await assert.rejects(fs.open(fs.resolve('x'), { write: true, create: true }), refused('link'));
    assert.ok(!existsSync(path.join(outside, 'planted.txt')));
  });

  test('a linked parent directory is refused for reads, writes, creates and removals', async () => {
    const { ws, outside, fs } = await setup();
    await symlink(outside, path.join(ws, 'd'));
    await symlink('d', path.join(ws, 'inner')); // inside, still a link
    for (const p of ['d/secret.txt', 'inner/secret.txt']) {
      const t = fs.resolve(p);
      await assert.rejects(fs.open(t), refused('link'), p);
      await assert.rejects(fs.open(t, { write: true }), refused('link'), p);
      await assert.rejects(fs.create(fs.resolve(`${p}.new`)), refused('link'), p);
      await assert.rejects(fs.remove(t), refused('link'), p);
      await assert.rejects(fs.lstat(t), refused('link'), p);
    }
    assert.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), 'secret\n');
    assert.ok(!existsSync(path.join(outside, 'secret.txt.new')));
  });

  test('a FIFO, a socket-like special file or a directory is refused at once, never opened blocking', async () => {
    const { ws, fs } = await setup();
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);
    const t = fs.resolve('pipe');
    await assert.rejects(fs.open(t), (e: unknown) => e instanceof PathRefused && /pipe is a FIFO \(named pipe\)/.test(e.message));
    await assert.rejects(fs.open(t, { write: true }), refused('not_regular'));
    await assert.rejects(fs.remove(t), refused('not_regular'));
    await mkdir(path.join(ws, 'dir'));
    await assert.rejects(fs.open(fs.resolve('dir')), refused('not_regular'));
    assert.deepEqual(await fs.list(fs.resolve('.'), 2), ['dir/', 'pipe (a FIFO (named pipe))']);
  });

  test('a missing parent chain is made one directory at a time; a file in the way is refused', async () => {
    const { ws, fs } = await setup();
    const f = await fs.create(fs.resolve('a/b/c.txt'));
    assert.notEqual(f, 'exists');
    if (f !== 'exists') await f.close();
    assert.ok((await lstat(path.join(ws, 'a/b'))).isDirectory());
    await assert.rejects(fs.create(fs.resolve('a/b/c.txt/d')), refused('not_directory'));
  });

  test('writes go through the held descriptor: truncate, then write', async () => {
    const { ws, fs } = await setup();
    await writeFile(path.join(ws, 'f.txt'), 'a long first content\n');
    const f = await fs.open(fs.resolve('f.txt'), { write: true });
    assert.equal((await f.read()).toString(), 'a long first content\n');
    await f.replace('short\n');
    await f.close();
    assert.equal(await readFile(path.join(ws, 'f.txt'), 'utf8'), 'short\n');
  });

  test('listing shows links as links and never descends into them', async () => {
    const { ws, outside, fs } = await setup();
    await mkdir(path.join(ws, 'src'));
    await writeFile(path.join(ws, 'src', 'a.ts'), '');
    await symlink(outside, path.join(ws, 'out'));
    await symlink(outside, path.join(ws, 'src', 'deeper'));
    assert.deepEqual(await fs.list(fs.resolve('.'), 2), ['out -> (link)', 'src/', 'src/a.ts', 'src/deeper -> (link)']);
    await assert.rejects(fs.list(fs.resolve('out'), 2), refused('link'));
  });

  test('restore entries: a link where a directory must be is replaced, never written through', async () => {
    const { ws, outside, fs } = await setup();
    await symlink(outside, path.join(ws, 'd'));
    assert.equal(await fs.putEntry('d/secret.txt', Buffer.from('restored\n'), { mode: 0o666 }), true);
    assert.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), 'secret\n');
    assert.ok((await lstat(path.join(ws, 'd'))).isDirectory());
    assert.equal(await readFile(path.join(ws, 'd', 'secret.txt'), 'utf8'), 'restored\n');
    // A link entry is written as a link; one already at the name is replaced, not followed.
    await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'l'));
    assert.equal(await fs.putEntry('l', Buffer.from('d/secret.txt'), { linkTarget: 'd/secret.txt' }), true);
    assert.equal(await readlink(path.join(ws, 'l')), 'd/secret.txt');
    assert.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), 'secret\n');
    // Removals and empty-directory cleanup never go through a linked parent.
    await symlink(outside, path.join(ws, 'e'));
    await fs.removeEntry('e/secret.txt');
    await mkdir(path.join(outside, 'empty'));
    await fs.removeEmptyDirs('e/empty');
    assert.ok(existsSync(path.join(outside, 'secret.txt')));
    assert.ok(existsSync(path.join(outside, 'empty')));
    assert.equal(await fs.lstatEntry('e/secret.txt'), undefined);
    // A file where a directory must go blocks the entry (false), as before.
    await writeFile(path.join(ws, 'plain'), 'x');
    assert.equal(await fs.putEntry('plain/child', Buffer.from('y'), { mode: 0o666 }), false);
    assert.equal(await fs.putEntry('../escape', Buffer.from('y'), { mode: 0o666 }), false);
    assert.ok(!existsSync(path.join(ws, '..', 'escape')));
  });
});
