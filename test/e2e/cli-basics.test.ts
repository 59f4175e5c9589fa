// What a new user meets first (issue #59): `faheem --version`; `faheem server` on a port that is
// taken (by a faheem server: said, exit 0, nothing claimed; by anything else: one line, non-zero);
// a Ctrl-C that leaves one line, the dev server's own noise in its log under FAHEEM_HOME.
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ROOT, TEMPORAL_CLI, freePort, waitFor } from '../support/harness.js';

const homes: string[] = [];
const spawned: ReturnType<typeof execa>[] = [];
after(async () => {
  for (const child of spawned) if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
  await Promise.allSettled(spawned);
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

async function newHome(): Promise<string> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'faheem-cli-basics-'));
  homes.push(home);
  return home;
}

const env = (home: string) => ({ FAHEEM_HOME: home, ...(TEMPORAL_CLI ? { TEMPORAL_CLI } : {}) });

/** `faheem <args>` to its end. */
function faheem(args: string[], home: string) {
  return execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], { cwd: ROOT, env: env(home), reject: false });
}

/**
 * `faheem server --headless` on free ports, in a process group of its own (so that a test can send
 * the whole group a SIGINT, as a terminal's Ctrl-C does), once its line says it started. A port
 * found free can be taken before the server binds it (files run side by side): tried three times.
 */
async function startServer(home: string) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'server', '--headless', '--port', String(port)], {
      cwd: ROOT,
      env: env(home),
      reject: false,
      detached: true,
    });
    spawned.push(child);
    const out = { stdout: '', stderr: '' };
    child.stdout?.on('data', (d: Buffer) => (out.stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out.stderr += d.toString()));
    const up = await waitFor('the server to start or exit', () =>
      child.exitCode !== null ? 'exited' : out.stderr.includes('Temporal dev server on') && 'up',
    );
    if (up === 'up') return { child, out, port };
    if (attempt >= 3) assert.fail(`faheem server did not start: ${out.stderr}`);
  }
}

/** Listens on a free port (holding it), as something that is not a Temporal server. */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return { server, port: (server.address() as { port: number }).port };
}

test('faheem --version prints the package version', async () => {
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const home = await newHome();
  for (const flag of ['--version', '-V']) {
    const r = await faheem([flag], home);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout.trim(), version);
  }
});

test('a port held by something else: one line naming the port, a non-zero exit, nothing claimed', async () => {
  const held = await holdPort();
  try {
    const r = await faheem(['server', '--headless', '--port', String(held.port)], await newHome());
    assert.equal(r.exitCode, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0]!,
      new RegExp(`port ${held.port} is taken \\(address already in use\\) by something that is not a Temporal server; pass --port`),
    );
    assert.doesNotMatch(r.stderr, /Temporal dev server on/);
  } finally {
    held.server.close();
  }
});

test('a second faheem server on the same port says one serves there and exits 0; Ctrl-C of the first leaves one line', async () => {
  const home = await newHome();
  const first = await startServer(home);
  const logFile = path.join(home, 'server', `temporal-${first.port}.log`);
  assert.ok(first.out.stderr.includes(`its log in ${logFile}`), first.out.stderr);

  const second = await faheem(['server', '--headless', '--port', String(first.port)], home);
  assert.equal(second.exitCode, 0, second.stderr);
  assert.equal(
    second.stderr.trim(),
    `faheem server: a faheem server (Temporal with faheem's search attributes) already serves on 127.0.0.1:${first.port}; nothing started`,
  );
  assert.equal(first.child.exitCode, null, 'the first server still runs');

  // Ctrl-C reaches the whole foreground group: the dev server too, which then logs its shutdown.
  const before = first.out.stderr;
  process.kill(-first.child.pid!, 'SIGINT');
  const ended = await first.child;
  assert.equal(ended.exitCode, 0, first.out.stderr);
  assert.equal(first.out.stderr.slice(before.length).trim(), 'faheem server: stopped');
  assert.doesNotMatch(first.out.stderr, /level=(WARN|ERROR)/);
  assert.ok(existsSync(logFile));
  assert.match(await readFile(logFile, 'utf8'), /--- faheem server starting the Temporal dev server at /);
});
