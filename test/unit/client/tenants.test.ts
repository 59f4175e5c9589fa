// Tenants on conversations: the name rule, what a start carries (search attribute, fairness key,
// options), the list's query, the doctor's line, and the worker's cap on model calls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent, LLM, conversationStart } from '../../../src/client/client.js';
import { searchAttributesLine } from '../../../src/cli/doctor.js';
import { stateJson } from '../../../src/cli/format.js';
import { readWorkerConfig } from '../../../src/worker/config.js';
import { listQueryText } from '../../../src/conversation/list-query.js';
import { InvalidRequestError } from '../../../src/core/errors.js';
import { FAIRNESS_CONFIG, DYNAMIC_CONFIG } from '../../../src/server/dev-server.js';
import { checkTenant } from '../../../src/client/tenants.js';
import { childInput } from '../../../src/sub-agents/workflow/delegation.js';
import { ConversationStatusKey, TenantKey } from '../../../src/conversation/workflow/messages.js';
import { maxInFlight } from '../../support/in-flight.js';
import type { ConversationState } from '../../../src/core/types.js';

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }) });

test('tenant names: lowercase letters, digits, . _ -, up to 63, never ..', () => {
  for (const ok of ['acme', 'team-1', 'a.b_c', 'x'.repeat(63)]) assert.equal(checkTenant(ok), ok);
  for (const bad of ['', 'Acme', 'a b', '-a', 'a..b', 'x'.repeat(64), "a'b", 'ü'])
    assert.throws(() => checkTenant(bad), InvalidRequestError, JSON.stringify(bad));
});

test("a start with a tenant sets its search attribute, its fairness key and the conversation's options", () => {
  const { workflow } = conversationStart({ agent: agent(), workspace: '/tmp/w', tenant: 'acme', firstMessage: 'hi', run: true });
  assert.deepEqual(workflow.priority, { fairnessKey: 'acme' });
  const tenant = workflow.typedSearchAttributes.find((a) => a.key.name === TenantKey.name);
  assert.equal(tenant?.value, 'acme');
  assert.ok(workflow.typedSearchAttributes.some((a) => a.key.name === ConversationStatusKey.name));
  assert.equal(workflow.args[0].options.tenant, 'acme');
  assert.match(workflow.staticDetails, /\*\*Tenant:\*\* acme/);
});

test('a start without a tenant has no tenant attribute, no priority and no tenant option', () => {
  const { workflow } = conversationStart({ agent: agent(), workspace: '/tmp/w' });
  assert.equal(workflow.priority, undefined);
  assert.ok(!workflow.typedSearchAttributes.some((a) => a.key.name === TenantKey.name));
  assert.ok(!('tenant' in workflow.args[0].options));
});

test('a start with a tenant that is not a name is refused before anything starts', () => {
  assert.throws(() => conversationStart({ agent: agent(), workspace: '/tmp/w', tenant: "x' OR '1'='1" }), InvalidRequestError);
});

test("a sub-agent's input keeps its parent's tenant", () => {
  const { workflow } = conversationStart({ agent: agent(), workspace: '/tmp/w', tenant: 'acme' });
  const child = childInput(workflow.args[0].options, {
    parentId: 'p',
    depth: 0,
    task: 't',
    tools: ['terminal'],
    requested: false,
    maxIterations: 5,
    budgetLeft: undefined,
  });
  assert.equal(child.options.tenant, 'acme');
});

test('the list query filters by tenant, and refuses a name that is not one', () => {
  assert.equal(listQueryText({ tenant: 'acme' }), `WorkflowType = 'conversation' AND FaheemTenant = 'acme'`);
  assert.equal(
    listQueryText({ status: 'running', parentId: "p'1", tenant: 'b' }),
    `WorkflowType = 'conversation' AND ConversationStatus = 'running' AND ParentWorkflowId = 'p''1' AND FaheemTenant = 'b'`,
  );
  assert.equal(listQueryText({}), `WorkflowType = 'conversation'`);
  assert.throws(() => listQueryText({ tenant: "a' OR 'x'='x" }), InvalidRequestError);
});

test('status --json has the tenant when the conversation has one, and no key otherwise', () => {
  const state = {
    id: 'c',
    status: 'idle',
    iterations: 0,
    runNumber: 0,
    events: 0,
    pendingMessages: 0,
    metrics: { accumulatedCost: 0, promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, llmCalls: 0 },
    lastError: null,
    workspace: '/w',
    model: '',
    terminal: { cwd: '/w', env: {} },
    closed: false,
    pendingActions: [],
    runCost: 0,
    children: [],
    finalMessage: null,
  } as unknown as ConversationState;
  assert.equal(stateJson({ ...state, tenant: 'acme' }).tenant, 'acme');
  assert.ok(!('tenant' in stateJson(state)));
});

test("the doctor's search attributes line names each attribute and what it filters, or what is missing", () => {
  const all = searchAttributesLine({ ConversationStatus: 2, ConversationModel: 2, FaheemTenant: 2 });
  assert.equal(all.mark, 'ok');
  assert.equal(all.detail, 'ConversationStatus, ConversationModel and FaheemTenant registered (lists filter by status, model and tenant)');
  const missing = searchAttributesLine({ ConversationStatus: 2, ConversationModel: 2 });
  assert.equal(missing.mark, 'fail');
  assert.match(missing.detail, /^FaheemTenant not registered \(`faheem list` cannot filter by tenant\)/);
  assert.match(missing.detail, /--name FaheemTenant --type Keyword/);
});

test('FAHEEM_MAX_MODEL_CALLS: a positive whole number, or an error naming the variable', () => {
  assert.equal(readWorkerConfig({ FAHEEM_MAX_MODEL_CALLS: '3' }).maxModelCalls, 3);
  assert.equal(readWorkerConfig({}).maxModelCalls, undefined);
  for (const bad of ['0', '-1', '1.5', 'two'])
    assert.throws(() => readWorkerConfig({ FAHEEM_MAX_MODEL_CALLS: bad }), /FAHEEM_MAX_MODEL_CALLS/, bad);
});

test('dev servers get fairness on, on one partition per task queue', () => {
  assert.deepEqual(FAIRNESS_CONFIG, ['matching.enableFairness=true']);
  assert.ok(DYNAMIC_CONFIG.includes('matching.numTaskqueueReadPartitions=1'));
  assert.ok(DYNAMIC_CONFIG.includes('matching.numTaskqueueWritePartitions=1'));
});

test("the fairness bench's count of calls in flight at once", () => {
  assert.equal(maxInFlight([]), 0);
  assert.equal(maxInFlight([{ startedAt: 5, endedAt: 5 }]), 1);
  // One handed over to the next at the same millisecond is one at a time.
  assert.equal(
    maxInFlight([
      { startedAt: 0, endedAt: 10 },
      { startedAt: 10, endedAt: 20 },
    ]),
    1,
  );
  assert.equal(maxInFlight([{ startedAt: 0, endedAt: 10 }, { startedAt: 5, endedAt: 20 }, { startedAt: 6 }]), 3);
});
