// Activity: on the workspace host, when a conversation starts, say which tools it has (this worker's
// built-ins and custom tools, and its MCP servers' tools) and what AGENTS.md tells the agent.
import { Context } from '@temporalio/activity';
import type { CheckpointStore } from '../time-travel/shadow-repo.js';
import { checkpointWithin } from '../time-travel/checkpoint-with.js';
import { FAILURE, failure } from '../core/failure-types.js';
import { access, constants, open, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { McpManager, McpToolInfo } from '../mcp/manager.js';
import type { HookEventName } from '../hooks/config.js';
import { redact } from '../security/redact.js';
import { readSkills } from '../skills/read-skills.js';
import { toolSpec, type ToolRegistry } from '../tools/registry.js';
import { DEFAULTS, type PrepareToolsInput, type PrepareToolsResult, type RepositoryInstructions, type ToolSpec } from '../core/types.js';
import { withHeartbeat } from './heartbeat.js';
import { toolNotAvailable } from './tool-not-available.js';

export const INSTRUCTIONS_FILE = 'AGENTS.md';

export function createPrepareTools(deps: {
  registry: ToolRegistry;
  mcp: McpManager;
  secretValues: readonly string[];
  /** The host's faheem home: its skills/ folder is scanned besides the workspace's .agents/skills/. */
  home?: string;
  /** The events this worker has TypeScript hooks for, reported as hookEvents. */
  hookEvents?: readonly HookEventName[];
  /** Where the checkpoint before the first step goes when the input asks for it. */
  checkpoints?: CheckpointStore;
  /** The model this worker calls for conversations that name none (LLM_MODEL), reported as workerModel. */
  workerModel?: string;
  /** The worker's fallback from its default sandbox, told in the setup (an environment error event: for people, not the model). */
  sandboxWarning?: string;
}) {
  return async function prepareTools(input: PrepareToolsInput): Promise<PrepareToolsResult> {
    const ctx = Context.current();
    const startedAt = Date.now();
    const queue = ctx.info.taskQueue;
    await checkWorkspace(input.workspace, queue);
    const errors: string[] = [];
    if (deps.sandboxWarning) errors.push(`On ${queue}, ${deps.sandboxWarning}`);
    const tools: ToolSpec[] = [];
    // MCP tools come from the servers; a sub-agent given some of them by name gets just those.
    const mcpWanted = input.tools.filter((n) => n.startsWith('mcp__'));
    const names = [...new Set([...input.tools, ...(input.hostTools ? deps.registry.customNames() : [])])].filter(
      (n) => !n.startsWith('mcp__'),
    );
    for (const name of names) {
      const tool = deps.registry.get(name);
      if (tool) tools.push(toolSpec(tool));
      else errors.push(toolNotAvailable(name, queue, 'The agent goes on without it.'));
    }
    if (input.mcpServers && Object.keys(input.mcpServers).length > 0) {
      const servers = input.mcpServers;
      const listed = await withHeartbeat(
        () => deps.mcp.listTools(input.conversationId, servers, { signal: ctx.cancellationSignal, cwd: input.workspace }),
        { context: ctx },
      );
      const taken = new Set(tools.map((t) => t.name));
      for (const t of listed.tools) {
        if (mcpWanted.length > 0 && !mcpWanted.includes(t.name)) continue;
        if (taken.has(t.name)) errors.push(`MCP tool ${t.server}/${t.tool} is left out: another tool is already named ${t.name}.`);
        else tools.push(mcpToolSpec(t));
        taken.add(t.name);
      }
      for (const e of listed.errors)
        errors.push(`MCP server "${e.server}" is not available; the agent goes on without its tools. ${e.message}`);
    }
    const instructions = await readInstructions(input.workspace, deps.secretValues).catch((err: Error) => {
      errors.push(`${INSTRUCTIONS_FILE} could not be read: ${err.message}`);
      return undefined;
    });
    const skills = await readSkills({
      workspace: input.workspace,
      ...(deps.home ? { home: deps.home } : {}),
      secretValues: deps.secretValues,
    });
    // The checkpoint before the first step, with the setup (see checkpoint-with.ts).
    const checkpoint = input.checkpoint
      ? await checkpointWithin(deps.checkpoints, { ...input, step: input.checkpoint.step }, ctx, startedAt)
      : undefined;
    return {
      tools,
      ...(checkpoint ? { checkpoint } : {}),
      errors: errors.map((e) => redact(e, deps.secretValues)),
      ...(instructions ? { instructions } : {}),
      ...(skills.skills.length ? { skills: skills.skills } : {}),
      ...(skills.warnings.length ? { warnings: skills.warnings } : {}),
      ...(deps.hookEvents?.length ? { hookEvents: [...deps.hookEvents] } : {}),
      ...(deps.workerModel ? { workerModel: deps.workerModel } : {}),
    };
  };
}

/** The workspace must be a directory this worker can read and write; otherwise nothing can run. */
async function checkWorkspace(workspace: string, queue: string): Promise<void> {
  const problem = await stat(workspace).then(
    async (info) => {
      if (!info.isDirectory()) return 'is not a directory';
      return access(workspace, constants.R_OK | constants.W_OK | constants.X_OK).then(
        () => undefined,
        () => 'is not readable and writable by the worker',
      );
    },
    (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? 'does not exist' : err.message),
  );
  if (problem) {
    throw failure(FAILURE.WorkspaceUnavailable, `the workspace ${workspace} ${problem} on the host of ${queue}`);
  }
}

/** An MCP tool as the conversation keeps it; its annotations choose retry and approval. */
export function mcpToolSpec(t: McpToolInfo): ToolSpec {
  const a = t.annotations;
  // MCP's defaults: a tool is not read-only and may be destructive unless it says otherwise.
  const harmless = a.readOnlyHint === true || a.destructiveHint === false;
  return {
    name: t.name,
    description: t.description || `${t.tool} (from the MCP server ${t.server})`,
    parameters: t.inputSchema,
    runsIn: 'host',
    needsApproval: !harmless,
    mcp: { server: t.server, tool: t.tool, retry: a.readOnlyHint === true || a.idempotentHint === true ? 'repeat' : 'report' },
  };
}

/**
 * AGENTS.md at the workspace root, cut at DEFAULTS.maxInstructionsChars; undefined when there is none.
 * The worker reads it itself (outside any sandbox), so only a plain file is read, never through a
 * symlink (it could point at /proc/self/environ or /dev/zero), and at most the cap.
 */
export async function readInstructions(workspace: string, secrets: readonly string[] = []): Promise<RepositoryInstructions | undefined> {
  const max = DEFAULTS.maxInstructionsChars;
  let handle: FileHandle;
  try {
    handle = await open(path.join(workspace, INSTRUCTIONS_FILE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new Error(`${INSTRUCTIONS_FILE} is a symbolic link; only a plain file is read`);
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) throw new Error(`${INSTRUCTIONS_FILE} is not a plain file`);
    // Characters are at most 4 bytes: read enough for the cap, and one more to know it was cut.
    const buffer = Buffer.alloc(max * 4 + 4);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    if (text.trim() === '') return undefined;
    const truncated = text.length > max || bytesRead === buffer.length;
    return { path: INSTRUCTIONS_FILE, text: redact(text.slice(0, max), secrets), truncated };
  } finally {
    await handle.close();
  }
}
