// The recorded histories (test/histories/) replay in REPLAY_SHARDS test files side by side: one
// replay worker replays one history at a time on one core, and the whole folder in one file was
// the fast gate's long pole. Shard k of n takes every n-th file from the k-th (by name), so the
// shards together hold every history once, whatever is added.
import assert from 'node:assert/strict';
import path from 'node:path';
import { checkHistories, folderHistories } from '../../src/deploy/check.js';
import { ROOT, workflowBundle } from './harness.js';

/** How many test files the recorded histories are replayed in (test/workflow/replay*.test.ts). */
export const REPLAY_SHARDS = 3;

export const HISTORIES_DIR = path.join(ROOT, 'test', 'histories');

/** Replays shard `k` (1-based) of the recorded histories: how many it holds, how many were checked, and the failures. */
export async function replayShard(k: number): Promise<{ held: number; checked: number; failures: string[] }> {
  const all = await folderHistories(HISTORIES_DIR);
  assert.ok(all.length >= 8, `expected recorded histories in ${HISTORIES_DIR}, found ${all.length}`);
  const mine = all.filter((_, i) => i % REPLAY_SHARDS === k - 1);
  assert.ok(mine.length > 0, `shard ${k} of ${REPLAY_SHARDS} holds no history`);
  // Files are named <test file>--<workflow id>[@<run id>].json; the id matters (sub-agents' ids derive from it).
  const result = await checkHistories(mine, { ...process.env, FAHEEM_WORKFLOW_BUNDLE: await workflowBundle() });
  return { held: mine.length, checked: result.checked, failures: result.failures.map((f) => `${f.source}: ${f.reason}`) };
}
