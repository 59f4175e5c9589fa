// What a conversation started on this host, stopped: the command its terminal left running (past its
// soft timeout), its MCP servers and its kept network. One function for every way a conversation lets
// go of its host: `pause --now` and its end (the releaseTools activity), hibernation and a lost host
// (releasePoolHost, releasePoolHostMidStep), a new claim of its folder here (claimPoolHost).
import type { McpManager } from '../mcp/manager.js';
import { stopKeptNetwork } from '../sandbox/kept-network.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { stopSessionCommand } from '../tools/terminal.js';

/** Where a conversation's processes run on this worker. */
export interface ConversationProcesses {
  mcp: McpManager;
  /** The worker's sandbox (its kept networks); undefined: unsandboxed, no kept network. */
  sandbox?: Sandbox | undefined;
}

/**
 * Stops every process conversation `conversationId` started on this worker and still runs: its
 * terminal's running command (its process group: sandboxed, everything in its sandbox; unsandboxed,
 * what stayed in its group), its MCP servers, and its kept network. Resolves once they are stopped;
 * safe to call again (nothing left is nothing done).
 */
export async function stopConversationProcesses(conversationId: string, where: ConversationProcesses): Promise<void> {
  await Promise.all([
    stopSessionCommand(conversationId),
    where.mcp.closeConversation(conversationId),
    stopKeptNetwork(where.sandbox, conversationId),
  ]);
}

/**
 * The releaseTools activity: on the workspace host, after a `pause --now` and when the conversation
 * ends, everything it started there stops (the name is from when it stopped only MCP servers).
 */
export function createReleaseTools(where: ConversationProcesses) {
  return async function releaseTools(conversationId: string): Promise<void> {
    await stopConversationProcesses(String(conversationId), where);
  };
}
