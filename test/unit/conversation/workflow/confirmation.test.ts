// src/conversation/workflow/confirmation.ts: when an action waits for the user's approval.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { needsConfirmation } from '../../../../src/conversation/workflow/confirmation.js';

describe('confirmation', () => {
  const base = { tool: 'x', arguments: {}, inWorkflow: false };
  test('never asks under never, or for tools inside the workflow, or for tools the conversation lacks', () => {
    assert.equal(needsConfirmation('never', { ...base, plan: { needsApproval: true } }), false);
    assert.equal(needsConfirmation('always', { ...base, inWorkflow: true }), false);
    assert.equal(needsConfirmation('always', { ...base, unknown: true }), false);
    assert.equal(needsConfirmation('always', base), true);
  });
  test("risky: the tool's rule when there is one, else the model's rating", () => {
    assert.equal(needsConfirmation('risky', { ...base, plan: { needsApproval: false }, arguments: { security_risk: 'HIGH' } }), false);
    assert.equal(needsConfirmation('risky', { ...base, plan: { needsApproval: true } }), true);
    assert.equal(needsConfirmation('risky', { ...base, arguments: { security_risk: 'MEDIUM' } }), false);
    assert.equal(needsConfirmation('risky', { ...base, arguments: { security_risk: 'HIGH' } }), true);
    assert.equal(needsConfirmation('risky', base), true, 'unrated counts as risky');
  });
});
