// Proof that upgrades are safe: histories recorded from earlier test runs (test/histories/, made with
// FAHEEM_RECORD_HISTORIES=1 npm test) must replay against the current workflow code. A change to the
// loop that would break running conversations fails here; guard such a change with patched(). This is
// `faheem deploy check --histories test/histories` itself (the same functions), run in the fast gate,
// in REPLAY_SHARDS files side by side (test/support/replay-shards.ts): this one and replay-N.test.ts.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { readdirSync } from 'node:fs';
import { FAKE_KEY } from '../support/harness.js';
import { HISTORIES_DIR, REPLAY_SHARDS, replayShard } from '../support/replay-shards.js';

test('recorded histories (conversations and their live streams) replay against the current workflow code: shard 1', async () => {
  const { held, checked, failures } = await replayShard(1);
  assert.equal(checked, held);
  assert.deepEqual(failures, []);
});

test('every shard of the recorded histories has a test file', () => {
  const files = readdirSync(import.meta.dirname).filter((f) => /^replay(-\d+)?\.test\.ts$/.test(f));
  assert.deepEqual(
    files.sort(),
    ['replay.test.ts', ...Array.from({ length: REPLAY_SHARDS - 1 }, (_, i) => `replay-${i + 2}.test.ts`)].sort(),
  );
});

test('no recorded history holds a secret (payloads decoded)', async () => {
  const dir = HISTORIES_DIR;
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
