// Shard 3 of the recorded histories' replay (see replay.test.ts and test/support/replay-shards.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replayShard } from '../support/replay-shards.js';

test('recorded histories (conversations and their live streams) replay against the current workflow code: shard 3', async () => {
  const { held, checked, failures } = await replayShard(3);
  assert.equal(checked, held);
  assert.deepEqual(failures, []);
});
