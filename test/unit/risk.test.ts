import assert from 'node:assert/strict';
import { test } from 'node:test';
import { riskyUnlessRatedLow } from '../../src/tools/risk.js';
import { needsConfirmation } from '../../src/workflows/confirmation.js';
import { TerminalTool } from '../../src/tools/builtin.js';

test('only LOW and MEDIUM go ahead under risky; HIGH and unrated ask', () => {
  assert.equal(riskyUnlessRatedLow({ security_risk: 'LOW' }), false);
  assert.equal(riskyUnlessRatedLow({ security_risk: 'MEDIUM' }), false);
  assert.equal(riskyUnlessRatedLow({ security_risk: 'HIGH' }), true);
  assert.equal(riskyUnlessRatedLow({ security_risk: 'low' }), true);
  assert.equal(riskyUnlessRatedLow({}), true);
  assert.equal(riskyUnlessRatedLow(null), true);
  assert.equal(riskyUnlessRatedLow('text'), true);
});

test('the built-in tools and the workflow apply the same rule', () => {
  for (const security_risk of ['LOW', 'MEDIUM', 'HIGH', undefined]) {
    const args = { command: 'ls', ...(security_risk ? { security_risk } : {}) };
    const viaTool = typeof TerminalTool.needsApproval === 'function' ? TerminalTool.needsApproval(args as never) : undefined;
    const viaWorkflow = needsConfirmation('risky', { tool: 'terminal', arguments: args, inWorkflow: false });
    assert.equal(viaTool, riskyUnlessRatedLow(args), String(security_risk));
    assert.equal(viaWorkflow, riskyUnlessRatedLow(args), String(security_risk));
  }
});
