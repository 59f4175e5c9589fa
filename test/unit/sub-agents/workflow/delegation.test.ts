// src/sub-agents/workflow/delegation.ts: a sub-agent's input, ids, tools and limits, and the parent's observation.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  childHasEnded,
  childId,
  childMaxIterations,
  childObservation,
  childTools,
} from '../../../../src/sub-agents/workflow/delegation.js';

describe("a sub-agent's input", () => {
  test("the parent's options with the granted tools, its share of iterations and budget; MCP servers only when it may use them", async () => {
    const { childInput } = await import('../../../../src/sub-agents/workflow/delegation.js');
    const parent = {
      agent: { llm: { model: 'm' }, tools: ['terminal', 'mcp__mem__read', 'delegate'], hostTools: true },
      workspace: '/w',
      maxIterations: 50,
      confirmationPolicy: 'never',
      idleTimeoutMs: 1000,
      toolTaskQueue: 'faheem-tools@h',
      mcpServers: { mem: { command: 'npx' } },
    } as never;
    const base = { parentId: 'c', depth: 0, task: 'do it', maxIterations: 10, budgetLeft: undefined };
    const all = childInput(parent, { ...base, tools: ['terminal', 'mcp__mem__read'], requested: false });
    assert.deepEqual(all.options.agent.tools, ['terminal', 'mcp__mem__read']);
    assert.equal(all.options.agent.hostTools, false, "the child offers what it was granted, not the host's tools");
    assert.deepEqual(all.options.parent, { id: 'c', depth: 1 });
    assert.equal(all.options.maxIterations, 10);
    assert.equal(all.firstMessage, 'do it');
    assert.ok(all.options.mcpServers, 'all tools: the MCP servers go along');
    assert.equal(all.options.maxBudgetPerRunUsd, undefined);
    const terminalOnly = childInput(parent, { ...base, tools: ['terminal', 'think', 'finish'], requested: true, budgetLeft: 0.5 });
    assert.equal(terminalOnly.options.mcpServers, undefined, 'no MCP tool granted: no MCP server started for it');
    assert.equal(terminalOnly.options.maxBudgetPerRunUsd, 0.5);
    assert.ok((parent as { mcpServers?: unknown }).mcpServers, "the parent's options are left as they were");
  });
});

describe('delegation rules', () => {
  test("ids, tools, limits and the parent's observation", () => {
    assert.equal(childId('conv-1', 2), 'conv-1.sub-2');
    assert.deepEqual(childTools(['terminal', 'delegate', 'think', 'finish'], undefined, 1, 2), {
      tools: ['terminal', 'delegate', 'think', 'finish'],
    });
    assert.deepEqual(childTools(['terminal', 'delegate', 'think', 'finish'], undefined, 2, 2), { tools: ['terminal', 'think', 'finish'] });
    assert.deepEqual(childTools(['terminal', 'file_editor', 'think', 'finish'], ['terminal'], 1, 2), {
      tools: ['terminal', 'think', 'finish'],
    });
    assert.match((childTools(['terminal'], ['rm_rf'], 1, 2) as { error: string }).error, /not: rm_rf/);
    assert.equal(childMaxIterations(undefined, 500, 10), 489, 'one call kept for the parent');
    assert.equal(childMaxIterations(5, 500, 10), 5);
    assert.equal(childMaxIterations(50, 20, 19), 1);
    assert.equal(childMaxIterations(undefined, 21, 0, 2), 10, 'split among the children of one reply');
    assert.deepEqual(childObservation('c.sub-1', { status: 'finished', finalMessage: 'done', lastError: null }), {
      content: 'done',
      isError: false,
    });
    assert.deepEqual(childObservation('c.sub-1', { status: 'error', finalMessage: null, lastError: 'HTTP 401' }), {
      content: 'The sub-agent c.sub-1 stopped with an error: HTTP 401',
      isError: true,
    });
    assert.ok(childHasEnded('stuck') && !childHasEnded('paused'));
  });
});
