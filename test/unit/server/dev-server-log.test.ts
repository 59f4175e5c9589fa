// The dev server's log under FAHEEM_HOME: why a start failed is read back from its end, and only
// from this start's lines.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { devServerFailure, devServerLogFile, logTail, startDevServerLog } from '../../../src/server/dev-server-log.js';
import { DYNAMIC_CONFIG } from '../../../src/server/dev-server.js';

test('the log is per port under FAHEEM_HOME/server, private, one marker line per start', async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'faheem-dev-log-'));
  try {
    const file = devServerLogFile(home, 7233);
    assert.equal(file, path.join(home, 'server', 'temporal-7233.log'));
    startDevServerLog(file, new Date('2026-01-02T03:04:05Z'));
    appendFileSync(file, 'Error: old\n');
    startDevServerLog(file, new Date('2026-01-02T03:05:00Z'));
    assert.equal(statSync(file).mode & 0o077, 0);
    assert.equal(
      readFileSync(file, 'utf8'),
      '--- faheem server starting the Temporal dev server at 2026-01-02T03:04:05.000Z\nError: old\n' +
        '--- faheem server starting the Temporal dev server at 2026-01-02T03:05:00.000Z\n',
    );
    assert.equal(devServerFailure(logTail(file)), undefined, "an earlier start's error is not this one's");
    assert.equal(logTail(file, 11), '3:05:00.000Z\n'.slice(-11));
    assert.equal(logTail(path.join(home, 'absent.log')), '');
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test("the reason is the server's own Error line, else its last ERROR line's message and error", () => {
  const bind = [
    '--- faheem server starting the Temporal dev server at 2026-01-02T03:04:05.000Z',
    "Error: can't set frontend port 7233: listen tcp 127.0.0.1:7233: bind: address already in use",
  ].join('\n');
  assert.equal(devServerFailure(bind), "can't set frontend port 7233: listen tcp 127.0.0.1:7233: bind: address already in use");
  const logged = [
    '--- faheem server starting the Temporal dev server at 2026-01-02T03:04:05.000Z',
    'time=2026-01-02T03:04:06 level=ERROR msg="Unable to start server" error="sqlite: disk I/O error" service=frontend',
    'time=2026-01-02T03:04:07 level=WARN msg="Failed to poll for task." service=worker',
  ].join('\n');
  assert.equal(devServerFailure(logged), 'Unable to start server: sqlite: disk I/O error');
  assert.equal(devServerFailure('time=… level=WARN msg="network dial error"\n'), undefined);
});

test("a slow list is not logged below 10 s (the server's default is 1 s)", () => {
  assert.ok(DYNAMIC_CONFIG.includes('system.visibilityPersistenceSlowQueryThreshold="10s"'));
});
