// Your own tool, end to end: define it with a zod schema, give it to the worker, name it in the
// agent, and the model can call it. Run it against a running server (`npx faheem server`):
//   npx tsx examples/custom-tool.ts
// With no model configured (LLM_API_KEY / LLM_BASE_URL unset) an offline scripted model stands in.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { Agent, Conversation, FileEditorTool, LLM, TerminalTool, connectClient, defineTool } from 'faheemcode';
import { startScriptedModel } from 'faheemcode/testing';
import { createWorker } from 'faheemcode/worker';

// 1. The tool: what the model sees (name, description, JSON Schema from zod) and what runs.
export const addNumbers = defineTool({
  name: 'add_numbers',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  retry: 'repeat', // no side effects: after a crash it may simply run again
  execute: async ({ a, b }) => String(a + b),
});

// A tool with effects: a retry after a crash is reported, not run twice, and under the `risky`
// policy big refunds wait for the user's approval.
export const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refund an order',
  parameters: z.object({ order: z.string(), amount: z.number().positive() }),
  retry: 'report',
  needsApproval: ({ amount }) => amount > 100,
  execute: async ({ order, amount }, ctx) => {
    ctx.heartbeat(); // long calls can report progress; the worker also heartbeats for you
    return `Refunded $${amount.toFixed(2)} on order ${order}.`;
  },
});

// 2. No model configured: a scripted stand-in that calls the tool once, then answers.
let offline: Awaited<ReturnType<typeof startScriptedModel>> | undefined;
if (!process.env.LLM_API_KEY && !process.env.LLM_BASE_URL) {
  offline = await startScriptedModel((req) =>
    req.body.messages.some((m) => m.role === 'tool')
      ? { content: `2 + 3 = ${req.body.messages.filter((m) => m.role === 'tool').pop()?.content}` }
      : { toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 3 } }] },
  );
  process.env.LLM_BASE_URL = offline.baseUrl;
  process.env.LLM_MODEL = 'offline-scripted-example';
  console.log('(offline scripted model: set LLM_MODEL and LLM_API_KEY for a real one)');
}

// 3. The worker runs the built-ins and these tools (in production: its own process, `faheem worker --tools`).
const worker = await createWorker({ tools: [addNumbers, refundOrder] });
const workerDone = worker.run();

// 4. The client: the agent names its tools; the worker on the workspace's host runs them.
const client = await connectClient();
const agent = new Agent({
  llm: new LLM({ usageId: 'agent', ...(process.env.LLM_MODEL ? { model: process.env.LLM_MODEL } : {}) }),
  tools: [TerminalTool, FileEditorTool, addNumbers, refundOrder],
});
const workspace = await mkdtemp(path.join(tmpdir(), 'faheem-custom-tool-'));
const conversation = await Conversation.create(client, { agent, workspace, confirmationPolicy: 'risky' });
await conversation.sendMessage('What is 2 + 3? Use the add_numbers tool.');
const final = await conversation.run();

for (const e of await conversation.events()) {
  if (e.kind === 'action') console.log(`action: ${e.tool} ${JSON.stringify(e.arguments)}`);
  if (e.kind === 'observation') console.log(`observation: ${e.content}`);
  if (e.kind === 'message' && e.source === 'agent') console.log(`agent: ${e.text}`);
}
console.log(`status: ${final.status}`);

await conversation.close();
await client.connection.close();
worker.shutdown();
await workerDone;
await offline?.close();
