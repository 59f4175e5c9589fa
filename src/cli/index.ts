// The `faheem` command line. Talks to Temporal only (never to a worker), so it works from any machine.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { Command, InvalidArgumentError, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pc from 'picocolors';
import { Agent, Conversation, ConversationNotFoundError, LLM, MessageText } from '../client.js';
import { connectClient } from '../connection.js';
import { parseMcpConfigFile } from '../mcp/config.js';
import { isTool, type AnyTool } from '../tools/define.js';
import { startDevServer } from '../server/dev-server.js';
import { findTemporalCli } from '../server/temporal-cli.js';
import { CONVERSATION_STATUSES, DEFAULTS, type ConfirmationPolicy, type ConversationState } from '../types.js';
import { createWorker } from '../worker.js';
import { ConversationStatusKey } from '../workflows/messages.js';
import { formatEvent, formatState, stateJson, colorStatus } from './format.js';

class UserError extends Error {}

const UPDATE_TIMEOUT_MS = 30_000;

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

async function withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient();
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}

async function attach(client: Client, id: string): Promise<Conversation> {
  return Conversation.attach(client, id);
}

/**
 * Updates need a worker to answer; say so instead of hanging when none is running. An update the
 * workflow's validator refused says why; that becomes a user error.
 */
async function answered<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new UserError(`no worker answered within ${UPDATE_TIMEOUT_MS / 1000} s; is \`faheem worker\` running against this server?`)),
      UPDATE_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } catch (err) {
    const e = err as Error & { cause?: Error };
    if (e.name === 'WorkflowUpdateFailedError') throw new UserError(e.cause?.message ?? e.message);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Attaches to a conversation that is still open (its workflow running), for a command that changes it. */
async function withOpenConversation(id: string, verb: string, fn: (conversation: Conversation) => Promise<void>): Promise<void> {
  await withClient(async (client) => {
    const conversation = await attach(client, id);
    if (await conversation.isClosed()) throw new UserError(`cannot ${verb}: conversation ${conversation.id} is closed`);
    await fn(conversation);
  });
}

const stopped = (s: ConversationState) => s.status !== 'running';

async function followEvents(conversation: Conversation, json: boolean, fromIndex = 0): Promise<ConversationState> {
  for await (const e of conversation.follow({ fromIndex, until: stopped })) {
    console.log(json ? JSON.stringify(e) : formatEvent(e));
  }
  return conversation.state();
}

const program = new Command('faheem')
  .description('Coding agents as durable Temporal workflows')
  .showHelpAfterError()
  .configureOutput({ outputError: (str, write) => write(pc.red(str)) });

program
  .command('server')
  .description('run the embedded Temporal dev server (SQLite file, Web UI, search attributes registered)')
  .option('--port <port>', 'gRPC port', positiveInt, 7233)
  .option('--ui-port <port>', 'Web UI port', positiveInt)
  .option('--db <file>', 'SQLite file that keeps conversations across restarts', '.faheem/temporal.db')
  .option('--ip <ip>', 'address to listen on', '127.0.0.1')
  .option('--headless', 'no Web UI')
  .action(async (o: { port: number; uiPort?: number; db: string; ip: string; headless?: boolean }) => {
    const server = await startDevServer({
      port: o.port,
      ...(o.uiPort ? { uiPort: o.uiPort } : {}),
      db: o.db,
      ip: o.ip,
      headless: o.headless ?? false,
      stdio: 'inherit',
      log: (l) => console.error(l),
    });
    console.error(`Temporal dev server on ${server.address}${server.uiUrl ? `, Web UI at ${server.uiUrl}` : ''}, data in ${path.resolve(o.db)}`);
    const stop = () => void server.stop().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    await server.process;
  });

program
  .command('temporal-cli')
  .description('print the path of the Temporal CLI, installing it first if needed')
  .action(async () => {
    console.log(await findTemporalCli((l) => console.error(l)));
  });

/** The tools a module exports (named exports, a default export, or arrays of them). */
async function loadTools(modules: string[]): Promise<AnyTool[]> {
  const tools: AnyTool[] = [];
  for (const m of modules) {
    const file = path.resolve(m);
    let exported: Record<string, unknown>;
    try {
      exported = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (err) {
      const hint = /\.[cm]?ts$/.test(file) ? ' (a TypeScript module needs a loader: compile it to .js, or run `node --import tsx` on faheem)' : '';
      throw new UserError(`--tools ${m}: could not load ${file}: ${(err as Error).message}${hint}`);
    }
    const found = Object.values(exported).flatMap((v) => (Array.isArray(v) ? v : [v])).filter(isTool);
    if (found.length === 0) throw new UserError(`--tools ${m}: the module exports no tools made with defineTool`);
    for (const t of found) if (!tools.includes(t)) tools.push(t);
  }
  return tools;
}

program
  .command('worker')
  .description('run conversation workflows, model calls and this host\'s tools (reads TEMPORAL_* and LLM_*)')
  .option('--tools <module...>', 'also run the tools (made with defineTool) that these JavaScript modules export')
  .action(async (o: { tools?: string[] }) => {
    const tools = await loadTools(o.tools ?? []);
    const worker = await createWorker({ tools });
    console.error(`faheem worker: task queues ${worker.taskQueue} and ${worker.toolTaskQueue}`);
    if (tools.length > 0) console.error(`faheem worker: your tools: ${tools.map((t) => t.name).join(', ')}`);
    await worker.run();
  });

program
  .command('start')
  .description('start a conversation with a first message and run it; prints its id')
  .argument('<message>', 'the first user message')
  .option('--id <id>', 'conversation id (default: generated)')
  .option('--workspace <dir>', 'working directory of the agent', process.cwd())
  .option('--model <model>', 'e.g. openai/gpt-4o (default: the worker\'s LLM_MODEL)')
  .addOption(new Option('--confirm <policy>', 'when to ask before an action').choices(['never', 'always', 'risky']).default('never'))
  .option('--max-iterations <n>', 'model calls per run before it stops with an error', positiveInt, DEFAULTS.maxIterations)
  .option('--budget <usd>', 'pause a run once it has cost this much (USD)', positiveNumber)
  .option('--confirm-timeout <seconds>', 'reject actions nobody approved within this time', positiveNumber)
  .option('--mcp-config <file>', 'MCP servers for the agent: a JSON file {"mcpServers": {name: {command, args, env} | {url, headers}}}')
  .option('--wait', 'return when the run stops')
  .option('--follow', 'print events as they happen until the run stops')
  .action(
    async (
      message: string,
      o: {
        id?: string;
        workspace: string;
        model?: string;
        confirm: ConfirmationPolicy;
        maxIterations: number;
        budget?: number;
        confirmTimeout?: number;
        mcpConfig?: string;
        wait?: boolean;
        follow?: boolean;
      },
    ) => {
      const checked = MessageText.safeParse(message);
      if (!checked.success) throw new UserError(`message not sent: ${checked.error.issues[0]?.message}`);
      const mcpServers = o.mcpConfig ? await readMcpConfig(o.mcpConfig) : undefined;
      await withClient(async (client) => {
        // The built-ins, and whatever tools the workspace host's worker was given (--tools).
        const agent = new Agent({
          llm: new LLM({ usageId: 'agent', ...(o.model ? { model: o.model } : {}) }),
          tools: ['terminal', 'file_editor', 'task_tracker'],
          hostTools: true,
        });
        const conversation = await Conversation.create(client, {
          agent,
          workspace: o.workspace,
          ...(o.id ? { id: o.id } : {}),
          firstMessage: message,
          run: true,
          maxIterations: o.maxIterations,
          confirmationPolicy: o.confirm,
          ...(o.budget !== undefined ? { maxBudgetPerRunUsd: o.budget } : {}),
          ...(o.confirmTimeout !== undefined ? { confirmationTimeoutMs: o.confirmTimeout * 1000 } : {}),
          ...(mcpServers ? { mcpServers } : {}),
        }).catch((err: Error) => {
          if (err.name === 'WorkflowExecutionAlreadyStartedError') throw new UserError(`a conversation with id "${o.id}" already exists`);
          throw err;
        });
        if (o.follow) {
          console.error(pc.dim(`conversation ${conversation.id}`));
          const s = await followEvents(conversation, false);
          console.error(`status: ${colorStatus(s.status)}`);
          return;
        }
        if (o.wait) await conversation.waitUntil(stopped, 200);
        console.log(conversation.id);
      });
    },
  );

async function readMcpConfig(file: string) {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`--mcp-config: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return parseMcpConfigFile(text, file);
  } catch (err) {
    throw new UserError(`--mcp-config: ${(err as Error).message}`);
  }
}

program
  .command('send')
  .description('add a user message; it waits for resume unless --run')
  .argument('<id>')
  .argument('<message>')
  .option('--run', 'also run the conversation')
  .action(async (id: string, message: string, o: { run?: boolean }) => {
    const checked = MessageText.safeParse(message);
    if (!checked.success) throw new UserError(`message not sent: ${checked.error.issues[0]?.message}`);
    await withOpenConversation(id, 'send a message', async (conversation) => {
      await answered(conversation.sendMessage(message));
      if (o.run) await answered(conversation.resume());
    });
  });

program
  .command('pause')
  .description('pause now: no model call or tool run starts after this')
  .argument('<id>')
  .option('--now', 'also interrupt the running command')
  .action(async (id: string, o: { now?: boolean }) => {
    await withOpenConversation(id, 'pause', async (conversation) => {
      await conversation.pause({ now: o.now ?? false });
    });
  });

program
  .command('resume')
  .description('resume a paused (or idle, errored, stuck) conversation')
  .argument('<id>')
  .option('--wait', 'return when the run stops')
  .action(async (id: string, o: { wait?: boolean }) => {
    await withOpenConversation(id, 'resume', async (conversation) => {
      const { runNumber } = await answered(conversation.resume());
      if (o.wait) await conversation.waitUntil((s) => s.runNumber > runNumber || stopped(s), 200);
    });
  });

program
  .command('status')
  .description('current state of a conversation')
  .argument('<id>')
  .option('--json', 'one JSON object')
  .action(async (id: string, o: { json?: boolean }) => {
    await withClient(async (client) => {
      const s = await answered((await attach(client, id)).state());
      console.log(o.json ? JSON.stringify(stateJson(s)) : formatState(s));
    });
  });

program
  .command('events')
  .description('the event log')
  .argument('<id>')
  .option('--json', 'one JSON object a line')
  .option('--follow', 'keep printing new events until the run stops')
  .option('--from <index>', 'start at this event index', (v) => Number(v), 0)
  .action(async (id: string, o: { json?: boolean; follow?: boolean; from: number }) => {
    await withClient(async (client) => {
      const conversation = await attach(client, id);
      if (o.follow) {
        await followEvents(conversation, o.json ?? false, o.from);
        return;
      }
      for (const e of await answered(conversation.events(o.from))) console.log(o.json ? JSON.stringify(e) : formatEvent(e));
    });
  });

program
  .command('list')
  .description('conversations, newest first (a visibility query: works on any Temporal cluster)')
  .addOption(new Option('--status <status>', 'only this status').choices([...CONVERSATION_STATUSES]))
  .option('--json', 'one JSON object a line')
  .option('--limit <n>', 'at most this many', positiveInt, 100)
  .action(async (o: { status?: string; json?: boolean; limit: number }) => {
    await withClient(async (client) => {
      let query = `WorkflowType = 'conversation'`;
      if (o.status) query += ` AND ConversationStatus = '${o.status}'`;
      let n = 0;
      for await (const wf of client.workflow.list({ query })) {
        if (n++ >= o.limit) break;
        const status = String(wf.typedSearchAttributes.get(ConversationStatusKey) ?? '?');
        const open = wf.status.name === 'RUNNING';
        const row = { id: wf.workflowId, status, closed: !open, startTime: wf.startTime.toISOString() };
        console.log(o.json ? JSON.stringify(row) : `${wf.workflowId}  ${colorStatus(status)}${open ? '' : pc.dim(' (closed)')}  ${pc.dim(row.startTime)}`);
      }
    });
  });

program
  .command('close')
  .description('end the conversation workflow cleanly (its history stays readable)')
  .argument('<id>')
  .action(async (id: string) => {
    await withOpenConversation(id, 'close', async (conversation) => {
      await conversation.close();
    });
  });

program
  .command('approve')
  .description('run the actions waiting for confirmation')
  .argument('<id>')
  .action(async (id: string) => {
    await withOpenConversation(id, 'approve', async (conversation) => {
      await answered(conversation.approve());
    });
  });

program
  .command('reject')
  .description('refuse the actions waiting for confirmation; the model sees the reason and goes on')
  .argument('<id>')
  .option('--reason <reason>', 'why (the model reads it)')
  .action(async (id: string, o: { reason?: string }) => {
    await withOpenConversation(id, 'reject', async (conversation) => {
      await answered(conversation.reject(o.reason ?? ''));
    });
  });

try {
  await program.parseAsync(process.argv);
  // Open handles (gRPC) can keep Node alive; the command is done.
  if (!['server', 'worker'].includes(process.argv[2] ?? '')) process.exit(0);
} catch (err) {
  console.error(pc.red(`faheem: ${describe(err)}`));
  process.exit(1);
}

function describe(err: unknown): string {
  if (err instanceof UserError || err instanceof ConversationNotFoundError) return err.message;
  if (err instanceof WorkflowNotFoundError) return `${err.message} (the conversation may be closed; see \`faheem list\`)`;
  const e = err as Error & { details?: string };
  const message = e?.message ?? String(err);
  if (/already completed/i.test(message)) return 'the conversation is closed';
  return message;
}
