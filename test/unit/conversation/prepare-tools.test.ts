// src/conversation/prepare-tools.ts: MCP annotations, AGENTS.md (and the worker's own variables, src/mcp/manager.ts).
import assert from 'node:assert/strict';
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { mcpToolSpec, readInstructions } from '../../../src/conversation/prepare-tools.js';
import { isWorkerOwnVariable } from '../../../src/mcp/manager.js';

import { DEFAULTS } from '../../../src/core/types.js';
import { withInstructions } from '../../../src/conversation/workflow/prompt.js';
import { tempDir } from '../../support/temp-dirs.js';

describe('MCP tools and AGENTS.md', () => {
  const info = (annotations: Record<string, boolean>) => ({
    name: 'mcp__s__t',
    server: 's',
    tool: 't',
    description: '',
    inputSchema: { type: 'object' },
    annotations,
  });
  test('annotations choose retry and approval (MCP defaults: may be destructive)', () => {
    assert.deepEqual([mcpToolSpec(info({})).needsApproval, mcpToolSpec(info({})).mcp?.retry], [true, 'report']);
    assert.deepEqual(
      [mcpToolSpec(info({ readOnlyHint: true })).needsApproval, mcpToolSpec(info({ readOnlyHint: true })).mcp?.retry],
      [false, 'repeat'],
    );
    assert.deepEqual(
      [mcpToolSpec(info({ destructiveHint: false })).needsApproval, mcpToolSpec(info({ destructiveHint: false })).mcp?.retry],
      [false, 'report'],
    );
    assert.equal(mcpToolSpec(info({ idempotentHint: true, destructiveHint: true })).mcp?.retry, 'repeat');
    assert.equal(mcpToolSpec(info({})).description, 't (from the MCP server s)');
  });

  test('AGENTS.md is read at the root, capped, and goes after the system prompt', async () => {
    const ws = await tempDir('faheem-agents-');
    assert.equal(await readInstructions(ws), undefined);
    await writeFile(path.join(ws, 'AGENTS.md'), 'Use pnpm.\n');
    const small = await readInstructions(ws);
    assert.deepEqual(small, { path: 'AGENTS.md', text: 'Use pnpm.\n', truncated: false });
    assert.equal(
      withInstructions('BASE', small),
      "BASE\n\nThe repository's instructions for agents (AGENTS.md); follow them:\n<repository_instructions>\nUse pnpm.\n</repository_instructions>",
    );
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
    const ws = await tempDir('faheem-agents-');
    await symlink('/proc/self/environ', path.join(ws, 'AGENTS.md'));
    await assert.rejects(readInstructions(ws), /symbolic link/);
    const ws2 = await tempDir('faheem-agents-');
    await symlink('/dev/zero', path.join(ws2, 'AGENTS.md'));
    await assert.rejects(readInstructions(ws2), /symbolic link/);
  });

  test("the worker's own variables are never given to MCP servers", () => {
    for (const name of [
      'LLM_API_KEY',
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'TEMPORAL_API_KEY',
      'FAHEEM_ENCRYPTION_KEY',
      'FAHEEM_CODEC_TOKEN',
    ])
      assert.equal(isWorkerOwnVariable(name), true, name);
    for (const name of ['GITHUB_TOKEN', 'FAHEEM_SECRET_DB', 'MCP_TOKEN', 'PATH']) assert.equal(isWorkerOwnVariable(name), false, name);
  });
});
