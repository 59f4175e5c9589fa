// Proof that upgrades are safe: histories recorded from earlier test runs (test/histories/, made with
// FAHEEM_RECORD_HISTORIES=1 npm test) must replay against the current workflow code. A change to the
// loop that would break running conversations fails here; guard such a change with patched().
import { Worker } from '@temporalio/worker';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, workflowBundle } from './support/harness.js';

test('recorded conversation histories replay against the current workflow code', async () => {
  const dir = path.join(ROOT, 'test', 'histories');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length >= 8, `expected recorded histories in ${dir}, found ${files.length}`);
  const histories = await Promise.all(
    files.map(async (f) => ({ workflowId: f, history: JSON.parse(await readFile(path.join(dir, f), 'utf8')) as unknown })),
  );
  const code = await readFile(await workflowBundle(), 'utf8');
  const failures: string[] = [];
  let replayed = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code } }, histories)) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  assert.equal(replayed, files.length);
  assert.deepEqual(failures, []);
});
