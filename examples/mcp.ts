// MCP servers as tools: the agent gets every tool of each server as mcp__<server>__<tool>. Servers
// run on the workspace's host, one process per conversation, started when first needed. Run it
// against a running server (`npx faheem server`):
//   npx tsx examples/mcp.ts
// With no model configured (LLM_API_KEY / LLM_BASE_URL unset) an offline scripted model stands in.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, Conversation, LLM, TerminalTool, connectClient, type McpServersSpec } from 'faheemcode';
import { startScriptedModel } from 'faheemcode/testing';
import { createWorker } from 'faheemcode/worker';

// The format editors keep. `${VAR}` is filled in from the worker's environment, so no token is
// written into the conversation's history. (`cwd: process.cwd()` lets npx find a local install.)
const mcpServers: McpServersSpec = {
  everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], cwd: process.cwd() },
  // remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${EXAMPLE_TOKEN}' } },
};

let offline: Awaited<ReturnType<typeof startScriptedModel>> | undefined;
if (!process.env.LLM_API_KEY && !process.env.LLM_BASE_URL) {
  offline = await startScriptedModel((req) => {
    const results = req.body.messages.filter((m) => m.role === 'tool');
    if (results.length === 0) return { toolCalls: [{ name: 'mcp__everything__get-sum', arguments: { a: 20, b: 22 } }] };
    return { content: `The MCP server says: ${results[results.length - 1]?.content}` };
  });
  process.env.LLM_BASE_URL = offline.baseUrl;
  process.env.LLM_MODEL = 'offline-scripted-example';
  console.log('(offline scripted model: set LLM_MODEL and LLM_API_KEY for a real one)');
}

const worker = await createWorker();
const workerDone = worker.run();
const client = await connectClient();

const agent = new Agent({
  llm: new LLM({ usageId: 'agent', ...(process.env.LLM_MODEL ? { model: process.env.LLM_MODEL } : {}) }),
  tools: [TerminalTool],
});
const workspace = await mkdtemp(path.join(tmpdir(), 'faheem-mcp-'));
const conversation = await Conversation.create(client, { agent, workspace, mcpServers });
await conversation.sendMessage('Use the MCP server to add 20 and 22.');
const final = await conversation.run();

for (const e of await conversation.events()) {
  if (e.kind === 'error') console.log(`error: ${e.message}`);
  if (e.kind === 'action') console.log(`action: ${e.tool} ${JSON.stringify(e.arguments)}`);
  if (e.kind === 'observation') console.log(`observation: ${e.content}`);
  if (e.kind === 'message' && e.source === 'agent') console.log(`agent: ${e.text}`);
}
console.log(`status: ${final.status}`);

await conversation.close(); // also stops its MCP servers on the host
await client.connection.close();
worker.shutdown();
await workerDone;
await offline?.close();
