// Activity: when a conversation ends, stop the MCP servers this host started for it.
import type { McpManager } from '../mcp/manager.js';

export function createReleaseTools(mcp: McpManager) {
  return async function releaseTools(conversationId: string): Promise<void> {
    await mcp.closeConversation(conversationId);
  };
}
