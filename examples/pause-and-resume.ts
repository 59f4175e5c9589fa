// The seed's ready-to-run example, durable: the same phases and prints, with every step a Temporal
// workflow step. Run it against a running server and worker:
//   npx tsx examples/pause-and-resume.ts
// (or `npm run demo`, which starts the embedded server and a worker around it).
import type { Client } from '@temporalio/client';
import { pathToFileURL } from 'node:url';
import { Agent, Conversation, FileEditorTool, LLM, TerminalTool } from '../src/client/client.js';
import { connectClient } from '../src/connection.js';
import { SCRIPTED_DEMO } from '../src/models/worker-model.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function pauseAndResume(client: Client, workspace = process.cwd()): Promise<Conversation> {
  // Configure LLM: the key stays on the worker (LLM_API_KEY there); only the model name travels.
  const model = process.env.LLM_MODEL ?? 'anthropic/claude-sonnet-4-6';
  const baseUrl = process.env.LLM_BASE_URL;
  const llm = new LLM({ usageId: 'agent', model, ...(baseUrl ? { baseUrl } : {}) });

  // Tools and agent
  const agent = new Agent({ llm, tools: [TerminalTool, FileEditorTool] });
  const conversation = await Conversation.create(client, { agent, workspace });

  console.log('='.repeat(60));
  console.log('Pause and Continue Example');
  console.log('='.repeat(60));
  console.log();

  // Phase 1: Start a long-running task
  console.log('Phase 1: Starting agent with a task...');
  const task =
    'Create a file called countdown.txt and write numbers from 100 down to 1, ' +
    'one number per line. After you finish, summarize what you did.';
  await conversation.sendMessage(task);
  console.log(`Sent: ${task}`);
  console.log(`Initial status: ${(await conversation.state()).executionStatus}`);
  console.log();

  // Start the agent "in the background": run() resolves when the run stops (the status is
  // `running` for every call after this one)
  const running = conversation.run();
  console.log(`Status after run(): ${(await conversation.state()).executionStatus}`);

  // Let the agent work for a few seconds
  console.log('Letting agent work for 2 seconds...');
  await sleep(2000);

  // Phase 2: Pause the agent
  console.log();
  console.log('Phase 2: Pausing the agent...');
  await conversation.pause();

  // Wait for the run to stop (it stops when paused): run() resolves with the status and why
  const stopped = await running;
  console.log(`Agent status after pause: ${stopped.status}${stopped.reason ? ` (${stopped.reason})` : ''}`);
  console.log();

  // Phase 3: Send a new message while paused
  console.log('Phase 3: Sending a new message while agent is paused...');
  const change =
    'Actually, stop working on countdown.txt. Instead, create a file called ' + "hello.txt with just the text 'Hello, World!' in it.";
  await conversation.sendMessage(change);
  console.log(`Sent: ${change}`);
  console.log(`Messages waiting: ${(await conversation.state()).pendingMessages}`);
  console.log();

  // Phase 4: Resume the agent with run()
  console.log('Phase 4: Resuming agent with .run()...');
  console.log(`Status before resume: ${(await conversation.state()).executionStatus}`);
  const final = await conversation.run();
  console.log(`Final status: ${final.status}${final.reason ? ` (${final.reason})` : ''}`);

  // Report cost, in dollars
  const cost = (await conversation.metrics()).accumulatedCost;
  const free = model === SCRIPTED_DEMO ? ' (the offline model is free)' : '';
  console.log(`Cost: $${cost.toFixed(cost > 0 && cost < 0.01 ? 4 : 2)}${free}`);
  return conversation;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const client = await connectClient();
  await pauseAndResume(client);
  await client.connection.close();
}
