// Watch a conversation live: the reply as the model writes it, a command's output as it comes, then
// each event as it lands. Run it against a running server (`npx faheem server`):
//   npx tsx examples/follow-live.ts
// With no model configured (LLM_API_KEY / LLM_BASE_URL unset) an offline scripted model stands in,
// streaming its answer slowly, a word at a time.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, Conversation, LLM, TerminalTool, connectClient, type ConversationEvent, type LiveDelta } from 'faheemcode';
import { startScriptedModel } from 'faheemcode/testing';
import { createWorker } from 'faheemcode/worker';

// 1. No model configured: a stand-in that runs a slow command, then answers word by word.
let offline: Awaited<ReturnType<typeof startScriptedModel>> | undefined;
if (!process.env.LLM_API_KEY && !process.env.LLM_BASE_URL) {
  offline = await startScriptedModel((req) =>
    req.body.messages.some((m) => m.role === 'tool')
      ? { content: 'The command counted to three, a line every fifth of a second.', wordByWord: true, chunkDelayMs: 60 }
      : { toolCalls: [{ name: 'terminal', arguments: { command: 'for i in 1 2 3; do echo "count $i"; sleep 0.2; done' } }] },
  );
  process.env.LLM_BASE_URL = offline.baseUrl;
  process.env.LLM_MODEL = 'offline-scripted-example';
  console.log('(offline scripted model: set LLM_MODEL and LLM_API_KEY for a real one)');
}

// 2. A worker (in production: its own process, `faheem worker`). It publishes the live lines.
const worker = await createWorker();
const workerDone = worker.run();

// 3. Start the conversation and follow it: events and live lines, until the run stops.
const client = await connectClient();
const agent = new Agent({
  llm: new LLM({ usageId: 'agent', ...(process.env.LLM_MODEL ? { model: process.env.LLM_MODEL } : {}) }),
  tools: [TerminalTool],
});
const workspace = await mkdtemp(path.join(tmpdir(), 'faheem-follow-live-'));
const conversation = await Conversation.create(client, { agent, workspace, firstMessage: 'Count to three, slowly.', run: true });

const counts: Record<string, number> = {};
const streamed = new Set<string>(); // the tool calls whose output was seen live
let lastOffset: number | undefined; // resume a dropped follow with { liveFrom: lastOffset + 1 }
const isLive = (item: ConversationEvent | LiveDelta): item is LiveDelta => 'live' in item;
for await (const item of conversation.follow({ live: true, until: (s) => s.status !== 'running' })) {
  if (isLive(item)) {
    counts[item.kind] = (counts[item.kind] ?? 0) + 1;
    lastOffset = item.offset;
    // model_delta: the reply's words; output_delta: the command's output; retry: drop the partial text.
    if (item.kind === 'model_delta' && !item.toolCallId) process.stdout.write(item.text);
    // (A busy publisher sends several lines in one delta: each gets its mark.)
    if (item.kind === 'output_delta') {
      if (item.toolCallId) streamed.add(item.toolCallId);
      process.stdout.write(item.text.replace(/^(?=.)/gm, '  | '));
    }
    continue;
  }
  if (item.kind === 'message' && item.source === 'agent') console.log(`\nevent ${item.index}: the reply, recorded`);
  else if (item.kind === 'action') console.log(`event ${item.index}: action ${item.tool}`);
  else if (item.kind === 'observation') {
    console.log(`event ${item.index}: its output, recorded`);
    // A command that ended before its lines reached us (a busy machine): its recorded output.
    if (!streamed.has(item.toolCallId)) console.log(item.content.replace(/^(?=.)/gm, '  = '));
  }
}
console.log(
  `live lines: ${Object.entries(counts)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')} (last offset ${lastOffset ?? '-'})`,
);
console.log(`status: ${(await conversation.state()).status}`);

await conversation.close();
await client.connection.close();
worker.shutdown();
await workerDone;
await offline?.close();
