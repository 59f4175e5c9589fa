// Proof that upgrades are safe: histories recorded from earlier test runs (test/histories/, made with
// FAHEEM_RECORD_HISTORIES=1 npm test) must replay against the current workflow code. A change to the
// loop that would break running conversations fails here; guard such a change with patched().
import { Worker } from '@temporalio/worker';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { FAKE_KEY, ROOT, workflowBundle } from '../support/harness.js';

test('recorded conversation histories replay against the current workflow code', async () => {
  const dir = path.join(ROOT, 'test', 'histories');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length >= 8, `expected recorded histories in ${dir}, found ${files.length}`);
  const histories = await Promise.all(
    // Files are named <test file>--<workflow id>[@<run id>].json; the id matters (sub-agents' ids
    // derive from it). An earlier run of a conversation that continued as new carries its run id.
    files.map(async (f) => ({
      workflowId: f
        .slice(f.indexOf('--') + 2)
        .replace(/\.json$/, '')
        .replace(/@[0-9a-f-]{36}$/, ''),
      history: JSON.parse(await readFile(path.join(dir, f), 'utf8')) as unknown,
    })),
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

test('no recorded history holds a secret (payloads decoded)', async () => {
  const dir = path.join(ROOT, 'test', 'histories');
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.json'))) {
    const decoded: string[] = [];
    const walk = (v: unknown, key = ''): void => {
      if (typeof v === 'string') decoded.push(key === 'data' ? Buffer.from(v, 'base64').toString('utf8') : v);
      else if (Array.isArray(v)) v.forEach((x) => walk(x));
      else if (v && typeof v === 'object') Object.entries(v).forEach(([k, x]) => walk(x, k));
    };
    walk(JSON.parse(await readFile(path.join(dir, f), 'utf8')));
    const text = decoded.join('\n');
    assert.ok(text.includes('"kind"') || text.includes('conversation'), `${f}: payloads decoded`);
    for (const secret of [FAKE_KEY, 'hunter2-very-secret-value']) assert.ok(!text.includes(secret), `${f} holds a secret`);
  }
});
