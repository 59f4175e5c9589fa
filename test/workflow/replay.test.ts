// Proof that upgrades are safe: histories recorded from earlier test runs (test/histories/, made with
// FAHEEM_RECORD_HISTORIES=1 npm test) must replay against the current workflow code. A change to the
// loop that would break running conversations fails here; guard such a change with patched(). This is
// `faheem deploy check --histories test/histories` itself (the same functions), run in the fast gate.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { checkHistories, folderHistories } from '../../src/deploy/check.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import { FAKE_KEY, ROOT, workflowBundle } from '../support/harness.js';
import { storeSettings } from '../../src/settings/store.js';

test('recorded histories (conversations and their live streams) replay against the current workflow code', async () => {
  const dir = path.join(ROOT, 'test', 'histories');
  const histories = await folderHistories(dir);
  assert.ok(histories.length >= 8, `expected recorded histories in ${dir}, found ${histories.length}`);
  // Files are named <test file>--<workflow id>[@<run id>].json; the id matters (sub-agents' ids derive from it).
  const result = await checkHistories(histories, {
    workflowBundle: await workflowBundle(),
    dataConverter: dataConverter(storeSettings(process.env)),
  });
  assert.equal(result.checked, histories.length);
  assert.deepEqual(
    result.failures.map((f) => `${f.source}: ${f.reason}`),
    [],
  );
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
