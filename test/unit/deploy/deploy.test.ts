// The pure parts of `faheem deploy`: the version a worker serves (both halves or neither), the
// visibility query per version, and how recorded history files name their workflow.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readWorkerConfig } from '../../../src/worker/config.js';
import { failureReason, workflowIdOfFile } from '../../../src/deploy/check.js';
import { openOnVersionQuery } from '../../../src/deploy/deployments.js';
import { InvalidRequestError } from '../../../src/core/errors.js';
import { deploymentOptions } from '../../../src/worker.js';

test('a worker version needs both FAHEEM_DEPLOYMENT and FAHEEM_BUILD_ID; neither is unversioned', () => {
  assert.equal(readWorkerConfig({}).deployment, undefined);
  assert.deepEqual(readWorkerConfig({ FAHEEM_DEPLOYMENT: 'faheem', FAHEEM_BUILD_ID: 'v2' }).deployment, {
    deploymentName: 'faheem',
    buildId: 'v2',
  });
  assert.throws(
    () => readWorkerConfig({ FAHEEM_DEPLOYMENT: 'faheem' }),
    (e: unknown) => e instanceof InvalidRequestError && /FAHEEM_BUILD_ID/.test(e.message),
  );
  assert.throws(() => readWorkerConfig({ FAHEEM_BUILD_ID: 'v2' }), /FAHEEM_DEPLOYMENT/);
  assert.throws(() => readWorkerConfig({ FAHEEM_DEPLOYMENT: 'faheem', FAHEEM_BUILD_ID: 'v2.1' }), /FAHEEM_BUILD_ID.*no dots/);
  assert.equal(readWorkerConfig({ FAHEEM_METRICS_PORT: '9464' }).metricsPort, 9464);
  assert.throws(() => readWorkerConfig({ FAHEEM_METRICS_PORT: 'http' }), /FAHEEM_METRICS_PORT/);
});

test('versioned workers pin conversations', () => {
  assert.deepEqual(deploymentOptions({ deploymentName: 'faheem', buildId: 'v2' }), {
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName: 'faheem', buildId: 'v2' },
      defaultVersioningBehavior: 'PINNED',
    },
  });
});

test('the open conversations of a version, quoted', () => {
  assert.equal(
    openOnVersionQuery('faheem', "b'1"),
    "WorkflowType = 'conversation' AND ExecutionStatus = 'Running' AND TemporalWorkerDeploymentVersion = 'faheem:b\\'1'",
  );
});

test('recorded history files name their workflow (and, for earlier runs, the run)', () => {
  assert.equal(workflowIdOfFile('hooks-s8--conv-0374192c-a751.json'), 'conv-0374192c-a751');
  assert.equal(workflowIdOfFile('time-travel-s8--conv-94786b60-c0ea@01a232fb-1a4f-71ba-ad26-dafcd7414e9f.json'), 'conv-94786b60-c0ea');
  assert.equal(workflowIdOfFile('delegate--conv-36eea860-18dd.sub-1.json'), 'conv-36eea860-18dd.sub-1');
  assert.equal(failureReason(new Error('\n[TMPRL1100] Nondeterminism error: x\nmore')), '[TMPRL1100] Nondeterminism error: x');
});
