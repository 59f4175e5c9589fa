// The pure parts of the open tool system, fast and without a server: defining tools, the registry,
// specs and per-call plans, confirmation rules, MCP annotations, AGENTS.md.
import assert from 'node:assert/strict';
import { mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { mcpToolSpec, readInstructions } from '../src/activities/prepare-tools.js';
import { isWorkerOwnVariable } from '../src/mcp/manager.js';
import { TerminalTool } from '../src/tools/builtin.js';
import { defineTool, isTool, retryClass } from '../src/tools/define.js';
import { TaskTrackerTool } from '../src/tools/local.js';
import { functionTool, planCall, ToolRegistry, toolSpec } from '../src/tools/registry.js';
import { DEFAULTS } from '../src/types.js';
import { needsConfirmation } from '../src/workflows/confirmation.js';
import { withInstructions } from '../src/workflows/prompt.js';

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
    const registry = new ToolRegistry([add, refund, TerminalTool]);
    assert.deepEqual(registry.customNames(), ['add_numbers', 'refund']);
    for (const n of ['terminal', 'file_editor', 'task_tracker', 'think', 'finish', 'add_numbers']) assert.ok(registry.get(n), n);
    assert.throws(() => new ToolRegistry([defineTool({ ...add, name: 'terminal' })]), /built-in tool's name/);
    assert.throws(() => new ToolRegistry([add, defineTool({ ...add })]), /two different tools are named "add_numbers"/);
    assert.throws(() => new ToolRegistry([{ name: 'x' }]), /not a tool made with defineTool/);
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
    const status = (toolSpec(TaskTrackerTool).parameters as { properties: { task_list: { items: { required: string[] } } } }).properties.task_list.items.required;
    assert.deepEqual(status, ['title']);
  });

  test('per-call plan: the tool\'s own rules on a worker that has it, the spec elsewhere', () => {
    const registry = new ToolRegistry([refund]);
    assert.deepEqual(planCall(registry, toolSpec(refund), { name: 'refund', arguments: '{"amount": 50}' }), { needsApproval: false, summary: 'refund $50' });
    assert.deepEqual(planCall(registry, toolSpec(refund), { name: 'refund', arguments: '{"amount": 5000}' }), { needsApproval: true, timeoutSeconds: 600, summary: 'refund $5000' });
    assert.deepEqual(planCall(registry, toolSpec(refund), { name: 'refund', arguments: 'not json' }), { needsApproval: false });
    // A worker without the tool cannot evaluate a per-call rule: it asks.
    assert.deepEqual(planCall(new ToolRegistry(), toolSpec(refund), { name: 'refund', arguments: '{"amount": 1}' }), { needsApproval: true });
    assert.equal(planCall(new ToolRegistry(), undefined, { name: 'nothing', arguments: '{}' }).needsApproval, undefined);
    const terminal = planCall(new ToolRegistry(), undefined, { name: 'terminal', arguments: '{"command":"ls","security_risk":"LOW","timeout":10}' });
    assert.deepEqual(terminal, { needsApproval: false, timeoutSeconds: 70, summary: '$ ls' });
    assert.equal(planCall(new ToolRegistry(), undefined, { name: 'terminal', arguments: '{"command":"rm -rf /"}' }).needsApproval, true);
  });

  test('a rule that throws asks rather than guesses', () => {
    const odd = defineTool({ name: 'odd', description: '', parameters: z.object({}), needsApproval: () => { throw new Error('bug'); }, execute: () => '' });
    assert.equal(planCall(new ToolRegistry([odd]), toolSpec(odd), { name: 'odd', arguments: '{}' }).needsApproval, true);
  });

  test('task_tracker keeps its list as durable tool state', async () => {
    const ctx = { conversationId: 'c', toolCallId: 't', workspace: '/w', signal: new AbortController().signal, heartbeat: () => undefined, secrets: {}, attempt: 1, exec: () => Promise.reject(new Error('no exec here')) };
    const planned = await TaskTrackerTool.execute(TaskTrackerTool.parameters.parse({ command: 'plan', task_list: [{ title: 'write tests' }] }), { ...ctx, state: undefined });
    assert.ok(typeof planned === 'object' && planned.state);
    assert.deepEqual(planned.state, [{ title: 'write tests', status: 'todo' }]);
    const view = await TaskTrackerTool.execute({ command: 'view' }, { ...ctx, state: planned.state });
    assert.equal(view, '1. [ ] write tests');
    assert.equal(TaskTrackerTool.parameters.safeParse({ command: 'plan', task_list: [{ title: '  ' }] }).success, false);
  });
});

describe('confirmation', () => {
  const base = { tool: 'x', arguments: {}, inWorkflow: false };
  test('never asks under never, or for tools inside the workflow, or for tools the conversation lacks', () => {
    assert.equal(needsConfirmation('never', { ...base, plan: { needsApproval: true } }), false);
    assert.equal(needsConfirmation('always', { ...base, inWorkflow: true }), false);
    assert.equal(needsConfirmation('always', { ...base, unknown: true }), false);
    assert.equal(needsConfirmation('always', base), true);
  });
  test('risky: the tool\'s rule when there is one, else the model\'s rating', () => {
    assert.equal(needsConfirmation('risky', { ...base, plan: { needsApproval: false }, arguments: { security_risk: 'HIGH' } }), false);
    assert.equal(needsConfirmation('risky', { ...base, plan: { needsApproval: true } }), true);
    assert.equal(needsConfirmation('risky', { ...base, arguments: { security_risk: 'MEDIUM' } }), false);
    assert.equal(needsConfirmation('risky', { ...base, arguments: { security_risk: 'HIGH' } }), true);
    assert.equal(needsConfirmation('risky', base), true, 'unrated counts as risky');
  });
});

describe('MCP tools and AGENTS.md', () => {
  const info = (annotations: Record<string, boolean>) => ({ name: 'mcp__s__t', server: 's', tool: 't', description: '', inputSchema: { type: 'object' }, annotations });
  test('annotations choose retry and approval (MCP defaults: may be destructive)', () => {
    assert.deepEqual([mcpToolSpec(info({})).needsApproval, mcpToolSpec(info({})).mcp?.retry], [true, 'report']);
    assert.deepEqual([mcpToolSpec(info({ readOnlyHint: true })).needsApproval, mcpToolSpec(info({ readOnlyHint: true })).mcp?.retry], [false, 'repeat']);
    assert.deepEqual([mcpToolSpec(info({ destructiveHint: false })).needsApproval, mcpToolSpec(info({ destructiveHint: false })).mcp?.retry], [false, 'report']);
    assert.equal(mcpToolSpec(info({ idempotentHint: true, destructiveHint: true })).mcp?.retry, 'repeat');
    assert.equal(mcpToolSpec(info({})).description, 't (from the MCP server s)');
  });

  test('AGENTS.md is read at the root, capped, and goes after the system prompt', async () => {
    const ws = await mkdtemp(path.join(tmpdir(), 'faheem-agents-'));
    assert.equal(await readInstructions(ws), undefined);
    await writeFile(path.join(ws, 'AGENTS.md'), 'Use pnpm.\n');
    const small = await readInstructions(ws);
    assert.deepEqual(small, { path: 'AGENTS.md', text: 'Use pnpm.\n', truncated: false });
    assert.equal(withInstructions('BASE', small), 'BASE\n\nThe repository\'s instructions for agents (AGENTS.md); follow them:\n<repository_instructions>\nUse pnpm.\n</repository_instructions>');
    assert.equal(withInstructions('BASE', undefined), 'BASE');
    await writeFile(path.join(ws, 'AGENTS.md'), 'x'.repeat(DEFAULTS.maxInstructionsChars + 10));
    const big = await readInstructions(ws);
    assert.equal(big?.truncated, true);
    assert.equal(big?.text.length, DEFAULTS.maxInstructionsChars);
    // Secrets in it are masked.
    await writeFile(path.join(ws, 'AGENTS.md'), 'the key is sk-live-abcdef123456');
    assert.equal((await readInstructions(ws, ['sk-live-abcdef123456']))?.text, 'the key is <secret-hidden>');
  });

  test('AGENTS.md is never read through a link or from a device', async () => {
    const ws = await mkdtemp(path.join(tmpdir(), 'faheem-agents-'));
    await symlink('/proc/self/environ', path.join(ws, 'AGENTS.md'));
    await assert.rejects(readInstructions(ws), /symbolic link/);
    const ws2 = await mkdtemp(path.join(tmpdir(), 'faheem-agents-'));
    await symlink('/dev/zero', path.join(ws2, 'AGENTS.md'));
    await assert.rejects(readInstructions(ws2), /symbolic link/);
  });

  test('the worker\'s own variables are never given to MCP servers', () => {
    for (const name of ['LLM_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'TEMPORAL_API_KEY', 'FAHEEM_ENCRYPTION_KEY', 'FAHEEM_CODEC_TOKEN']) assert.equal(isWorkerOwnVariable(name), true, name);
    for (const name of ['GITHUB_TOKEN', 'FAHEEM_SECRET_DB', 'MCP_TOKEN', 'PATH']) assert.equal(isWorkerOwnVariable(name), false, name);
  });
});

describe('the condenser\'s count', () => {
  test('kept as events come equals rebuilding the prompt, through condensations', async () => {
    const { PromptCount } = await import('../src/workflows/prompt-count.js');
    const { promptEvents, isModelEvent } = await import('../src/workflows/prompt.js');
    const { condensationRange } = await import('../src/workflows/prompt.js');
    type E = import('../src/types.js').ConversationEvent;
    // A seeded pseudo-random log: messages, tool calls and results, status noise, and condensations.
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const events: E[] = [];
    const count = new PromptCount();
    const push = (e: Omit<E, 'index' | 'timestamp'>) => {
      const full = { ...e, index: events.length, timestamp: '' } as E;
      events.push(full);
      count.add(full, (i) => events[i]);
      assert.equal(count.visible, promptEvents(events).filter(isModelEvent).length, `after event ${full.index} (${full.kind})`);
    };
    for (let step = 0; step < 400; step++) {
      const r = rand();
      if (r < 0.1) push({ kind: 'message', source: 'user', text: 'hi' } as never);
      else if (r < 0.15) push({ kind: 'status', source: 'environment', status: 'running' } as never);
      else if (r < 0.2) {
        const range = condensationRange(events, 2);
        if (range) push({ kind: 'condensation', source: 'environment', summary: 's', forgottenFrom: range.from, forgottenTo: range.to } as never);
      } else {
        push({ kind: 'action', source: 'agent', tool: 'think', toolCallId: `c${step}`, arguments: {}, replyId: `r${step}` } as never);
        push({ kind: 'observation', source: 'environment', tool: 'think', toolCallId: `c${step}`, content: 'ok', isError: false } as never);
      }
    }
    assert.ok(events.some((e) => e.kind === 'condensation'), 'the log was condensed');
    assert.equal(new PromptCount(events).visible, count.visible, 'rebuilt from a carried log');
    // A carried (compacted) log gives the model the same prompt, and the same count.
    const { compactEvents } = await import('../src/workflows/event-log.js');
    const carried = compactEvents(events);
    assert.ok(carried.length < events.length / 2, `carried ${carried.length} of ${events.length}`);
    assert.deepEqual(promptEvents(carried), promptEvents(events));
    assert.equal(new PromptCount(carried).visible, count.visible);
  });
});

describe('the event log a run holds', () => {
  test('a carried log with a gap: count, lookup, pages from an index, appends, compaction', async () => {
    const { EventLog } = await import('../src/workflows/event-log.js');
    const ev = (index: number, kind = 'message') => ({ index, timestamp: '', source: 'user', kind, text: `e${index}` }) as never;
    const log = new EventLog([ev(0), ev(1), ev(7), ev(8), ev(9)]);
    assert.equal(log.count, 10);
    assert.deepEqual(log.get(1), ev(1) as unknown);
    assert.equal(log.get(4), undefined, 'dropped');
    assert.deepEqual([...log.from(1)].map((e) => e.index), [1, 7, 8, 9]);
    assert.deepEqual([...log.from(8)].map((e) => e.index), [8, 9]);
    log.append(ev(10));
    assert.equal(log.count, 11);
    assert.throws(() => log.append(ev(12)), /appended at 11/);
    assert.deepEqual([...log.newestFirst()].map((e) => e.index), [10, 9, 8, 7, 1, 0]);
    const full = new EventLog([ev(0), ev(1), ev(2)]);
    assert.equal(full.held().length, 3);
    assert.equal(new EventLog().count, 0);
  });
});
