// The Web UI's summary of a model call names the model that answers it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelLabel } from '../../../../src/conversation/workflow/details.js';

test("a model call's summary names the conversation's model, else the worker's, else the last that answered", () => {
  assert.equal(modelLabel('anthropic/claude-sonnet-4-6', 'openai/gpt-4o', 'gpt-4o'), 'anthropic/claude-sonnet-4-6');
  assert.equal(modelLabel('', 'openai/gpt-4o', 'gpt-4o-2024-08-06'), 'openai/gpt-4o');
  assert.equal(modelLabel('', undefined, 'gpt-4o-2024-08-06'), 'gpt-4o-2024-08-06');
  assert.equal(modelLabel('', undefined, undefined), "the worker's model");
});
