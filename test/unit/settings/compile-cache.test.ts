import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { compileCacheSettings } from '../../../src/settings/compile-cache.js';

test('the cache folder is compile-cache in the faheem home (FAHEEM_HOME, else ~/.faheem), as an absolute path', () => {
  assert.equal(compileCacheSettings({ FAHEEM_HOME: '/srv/faheem' }).dir, '/srv/faheem/compile-cache');
  assert.equal(compileCacheSettings({ FAHEEM_HOME: 'rel' }).dir, path.resolve('rel', 'compile-cache'));
  assert.deepEqual(compileCacheSettings({}), {
    disabled: false,
    chosenByNode: false,
    dir: path.join(os.homedir(), '.faheem', 'compile-cache'),
  });
});

test("Node's own variables: off, or a folder Node chose", () => {
  assert.equal(compileCacheSettings({ NODE_DISABLE_COMPILE_CACHE: '1' }).disabled, true);
  assert.equal(compileCacheSettings({ NODE_COMPILE_CACHE: '/tmp/cc' }).chosenByNode, true);
  assert.equal(compileCacheSettings({ NODE_COMPILE_CACHE: '' }).chosenByNode, false);
});
