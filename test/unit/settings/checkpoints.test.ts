import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { checkpointSettings } from '../../../src/settings/checkpoints.js';

test('the checkpoint defaults: under ~/.faheem, no cap of our own, borrowing and watching', () => {
  assert.deepEqual(checkpointSettings(readSettings({})), {
    home: path.join(os.homedir(), '.faheem'),
    maxFileBytes: undefined,
    borrow: true,
    watch: true,
    killAfterWrites: undefined,
  });
});

test('each variable is read into its field; a cap that is not a positive number is none', () => {
  const c = checkpointSettings(
    readSettings({
      FAHEEM_HOME: '/srv/faheem',
      FAHEEM_CHECKPOINT_MAX_FILE_BYTES: '1024',
      FAHEEM_CHECKPOINT_BORROW: '0',
      FAHEEM_CHECKPOINT_WATCH: '0',
      FAHEEM_TEST_CHECKPOINT_KILL_AFTER_WRITES: '3',
    }),
  );
  assert.deepEqual(c, { home: '/srv/faheem', maxFileBytes: 1024, borrow: false, watch: false, killAfterWrites: 3 });
  assert.equal(checkpointSettings(readSettings({ FAHEEM_CHECKPOINT_MAX_FILE_BYTES: 'ten' })).maxFileBytes, undefined);
  assert.equal(checkpointSettings(readSettings({ FAHEEM_CHECKPOINT_MAX_FILE_BYTES: '-1' })).maxFileBytes, undefined);
});
