// The checkpoint activities' plumbing: input checks, failures as the workflow sees them, fork carrying checkpoints.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { asActivity, checkpointInputs, parseInput } from '../../../src/time-travel/activity-support.js';
import { CheckpointStore, defaultForkDir } from '../../../src/time-travel/shadow-repo.js';

let root: string;
before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'faheem-cp-act-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

test('without git the failure says git is needed and is not retried', async () => {
  const ws = path.join(root, 'nogit');
  await mkdir(ws);
  const store = new CheckpointStore({ home: path.join(root, 'h0'), env: { PATH: '/nonexistent' } });
  // The shadow repository is made without git; its first snapshot needs it.
  const err = await asActivity(async () => (await store.open(ws)).snapshot('c', 0)).then(
    () => assert.fail('no error'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApplicationFailure);
  assert.equal(err.type, 'CheckpointGitMissing');
  assert.equal(err.nonRetryable, true);
  assert.match(err.message, /need git/);
});

test('a bad input fails for good; an unknown checkpoint is CheckpointNotFound', async () => {
  assert.throws(
    () => parseInput(checkpointInputs.checkpoint, { conversationId: 'c', workspace: 'relative', step: 1 }, 'checkpointWorkspace'),
    (e: unknown) => e instanceof ApplicationFailure && e.nonRetryable && /workspace/.test(e.message),
  );
  const ws = path.join(root, 'ws1');
  await mkdir(ws);
  const repo = await new CheckpointStore({ home: path.join(root, 'h1'), env: process.env }).open(ws);
  const err = await asActivity(() => repo.restore('c', 'deadbeef', 'r')).catch((e: unknown) => e);
  assert.ok(err instanceof ApplicationFailure && err.type === 'CheckpointNotFound' && err.nonRetryable);
});

test('a fork carries the checkpoints up to its step: the fork can rewind to an earlier one; a retry of the fork succeeds', async () => {
  const home = path.join(root, 'h2');
  const ws = path.join(root, 'proj');
  await mkdir(ws);
  const store = new CheckpointStore({ home, env: process.env });
  const repo = await store.open(ws);
  const cps = [];
  for (let step = 0; step <= 4; step++) {
    await writeFile(path.join(ws, 'f'), `v${step}\n`);
    cps.push(await repo.snapshot('orig', step));
  }
  const target = defaultForkDir(ws, 'fork.1');
  const forked = await repo.materialize(cps[2]!.commit, target, { from: 'orig', to: 'fork.1', store });
  assert.deepEqual([forked.files, forked.steps], [1, 3]);
  assert.equal(await readFile(path.join(target, 'f'), 'utf8'), 'v2\n');
  assert.equal(await readFile(path.join(ws, 'f'), 'utf8'), 'v4\n');
  const again = await repo.materialize(cps[2]!.commit, target, { from: 'orig', to: 'fork.1', store });
  assert.equal(again.files, 1);
  const fork = await store.open(target);
  assert.deepEqual(
    (await fork.list('fork.1')).map((c) => c.step),
    [0, 1, 2],
  );
  await writeFile(path.join(target, 'f'), 'fork step 3\n');
  const s3 = await fork.snapshot('fork.1', 3);
  assert.equal(s3.parent, cps[2]!.commit);
  await fork.restore('fork.1', cps[1]!.commit, 'r');
  assert.equal(await readFile(path.join(target, 'f'), 'utf8'), 'v1\n');
  assert.equal(await readFile(path.join(ws, 'f'), 'utf8'), 'v4\n');
});
