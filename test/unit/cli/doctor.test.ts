// `doctor --model` without a name, where this shell names no model, calls the workers' one model.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { soleWorkerModel } from '../../../src/cli/doctor.js';

test('the one model the workers report; none when they differ, name none, or run the scripted stand-in', () => {
  assert.equal(soleWorkerModel([{ model: 'openai/fake-model' }, { model: 'openai/fake-model' }]), 'openai/fake-model');
  assert.equal(soleWorkerModel([{ model: 'openai/a' }, { model: 'openai/b' }]), undefined);
  assert.equal(soleWorkerModel([{ model: 'none' }]), undefined);
  assert.equal(soleWorkerModel([{ model: 'scripted/demo' }]), undefined);
  assert.equal(soleWorkerModel([]), undefined);
});
