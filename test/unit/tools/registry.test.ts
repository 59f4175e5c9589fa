// src/tools/define.ts and src/tools/registry.ts: defining tools, the registry, specs and per-call plans.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { TerminalTool } from '../../../src/client/client.js';
import { defineTool, isTool, retryClass } from '../../../src/tools/define.js';
import { TaskTrackerTool } from '../../../src/tools/in-workflow.js';
import { functionTool, planCall, ToolRegistry, toolSpec } from '../../../src/tools/registry.js';

/** What a worker makes its built-ins from: its environment. */
const WORKER = { env: process.env };

const add = defineTool({
  name: 'add_numbers',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  retry: 'repeat',
  execute: ({ a, b }) => String(a + b),
});
const refund = defineTool({
  name: 'refund',
  description: 'Refund',
  parameters: z.object({ amount: z.number() }),
  needsApproval: ({ amount }) => amount > 100,
  timeoutSeconds: ({ amount }) => (amount > 1000 ? 600 : undefined),
  summary: ({ amount }) => `refund $${amount}`,
  execute: () => 'ok',
});

describe('defineTool and the registry', () => {
  test('a tool is plain: a name, a schema, what a retry may do (report unless it says)', () => {
    assert.ok(isTool(add));
    assert.equal(retryClass(add, { a: 1, b: 2 }), 'repeat');
    assert.equal(retryClass(refund, { amount: 1 }), 'report');
    assert.throws(() => defineTool({ ...add, name: 'has space' }), /not a valid tool name/);
    assert.throws(() => defineTool({ ...add, name: 'mcp__x__y' }), /MCP/);
  });

  test('the worker has the built-ins and yours; clashes and non-tools are refused', () => {
    const registry = new ToolRegistry([add, refund, TerminalTool], WORKER);
    assert.deepEqual(registry.customNames(), ['add_numbers', 'refund']);
    assert.notEqual(registry.get('terminal'), TerminalTool, "the worker's own terminal, made from its environment");
    for (const n of ['terminal', 'file_editor', 'task_tracker', 'think', 'finish', 'add_numbers']) assert.ok(registry.get(n), n);
    assert.throws(() => new ToolRegistry([defineTool({ ...add, name: 'terminal' })], WORKER), /built-in tool's name/);
    assert.throws(() => new ToolRegistry([add, defineTool({ ...add })], WORKER), /two different tools are named "add_numbers"/);
    assert.throws(() => new ToolRegistry([{ name: 'x' }], WORKER), /not a tool made with defineTool/);
  });

  test('a spec is the JSON Schema the model sees, made once', () => {
    const spec = toolSpec(add);
    assert.equal(spec, toolSpec(add));
    assert.deepEqual(spec.parameters, {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
      additionalProperties: false,
    });
    assert.equal(spec.runsIn, 'host');
    assert.equal(toolSpec(TaskTrackerTool).runsIn, 'workflow');
    assert.equal(toolSpec(refund).needsApproval, 'per-call');
    assert.deepEqual(functionTool(spec).function.name, 'add_numbers');
    // A default is optional for the model (input side of the schema).
    const status = (toolSpec(TaskTrackerTool).parameters as { properties: { task_list: { items: { required: string[] } } } }).properties
      .task_list.items.required;
    assert.deepEqual(status, ['title']);
  });

  test("per-call plan: the tool's own rules on a worker that has it, the spec elsewhere", () => {
    const registry = new ToolRegistry([refund], WORKER);
    assert.deepEqual(planCall(registry, toolSpec(refund), { name: 'refund', arguments: '{"amount": 50}' }), {
      needsApproval: false,
      summary: 'refund $50',
    });
    assert.deepEqual(planCall(registry, toolSpec(refund), { name: 'refund', arguments: '{"amount": 5000}' }), {
      needsApproval: true,
      timeoutSeconds: 600,
      summary: 'refund $5000',
    });
    assert.deepEqual(planCall(registry, toolSpec(refund), { name: 'refund', arguments: 'not json' }), { needsApproval: false });
    // A worker without the tool cannot evaluate a per-call rule: it asks.
    assert.deepEqual(planCall(new ToolRegistry([], WORKER), toolSpec(refund), { name: 'refund', arguments: '{"amount": 1}' }), {
      needsApproval: true,
    });
    assert.equal(planCall(new ToolRegistry([], WORKER), undefined, { name: 'nothing', arguments: '{}' }).needsApproval, undefined);
    const terminal = planCall(new ToolRegistry([], WORKER), undefined, {
      name: 'terminal',
      arguments: '{"command":"ls","security_risk":"LOW","timeout":10}',
    });
    assert.deepEqual(terminal, { needsApproval: false, timeoutSeconds: 70, summary: '$ ls' });
    assert.equal(
      planCall(new ToolRegistry([], WORKER), undefined, { name: 'terminal', arguments: '{"command":"rm -rf /"}' }).needsApproval,
      true,
    );
  });

  test('a rule that throws asks rather than guesses', () => {
    const odd = defineTool({
      name: 'odd',
      description: '',
      parameters: z.object({}),
      needsApproval: () => {
        throw new Error('bug');
      },
      execute: () => '',
    });
    assert.equal(planCall(new ToolRegistry([odd], WORKER), toolSpec(odd), { name: 'odd', arguments: '{}' }).needsApproval, true);
  });

  test('task_tracker keeps its list as durable tool state', async () => {
    const ctx = {
      conversationId: 'c',
      toolCallId: 't',
      workspace: '/w',
      signal: new AbortController().signal,
      heartbeat: () => undefined,
      secrets: {},
      attempt: 1,
      exec: () => Promise.reject(new Error('no exec here')),
    };
    const planned = await TaskTrackerTool.execute(
      TaskTrackerTool.parameters.parse({ command: 'plan', task_list: [{ title: 'write tests' }] }),
      { ...ctx, state: undefined },
    );
    assert.ok(typeof planned === 'object' && planned.state);
    assert.deepEqual(planned.state, [{ title: 'write tests', status: 'todo' }]);
    const view = await TaskTrackerTool.execute({ command: 'view' }, { ...ctx, state: planned.state });
    assert.equal(view, '1. [ ] write tests');
    assert.equal(TaskTrackerTool.parameters.safeParse({ command: 'plan', task_list: [{ title: '  ' }] }).success, false);
  });
});
