// src/conversation/start-log.ts: when a retried tool call may run again.
import assert from 'node:assert/strict';
import { readdir, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { StartLog } from '../../../src/conversation/start-log.js';
import { FileEditorTool, TerminalTool, ThinkTool } from '../../../src/client/client.js';
import { retryClass } from '../../../src/tools/define.js';
import { tempDir } from '../../support/temp-dirs.js';

const tmp = tempDir;

describe('start log', () => {
  const attempt = (activityId: string, attempt: number, scheduledTimestampMs: number, runId = 'run-1') => ({
    workflowExecution: { workflowId: 'conv/1', runId },
    activityId,
    attempt,
    scheduledTimestampMs,
  });

  test('a retry runs only when the log shows no earlier attempt began, and the log could have shown it', async () => {
    const dir = await tmp('faheem-starts-');
    const day = 24 * 60 * 60 * 1000;
    const t0 = Date.now();
    const log = new StartLog(dir, 30 * day, t0);
    // Handed to a poll that never answered: no line, so the retry may run the command.
    assert.equal(await log.claim(attempt('5', 2, t0 + 1)), false);
    // It began (the claim above recorded it): a further retry must report, not run.
    assert.equal(await log.claim(attempt('5', 3, t0 + 1)), true);
    assert.equal(await log.claim(attempt('6', 1, t0 + 2)), false);
    assert.equal(await log.claim(attempt('6', 2, t0 + 2)), true);
    // A retry that checked before a slow first attempt wrote its line: each looks again after
    // writing, so the one that sees the other does not run (here the first, which writes last).
    const slowFirst = attempt('9', 1, t0 + 2);
    assert.equal(await log.claim(attempt('9', 2, t0 + 2)), false, 'the retry found no line: it may run');
    assert.equal(await log.claim(slowFirst), true, 'the first attempt, late, sees the retry and steps back');
    // After continue-as-new the same activity id belongs to a new run.
    assert.equal(await log.claim(attempt('5', 2, t0 + 3, 'run-2')), false);
    // Scheduled before the log existed (a new or wiped home): it cannot vouch, so report.
    assert.equal(await log.claim(attempt('7', 2, t0 - 1000)), true);

    // Forty days on, a new worker prunes the old runs; it vouches only from its cutoff.
    const later = new StartLog(dir, 30 * day, t0 + 40 * day);
    assert.equal(await later.claim(attempt('5', 3, t0 + 1)), true, 'pruned, so unknown rather than run');
    assert.equal(await later.claim(attempt('8', 2, t0 + 40 * day)), false);
    assert.deepEqual((await readdir(dir)).sort(), ['.since', 'conv%2F1']);
  });

  test('each tool declares what a retry may do', () => {
    assert.equal(retryClass(TerminalTool, { command: 'ls' }), 'report');
    assert.equal(retryClass(FileEditorTool, { command: 'view', path: 'a' }), 'repeat');
    assert.equal(retryClass(FileEditorTool, { command: 'create', path: 'a', file_text: 'x' }), 'repeat');
    assert.equal(retryClass(FileEditorTool, { command: 'str_replace', path: 'a' }), 'report');
    assert.equal(retryClass(ThinkTool, { thought: 'hm' }), 'repeat');
  });

  test('a call scheduled again after waiting for its host: reported if its first try began, run if not', async () => {
    const dir = await tmp('faheem-starts-');
    const t0 = Date.now();
    const log = new StartLog(dir, 30 * 24 * 60 * 60 * 1000, t0);
    // The first try began (its worker died later, and its retry then waited too long for a host)…
    assert.equal(await log.claim(attempt('8', 1, t0 + 1), { key: 'call_a', rescheduled: false }), false);
    // …so the call scheduled again under a new activity id reports instead of running twice.
    assert.equal(await log.claim(attempt('9', 1, t0 + 2), { key: 'call_a', rescheduled: true }), true);
    // A call whose first try never reached a host simply runs when scheduled again.
    assert.equal(await log.claim(attempt('10', 1, t0 + 3), { key: 'call_b', rescheduled: true }), false);
  });

  test('an unreadable log fails the attempt instead of running the command', async () => {
    const dir = await tmp('faheem-starts-');
    const log = new StartLog(dir);
    await mkdir(path.join(dir, 'conv%2F1', 'run-1'), { recursive: true }); // a directory where the file goes
    await assert.rejects(log.claim(attempt('5', 2, Date.now())), /EISDIR/);
  });
});
