// The `faheem` command line. Talks to Temporal only (never to a worker), so it works from any machine.
import { checkOutputSchema } from '../models/structured-output.js';
import { LivePrinter } from './live-format.js';
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { Command, InvalidArgumentError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pc from 'picocolors';
import { Conversation, checkMessage } from '../client/client.js';
import { ConversationClosedError, FaheemError, NoWorkerError, ServerStartError, UsageError, WaitTimeoutError } from '../core/errors.js';
import { checkConversationId } from '../conversation/conversation-id.js';
import { connectClient, connectConfig } from '../connection.js';
import { codecSettings } from '../settings/codec.js';
import { connectionSettings } from '../settings/connection.js';
import { effectiveConfiguration, readSettings, setting } from '../environment.js';
import { parseMcpConfigFile } from '../mcp/config.js';
import { isTool, type AnyTool } from '../tools/define.js';
import { describeSandbox, parseSandbox } from '../sandbox/sandbox.js';
import { setUpSpawner } from '../sandbox/spawner.js';
import { describePauseChannel } from '../client/pause-channel.js';
import { DEFAULT_CODEC_PORT, DEFAULT_UI_ORIGINS, normalizeOrigin, startCodecServer, type CodecServer } from '../server/codec-server.js';
import { exposureWarning } from '../server/exposure.js';
import { encryptionCodec, parseEncryptionKeys } from '../security/codec.js';
import { findTemporalCli } from '../server/temporal-cli.js';
import {
  CONVERSATION_STATUSES,
  DEFAULTS,
  type ConfirmationPolicy,
  type ConversationState,
  type ConversationStatus,
} from '../core/types.js';
import { shutdownTracing } from '../telemetry/tracing.js';
import { ConversationStatusKey, TenantKey } from '../conversation/workflow/messages.js';
import { NEWEST_FIRST, isOrderRefused, listQueryText, newestFirst } from '../conversation/list-query.js';
import { shownTime } from '../core/text.js';
import { checkTenant } from '../client/tenants.js';
import { formatEvent, formatState, stateJson, colorStatus } from './format.js';
import { configurationLines } from './config-lines.js';
import { doctor } from './doctor.js';
import { scheduleCommand } from './schedule.js';
import { deployCommand } from './deploy.js';
import { parseHooksFile } from '../hooks/config.js';
import { timeTravelCommands } from './checkpoint-commands.js';
import { consoleCommand } from './console.js';
import { apiCommand, apiKeyCommand } from './api.js';
import { startConversation } from '../conversation/start-conversation.js';
import { acpCommand } from './acp.js';
import { workspaceCommand } from './workspace-commands.js';
import { poolQueueName } from '../pool/workflow/pool-rules.js';
import { flushCompileCache } from '../worker/compile-cache.js';
import { UPDATE_TIMEOUT_MS } from './presence-rules.js';
import { scheduleRunsQuery } from '../client/schedules.js';
import { withTimeout } from '../core/timeout.js';
import { faheemHome } from '../home.js';
import {
  EXIT,
  answeredLine,
  closedLine,
  lastPauseReason,
  outcomeOf,
  appliedPauseLine,
  pausedLine,
  queuedLine,
  resumedLine,
  type Outcome,
} from './outcome.js';
import { describeTemporalError, isUnanswered, watchWorker } from './waiting.js';
import { PICKUP_GRACE_MS, oldestUnstarted, waitingFor, waitingLine, type Waiting } from './waiting-note.js';
import {
  conversationQueues,
  conversationWorkerWarnings,
  formatLastKnown,
  printWarnings,
  queuePollers,
  startWorkspaceCheck,
  stateOrLastKnown,
  workerWarnings,
} from './presence.js';

/** An id argument, checked before anything connects: an invalid one is refused with the rule (exit 1). */
const conversationIdArg = (value: string) => checkConversationId(value);
const newConversationIdArg = (value: string) => checkConversationId(value, 'new');
const tenantArg = (value: string) => checkTenant(value);

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

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number, 0 or more');
  return n;
}

/**
 * The CLI's edge: this process's environment, read once into the settings every command passes
 * down (a bad value stops the command, naming the variable). `faheem worker` reads the worker's.
 */
const env = process.env;
const settings = readSettings(env, 'client');
// The areas the commands pass down, built once.
const connection = connectionSettings(settings);
const encryption = codecSettings(settings);
// The programs a command runs (git, to fork or pull a workspace) start through the spawn helper, as
// a worker's do; `faheem worker` sets it up again from the worker's environment.
setUpSpawner({ helper: setting(settings, 'FAHEEM_SPAWN_HELPER') !== '0', env });

async function withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(settings);
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
    await shutdownTracing(); // the command's spans leave before the process does
  }
}

async function attach(client: Client, id: string): Promise<Conversation> {
  return Conversation.attach(client, id);
}

/**
 * Updates need a worker to answer; say so (NoWorkerError) instead of hanging when none is running.
 * An update the workflow's validator refused is an InvalidRequestError from the SDK, with the reason.
 */
async function answered<T>(promise: Promise<T>): Promise<T> {
  return withTimeout(
    promise,
    UPDATE_TIMEOUT_MS,
    () => new NoWorkerError(`no worker answered within ${UPDATE_TIMEOUT_MS / 1000} s; is \`faheem worker\` running against this server?`),
  );
}

/** What a changing command knows of the conversation before it acts, without asking a worker. */
interface OpenConversation {
  /** The status it last recorded (its ConversationStatus search attribute); null before a worker ran it. */
  status: string | null;
  /** Whether a worker polls its task queue (asked in the background). */
  workerPolling: Promise<boolean>;
}

/** Attaches to a conversation that is still open (its workflow running), for a command that changes it. */
async function withOpenConversation(
  id: string,
  verb: string,
  fn: (conversation: Conversation, open: OpenConversation) => Promise<void>,
): Promise<void> {
  await withClient(async (client) => {
    const conversation = await attach(client, id);
    const d = await client.workflow.getHandle(conversation.id).describe();
    if (d.status.name !== 'RUNNING')
      throw new ConversationClosedError(conversation.id, `cannot ${verb}: conversation ${conversation.id} is closed`);
    const status = d.typedSearchAttributes.get(ConversationStatusKey);
    const workerPolling = queuePollers(client, d.taskQueue, 'workflow').then(
      (p) => p.polling,
      () => true, // cannot tell: say nothing of a missing worker
    );
    await fn(conversation, { status: status === undefined ? null : String(status), workerPolling });
  });
}

const stopped = (s: ConversationState) => s.status !== 'running';

/** What a following command prints, and until when it follows. */
interface FollowPlan {
  json: boolean;
  fromIndex?: number;
  indent?: string;
  live?: boolean;
  /** Stop once this holds (and every event is printed); default: until the conversation is closed. */
  until?: (s: ConversationState) => boolean;
  /** Give up after this many ms (`--timeout`). */
  timeoutMs?: number;
  /** Warnings (no worker) go here. */
  warn?: (line: string) => void;
}

/**
 * Prints events as they come, and (`live`) the reply as it streams and commands' output as it
 * comes (with `json`, as live lines beside the events); a sub-agent's progress follows, indented,
 * under its delegate call. With no worker it says so (within seconds) and goes on waiting: a query
 * nobody answered is asked again once a worker polls. Answers with the last state it saw.
 */
async function followEvents(conversation: Conversation, plan: FollowPlan): Promise<ConversationState> {
  const { json, indent = '', live = false } = plan;
  const until = plan.until ?? ((s: ConversationState) => s.closed);
  const children: Promise<unknown>[] = [];
  const printer = new LivePrinter();
  const watch = watchWorker(conversation.client, conversation.id, plan.warn ?? printWarning, (d) => explainWait(conversation, d));
  const abort = new AbortController();
  // A conversation whose workflow completed without a close (its idle timeout) ends the follow too.
  void watch.completed.then(() => setTimeout(() => abort.abort(), 2_000).unref());
  let next = plan.fromIndex ?? 0;
  let liveFrom: number | undefined;
  const follow = async () => {
    for (;;) {
      try {
        for await (const e of conversation.follow({
          fromIndex: next,
          until,
          live,
          signal: abort.signal,
          ...(liveFrom !== undefined ? { liveFrom } : {}),
        })) {
          if ('live' in e) {
            liveFrom = e.offset + 1;
            if (json) console.log(JSON.stringify(e));
            else process.stdout.write(printer.line(e));
            continue;
          }
          next = e.index + 1;
          if (!json) process.stdout.write(printer.beforeEvent());
          console.log(json ? JSON.stringify(e) : indentLines(formatEvent(e), indent));
          if (!json && e.kind === 'child' && e.status === 'started') {
            children.push(
              Conversation.attach(conversation.client, e.childId)
                .then((child) => followEvents(child, { json: false, indent: `${indent}    `, until: stopped }))
                .catch((err: Error) => console.log(indentLines(pc.dim(`(cannot follow ${e.childId}: ${err.message})`), `${indent}    `))),
            );
          }
        }
        if (!json) process.stdout.write(printer.beforeEvent());
        return;
      } catch (err) {
        // Nobody answered (no worker, or it went away): the watch has said so; ask again once one polls.
        if (!isUnanswered(err) || abort.signal.aborted) throw err;
        await watch.present();
        // A worker polls again but the query failed anyway (a busy server): not in a tight loop.
        await delay(500);
      }
    }
  };
  try {
    await (plan.timeoutMs !== undefined
      ? withTimeout(follow(), plan.timeoutMs, () => timedOut(conversation.id, plan.timeoutMs!))
      : follow());
    await Promise.all(children);
  } finally {
    watch.stop();
    abort.abort();
  }
  return stateOf(conversation, plan.warn);
}

/** The state, asked again once a worker polls when nobody answered (a waiting command goes on waiting). */
async function stateOf(conversation: Conversation, warn?: (line: string) => void): Promise<ConversationState> {
  try {
    return await conversation.state();
  } catch (err) {
    if (!isUnanswered(err)) throw err;
    const watch = watchWorker(conversation.client, conversation.id, warn ?? printWarning);
    try {
      await watch.present();
      return await conversation.state();
    } finally {
      watch.stop();
    }
  }
}

/** Why a waiting command gave up: its `--timeout` ran out. */
class GaveUpError extends WaitTimeoutError {}
function timedOut(id: string, ms: number): GaveUpError {
  return new GaveUpError(id, `gave up after ${ms / 1000} s (--timeout): ${id} had not stopped; it goes on without this command`);
}

/**
 * Waits for the run (after run `afterRun`) to stop, warning when no worker is there, and answers
 * how it ended. Gives up after `timeoutMs` (a GaveUpError).
 */
async function waitForOutcome(conversation: Conversation, options: { afterRun?: number; timeoutMs?: number }): Promise<Outcome> {
  const watch = watchWorker(conversation.client, conversation.id, printWarning, (d) => explainWait(conversation, d));
  const wait = async () => {
    for (;;) {
      try {
        return await conversation.waitUntilStopped(options.afterRun !== undefined ? { afterRun: options.afterRun } : {});
      } catch (err) {
        if (!isUnanswered(err)) throw err;
        await watch.present();
      }
    }
  };
  try {
    const s = await (options.timeoutMs !== undefined
      ? withTimeout(wait(), options.timeoutMs, () => timedOut(conversation.id, options.timeoutMs!))
      : wait());
    return await outcomeWithReason(conversation, s);
  } finally {
    watch.stop();
  }
}

/** The outcome of a stopped run; a pause's reason is read from the last events. */
async function outcomeWithReason(conversation: Conversation, s: ConversationState): Promise<Outcome> {
  const reason = s.status === 'paused' ? lastPauseReason(await conversation.events(Math.max(0, s.events - 50)).catch(() => [])) : undefined;
  return outcomeOf(s, reason);
}

/** Ends the command with the outcome's exit code; its line goes to stderr (under `--quiet`, only when it failed). */
function exitWith(outcome: Outcome, quiet = false): void {
  // A structured answer is the command's result: stdout, as JSON on one line.
  if (outcome.output !== undefined) console.log(JSON.stringify(outcome.output));
  if (!quiet || outcome.failed) console.error(outcome.failed ? pc.red(`faheem: ${outcome.line}`) : pc.dim(outcome.line));
  process.exitCode = outcome.code;
}

/** A line for the user on stdout, unless `--quiet`. */
function say(line: string, quiet: boolean | undefined): void {
  if (!quiet) console.log(line);
}

const printWarning = (line: string) => printWarnings([line]);
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function indentLines(text: string, indent: string): string {
  return indent
    ? text
        .split('\n')
        .map((l) => indent + l)
        .join('\n')
    : text;
}

/** This package's version (package.json, two folders up from src/cli and dist/cli alike). */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const program = new Command('faheem')
  .description('Coding agents as durable Temporal workflows')
  .version(packageVersion(), '-V, --version', 'print the package version')
  .configureOutput({ outputError: (str, write) => write(pc.red(str)) })
  // A malformed FAHEEM_ENCRYPTION_KEY(S) stops every command at once, naming the variable.
  .hook('preAction', () => void parseEncryptionKeys(codecSettings(settings)));

program
  .command('server')
  .description('run the embedded Temporal dev server (SQLite file, Web UI, search attributes registered)')
  .option('--port <port>', 'gRPC port', positiveInt, 7233)
  .option('--ui-port <port>', 'Web UI port', positiveInt)
  .option('--db <file>', 'SQLite file that keeps conversations across restarts (default: temporal.db under FAHEEM_HOME, ~/.faheem)')
  .option('--ip <ip>', 'address to listen on', '127.0.0.1')
  .option('--headless', 'no Web UI')
  .option(
    '--codec-port <port>',
    'with an encryption key: port of the codec server the Web UI decodes with',
    positiveInt,
    DEFAULT_CODEC_PORT,
  )
  .action(async (o: { port: number; uiPort?: number; db?: string; ip: string; headless?: boolean; codecPort: number }) => {
    // Out of any project by default: a workspace is often the folder the server starts in.
    const db = o.db ?? path.join(faheemHome(settings), 'temporal.db');
    const exposed = exposureWarning('server', o.ip, '--ip');
    if (exposed) console.error(pc.yellow(`faheem server: ${exposed}`));
    // With a key, the Web UI decodes through an in-process codec server (the browser calls it directly),
    // with a fresh token in the endpoint the Web UI is given.
    const codec = o.headless ? undefined : encryptionCodec(codecSettings(settings));
    let codecServer: CodecServer | undefined;
    if (codec) {
      const uiPort = o.uiPort ?? o.port + 1000;
      const uiHost = o.ip === '0.0.0.0' ? 'localhost' : o.ip;
      const uiOrigins = [...new Set([`http://${uiHost}:${uiPort}`, `http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`])];
      codecServer = await startCodecServer({ codec, port: o.codecPort, uiOrigins });
    }
    const { startDevServer } = await import('../server/dev-server.js');
    const { devServerFailure, devServerLogFile, logTail } = await import('../server/dev-server-log.js');
    // The dev server's own output (WARN lines while it runs, a burst of them on Ctrl-C) goes to a
    // log file; this command prints its own lines.
    const logFile = devServerLogFile(faheemHome(settings), o.port);
    let server: Awaited<ReturnType<typeof startDevServer>>;
    try {
      server = await startDevServer({
        temporalCli: connection.temporalCli,
        port: o.port,
        ...(o.uiPort ? { uiPort: o.uiPort } : {}),
        db,
        accessHome: faheemHome(settings),
        ip: o.ip,
        headless: o.headless ?? false,
        logFile,
        log: (l) => console.error(l),
        ...(codecServer ? { codecEndpoint: codecServer.uiEndpoint } : {}),
      });
    } catch (err) {
      await codecServer?.close();
      // Nothing to start: the one the user wants is there already.
      if (err instanceof ServerStartError && err.alreadyServing) {
        console.error(`faheem server: ${err.message}`);
        process.exit(0);
      }
      throw err;
    }
    console.error(
      `Temporal dev server on ${server.address}${server.httpUrl ? ` (HTTP API ${server.httpUrl}, for the Host name in ${server.accessFile})` : ''}${server.uiUrl ? `, Web UI at ${server.uiUrl}` : ''}, data in ${path.resolve(db)}, its log in ${logFile}`,
    );
    if (codec && codecServer) {
      console.error(
        `Encryption: payloads encrypted with key ${codec.keyId}; the Web UI decodes them through the codec server at ${codecServer.url} ` +
          '(its token is in the endpoint the Web UI was given; `faheem codec-server` serves other clients)',
      );
    }
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void Promise.all([server.stop(), codecServer?.close()]).then(() => {
        console.error('faheem server: stopped');
        process.exit(0);
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    const ended = await server.process;
    if (stopping) return;
    // It ended by itself: say so, and why when its log tells.
    await codecServer?.close();
    const why = devServerFailure(logTail(logFile));
    throw new ServerStartError(
      `the Temporal dev server stopped (exit code ${ended.exitCode ?? ended.signal ?? '?'})${why ? `: ${why}` : ''}; its log: ${logFile}`,
    );
  });

program
  .command('codec-server')
  .description(
    "serve Temporal's codec endpoints (/encode, /decode) with the encryption key, for the Web UI and `temporal --codec-endpoint`; every request needs its token",
  )
  .option('--port <port>', 'port to listen on', positiveInt, DEFAULT_CODEC_PORT)
  .option('--ip <ip>', 'address to listen on', '127.0.0.1')
  .option(
    '--token-file <file>',
    'read the token every request needs from this file (or FAHEEM_CODEC_TOKEN; default: a new one, printed once)',
  )
  .option('--token <token>', 'the token on the command line (visible in `ps`: prefer --token-file or FAHEEM_CODEC_TOKEN)')
  .option(
    '--strict',
    '/decode refuses payloads that are not encrypted (default: passes them through, for older histories and search attributes)',
  )
  .option('--ui-origin <origin...>', `Web UI origins allowed to call it from the browser (default ${DEFAULT_UI_ORIGINS.join(', ')})`)
  .action(async (o: { port: number; ip: string; token?: string; tokenFile?: string; strict?: boolean; uiOrigin?: string[] }) => {
    const codec = encryptionCodec(codecSettings(settings));
    if (!codec)
      throw new UsageError('no encryption key: set FAHEEM_ENCRYPTION_KEY (base64 of 32 bytes) or FAHEEM_ENCRYPTION_KEYS=id1:key1,id2:key2');
    let uiOrigins: string[] | undefined;
    try {
      uiOrigins = o.uiOrigin
        ?.flatMap((v) => v.split(','))
        .filter((v) => v.trim() !== '')
        .map(normalizeOrigin);
    } catch (err) {
      throw new UsageError(`--ui-origin: ${(err as Error).message}`);
    }
    const given = await codecToken(o);
    const exposed = exposureWarning('codec-server', o.ip, '--ip');
    if (exposed) console.error(pc.yellow(`faheem codec-server: ${exposed}`));
    const server = await startCodecServer({
      codec,
      port: o.port,
      host: o.ip,
      ...(given ? { token: given } : {}),
      strict: o.strict ?? false,
      ...(uiOrigins ? { uiOrigins } : {}),
    }).catch((err: unknown) => {
      if (err instanceof FaheemError && err.code === 'invalid_request') throw new UsageError(err.message);
      throw err;
    });
    console.error(
      `faheem codec server at ${server.url} (POST /encode, /decode; key ${codec.keyId}${codec.keys.length > 1 ? `, decrypts ${codec.keys.map((k) => k.id).join(', ')}` : ''}; ` +
        `browser origins ${(uiOrigins ?? DEFAULT_UI_ORIGINS).join(', ')}; bearer token required` +
        `${o.strict ? '; strict: /decode refuses payloads that are not encrypted' : ''})`,
    );
    // A token it made is shown once, here; one the user gave stays out of the output.
    const shown = given ? '<token>' : server.token;
    if (!given) console.error(`Token (new, shown once; give your own with --token-file or FAHEEM_CODEC_TOKEN): ${server.token}`);
    console.error(
      `Web UI: temporal server start-dev --ui-codec-endpoint ${server.url}/${shown}, or that URL under "Data Encoder" in the UI`,
    );
    console.error(
      `temporal CLI: --codec-endpoint ${server.url} --codec-auth "Bearer ${shown}" (or TEMPORAL_CODEC_ENDPOINT, TEMPORAL_CODEC_AUTH)`,
    );
    const stop = () => void server.close().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

/**
 * The codec server's token: --token-file, else FAHEEM_CODEC_TOKEN, else --token (with a warning:
 * argv shows in `ps`); undefined: none given, the server makes one.
 */
async function codecToken(o: { token?: string; tokenFile?: string }): Promise<string | undefined> {
  if (o.tokenFile !== undefined) {
    let text: string;
    try {
      text = await readFile(o.tokenFile, 'utf8');
    } catch (err) {
      throw new UsageError(`--token-file ${o.tokenFile}: ${(err as Error).message}`);
    }
    const token = text.trim();
    if (!token) throw new UsageError(`--token-file ${o.tokenFile} is empty: write the token into it (e.g. openssl rand -hex 32)`);
    return token;
  }
  const fromEnv = encryption.codecToken;
  if (fromEnv) return fromEnv;
  if (o.token !== undefined) {
    console.error(
      pc.yellow('faheem codec-server: --token shows in `ps` to every user of this machine; prefer --token-file FILE or FAHEEM_CODEC_TOKEN'),
    );
    return o.token;
  }
  return undefined;
}

program
  .command('temporal-cli')
  .description('print the path of the Temporal CLI, installing it first if needed')
  .action(async () => {
    console.log(await findTemporalCli(connection.temporalCli, (l) => console.error(l)));
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
      const hint = /\.[cm]?ts$/.test(file)
        ? ' (a TypeScript module needs a loader: compile it to .js, or run `node --import tsx` on faheem)'
        : '';
      throw new UsageError(`--tools ${m}: could not load ${file}: ${(err as Error).message}${hint}`);
    }
    const found = Object.values(exported)
      .flatMap((v) => (Array.isArray(v) ? v : [v]))
      .filter(isTool);
    if (found.length === 0) throw new UsageError(`--tools ${m}: the module exports no tools made with defineTool`);
    for (const t of found) if (!tools.includes(t)) tools.push(t);
  }
  return tools;
}

program
  .command('worker')
  .description("run conversation workflows, model calls and this host's tools (reads TEMPORAL_* and LLM_*)")
  .option('--tools <module...>', 'also run the tools (made with defineTool) that these JavaScript modules export')
  .addOption(
    new Option(
      '--sandbox <kind>',
      'bwrap: run commands under bubblewrap (workspace writable, rest read-only, home hidden); none: unsandboxed (default: FAHEEM_SANDBOX, else bwrap where it works)',
    ).choices(['bwrap', 'none']),
  )
  .addOption(
    new Option(
      '--sandbox-network <mode>',
      "internet: public addresses only, never this host's or private ones; none: no network; host: the worker's network, loopback services included (unsafe) (default: FAHEEM_SANDBOX_NETWORK, else internet)",
    ).choices(['internet', 'none', 'host']),
  )
  .option('--deployment <name>', 'run under Worker Versioning in this Worker Deployment (default: FAHEEM_DEPLOYMENT); needs --build-id')
  .option('--build-id <id>', "this build's id in the deployment (default: FAHEEM_BUILD_ID)")
  .option(
    '--metrics-port <port>',
    'serve Prometheus metrics at http://127.0.0.1:<port>/metrics (default: FAHEEM_METRICS_PORT)',
    positiveInt,
  )
  .option('--metrics-host <ip>', 'the address metrics listen on (default: FAHEEM_METRICS_HOST, else 127.0.0.1)')
  .option('--pool <name>', 'also host workspaces of this pool (default: FAHEEM_POOL); needs FAHEEM_OBJECT_STORE')
  .option('--model <model>', 'the model of conversations that name none (default: LLM_MODEL); scripted/demo: the offline scripted model')
  .option(
    '--max-model-calls <n>',
    'at most this many model calls at once on this worker; waiting calls are shared fairly between tenants (default: FAHEEM_MAX_MODEL_CALLS)',
    positiveInt,
  )
  .action(
    async (o: {
      pool?: string;
      maxModelCalls?: number;
      model?: string;
      tools?: string[];
      sandbox?: string;
      sandboxNetwork?: string;
      deployment?: string;
      buildId?: string;
      metricsPort?: number;
      metricsHost?: string;
    }) => {
      const sandbox = parseSandbox(o.sandbox ?? settings.FAHEEM_SANDBOX, o.sandboxNetwork ?? settings.FAHEEM_SANDBOX_NETWORK);
      const tools = await loadTools(o.tools ?? []);
      // The flags win over the variables; readWorkerConfig checks them (FAHEEM_DEPLOYMENT and
      // FAHEEM_BUILD_ID: both or neither).
      const flags = {
        FAHEEM_DEPLOYMENT: o.deployment,
        FAHEEM_BUILD_ID: o.buildId,
        FAHEEM_METRICS_PORT: o.metricsPort === undefined ? undefined : String(o.metricsPort),
        FAHEEM_METRICS_HOST: o.metricsHost,
        FAHEEM_POOL: o.pool,
        FAHEEM_MAX_MODEL_CALLS: o.maxModelCalls === undefined ? undefined : String(o.maxModelCalls),
        LLM_MODEL: o.model,
      };
      const workerEnv = { ...env };
      for (const [name, value] of Object.entries(flags)) if (value !== undefined) workerEnv[name] = value;
      // Loaded here: the worker (the Temporal worker's native bridge, the model SDKs) is most of the
      // CLI's start-up time, and every other command does without it.
      const { createWorker } = await import('../worker.js');
      const worker = await createWorker({ tools, sandbox, env: workerEnv });
      if (worker.deployment)
        console.error(`faheem worker: version ${worker.deployment.buildId} of deployment ${worker.deployment.deploymentName}`);
      if (worker.metricsPort !== undefined) {
        const host = worker.metricsHost.includes(':') ? `[${worker.metricsHost}]` : worker.metricsHost;
        console.error(`faheem worker: metrics at http://${host}:${worker.metricsPort}/metrics`);
        const exposed = exposureWarning('metrics', worker.metricsHost, '--metrics-host');
        if (exposed) console.error(pc.yellow(`faheem worker: ${exposed}`));
      }
      // Unsandboxed by fallback, the warning createWorker printed is the line.
      if (worker.sandbox || !worker.sandboxWarning) console.error(`faheem worker: ${describeSandbox(worker.sandbox)}`);
      console.error(`faheem worker: ${describePauseChannel(worker.pauseChannel)}`);
      if (worker.pool)
        console.error(`faheem worker: host ${worker.pool.hostId} of pool ${worker.pool.pool}, workspaces in ${worker.pool.workspacesDir}`);
      console.error(
        `faheem worker: task queues ${worker.taskQueue}${worker.pool ? `, ${poolQueueName(worker.taskQueue, worker.pool.pool)} (claims)` : ''} and ${worker.toolTaskQueue}`,
      );
      if (worker.maxModelCalls !== undefined)
        console.error(`faheem worker: at most ${worker.maxModelCalls} model call${worker.maxModelCalls === 1 ? '' : 's'} at once`);
      if (tools.length > 0) console.error(`faheem worker: your tools: ${tools.map((t) => t.name).join(', ')}`);
      flushCompileCache(); // a worker is often stopped by a kill: keep what its start compiled
      await worker.run();
    },
  );

program
  .command('start')
  .description('start a conversation with a first message and run it; prints its id')
  .argument('<message>', 'the first user message')
  .option('--image <file>', 'send this image (PNG, JPEG, GIF or WebP, at most 5 MB) with the message; repeatable', collectImage, [])
  .option('--id <id>', 'conversation id (default: generated)', newConversationIdArg)
  .option('--workspace <dir>', 'working directory of the agent', process.cwd())
  .option('--model <model>', "e.g. openai/gpt-4o (default: the worker's LLM_MODEL)")
  .option(
    '--fallback <model>',
    'a model to move to when the one before it is unavailable (429, 5xx, 529, unreachable); repeatable, tried in order',
    (value: string, previous: string[] = []) => [...previous, value],
  )
  .addOption(
    new Option('--reasoning-effort <effort>', "let the model reason first (default: the worker's LLM_REASONING_EFFORT)").choices([
      'low',
      'medium',
      'high',
    ]),
  )
  .addOption(new Option('--confirm <policy>', 'when to ask before an action').choices(['never', 'always', 'risky']).default('never'))
  .option('--max-iterations <n>', 'model calls per run before it stops with an error', positiveInt, DEFAULTS.maxIterations)
  .option('--budget <usd>', 'pause a run once it has cost this much (USD)', positiveNumber)
  .option('--confirm-timeout <seconds>', 'reject actions nobody approved within this time', positiveNumber)
  .option('--delegate', 'give the agent the delegate tool: sub-agents as child conversations')
  .option('--mcp-config <file>', 'MCP servers for the agent: a JSON file {"mcpServers": {name: {command, args, env} | {url, headers}}}')
  .option(
    '--hooks <file>',
    'hooks in Claude Code\'s format: a JSON file {"hooks": {"PreToolUse": [{"matcher", "hooks": [{"type": "command", "command"}]}], …}}',
  )
  .option('--no-checkpoints', 'no checkpoint of the workspace per step (no rewind or fork)')
  .option('--output-schema <file>', 'the final answer is JSON matching this JSON Schema (a file): checked, asked again, printed by --wait')
  .option('--pool <name>', 'the workspace belongs to this pool of hosts (workers with --pool), kept in FAHEEM_OBJECT_STORE')
  .option('--workspace-from <dir>', "with --pool: start from this folder's files (uploaded now; default: empty)")
  .option('--wait', 'return when the run stops; the exit code says how (0 finished, 1 error, 2 stuck, 3 paused, 4 waits for approval)')
  .option('--follow', 'print events as they happen until the run stops; exit code as --wait')
  .option('--timeout <seconds>', 'with --wait or --follow: give up after this long (exit 124)', positiveNumber)
  .option('-q, --quiet', 'with --wait or --follow: no line on stderr when the run finished')
  .action(
    async (
      message: string,
      o: {
        id?: string;
        workspace: string;
        model?: string;
        fallback?: string[];
        reasoningEffort?: 'low' | 'medium' | 'high';
        confirm: ConfirmationPolicy;
        maxIterations: number;
        budget?: number;
        confirmTimeout?: number;
        mcpConfig?: string;
        hooks?: string;
        checkpoints?: boolean;
        delegate?: boolean;
        outputSchema?: string;
        wait?: boolean;
        follow?: boolean;
        pool?: string;
        workspaceFrom?: string;
        timeout?: number;
        quiet?: boolean;
        image: string[];
      },
    ) => {
      checkMessage(message);
      if (o.workspaceFrom !== undefined && o.pool === undefined) throw new UsageError('--workspace-from goes with --pool');
      // A pooled workspace is on whichever host of the pool holds it: nothing to check here.
      const workspace = o.pool === undefined ? await startWorkspaceCheck(path.resolve(o.workspace), connection.toolTaskQueue) : {};
      if (workspace.error) throw new UsageError(workspace.error);
      if (workspace.warning) printWarnings([workspace.warning]);
      const mcpServers = o.mcpConfig ? await readMcpConfig(o.mcpConfig) : undefined;
      const hooks = o.hooks ? await readHooksFile(o.hooks) : undefined;
      const outputSchema = o.outputSchema ? await readOutputSchema(o.outputSchema) : undefined;
      await withClient(async (client) => {
        const toolQueue = o.pool === undefined ? connection.toolTaskQueue : poolQueueName(connection.taskQueue, o.pool);
        const warnings = workerWarnings(client, { taskQueue: connection.taskQueue, toolTaskQueue: toolQueue });
        const conversation = await startConversation(client, {
          message,
          ...(o.image.length ? { images: o.image } : {}),
          ...(o.pool === undefined ? { workspace: o.workspace } : { pool: o.pool }),
          ...(o.workspaceFrom !== undefined ? { workspaceFrom: o.workspaceFrom } : {}),
          ...(o.id ? { id: o.id } : {}),
          ...(o.model ? { model: o.model } : {}),
          ...(o.fallback?.length ? { fallbacks: o.fallback } : {}),
          ...(o.reasoningEffort ? { reasoningEffort: o.reasoningEffort } : {}),
          confirm: o.confirm,
          maxIterations: o.maxIterations,
          ...(o.budget !== undefined ? { budget: o.budget } : {}),
          ...(o.confirmTimeout !== undefined ? { confirmTimeoutSeconds: o.confirmTimeout } : {}),
          ...(mcpServers ? { mcpServers } : {}),
          ...(hooks ? { hooks } : {}),
          ...(o.checkpoints === false ? { checkpoints: false } : {}),
          ...(o.delegate ? { delegate: true } : {}),
          ...(outputSchema ? { outputSchema } : {}),
        });
        // stderr: stdout stays the id alone. Waiting, the watch says it (and again if a worker goes).
        if (!o.wait && !o.follow) printWarnings(await warnings);
        const timeoutMs = o.timeout !== undefined ? o.timeout * 1000 : undefined;
        if (o.follow) {
          console.error(pc.dim(`conversation ${conversation.id}`));
          const s = await followEvents(conversation, { json: false, live: true, until: stopped, ...(timeoutMs ? { timeoutMs } : {}) });
          exitWith(await outcomeWithReason(conversation, s), o.quiet);
          return;
        }
        console.log(conversation.id);
        if (o.wait) exitWith(await waitForOutcome(conversation, { ...(timeoutMs ? { timeoutMs } : {}) }), o.quiet);
      });
    },
  );

/** `--image FILE`, repeatable: the files in order. */
function collectImage(file: string, files: string[]): string[] {
  return [...files, file];
}

async function readHooksFile(file: string) {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--hooks: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return parseHooksFile(text);
  } catch (err) {
    throw new UsageError(`--hooks ${file}: ${(err as Error).message}`);
  }
}

async function readOutputSchema(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--output-schema: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return checkOutputSchema(JSON.parse(text));
  } catch (err) {
    throw new UsageError(`--output-schema ${file}: ${(err as Error).message}`);
  }
}

async function readMcpConfig(file: string) {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--mcp-config: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return parseMcpConfigFile(text, file);
  } catch (err) {
    throw new UsageError(`--mcp-config: ${(err as Error).message}`);
  }
}

program
  .command('send')
  .description('add a user message; it waits for resume unless --run')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .argument('<message>')
  .option('--image <file>', 'send this image (PNG, JPEG, GIF or WebP, at most 5 MB) with the message; repeatable', collectImage, [])
  .option('--run', 'also run the conversation')
  .option('-q, --quiet', 'print nothing on success')
  .action(async (id: string, message: string, o: { run?: boolean; quiet?: boolean; image: string[] }) => {
    checkMessage(message);
    await withOpenConversation(id, 'send a message', async (conversation) => {
      const warned = o.run ? conversationWorkerWarnings(conversation.client, conversation.id).then(printWarnings) : undefined;
      await answered(conversation.sendMessage(o.image.length ? { text: message, images: o.image } : message));
      if (o.run) await answered(conversation.resume());
      await warned;
      const s = await answered(conversation.state());
      say(queuedLine(conversation.id, s.status, s.pendingMessages, o.run ?? false), o.quiet);
    });
  });

program
  .command('pause')
  .description('pause now: no model call or tool run starts after this')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .option('--now', 'also interrupt the running command')
  .option('--wait', 'return once the conversation has applied the pause (a worker must answer, within 30 s)')
  .option('-q, --quiet', 'print nothing on success')
  .action(async (id: string, o: { now?: boolean; wait?: boolean; quiet?: boolean }) => {
    await withOpenConversation(id, 'pause', async (conversation, open) => {
      if (o.wait) {
        const { status } = await answered(conversation.pause({ now: o.now ?? false, wait: true }));
        say(appliedPauseLine(conversation.id, open.status, status, o.now ?? false), o.quiet);
        return;
      }
      await conversation.pause({ now: o.now ?? false });
      say(pausedLine(conversation.id, open.status, o.now ?? false, await open.workerPolling), o.quiet);
    });
  });

program
  .command('resume')
  .description('resume a paused (or idle, errored, stuck) conversation')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .option('--wait', 'return when the run stops; the exit code says how (0 finished, 1 error, 2 stuck, 3 paused, 4 waits for approval)')
  .option('--timeout <seconds>', 'with --wait: give up after this long (exit 124)', positiveNumber)
  .option('-q, --quiet', 'print nothing on success')
  .action(async (id: string, o: { wait?: boolean; timeout?: number; quiet?: boolean }) => {
    await withOpenConversation(id, 'resume', async (conversation, open) => {
      const timeoutMs = o.timeout !== undefined ? o.timeout * 1000 : undefined;
      let answer: { runNumber: number; status: string };
      if (o.wait) {
        // Waiting anyway: the run update waits for a worker too, with the warning the watch prints.
        const watch = watchWorker(conversation.client, conversation.id, printWarning);
        try {
          const update = conversation.resume();
          answer = await (timeoutMs !== undefined ? withTimeout(update, timeoutMs, () => timedOut(conversation.id, timeoutMs)) : update);
        } finally {
          watch.stop();
        }
      } else {
        const warned = conversationWorkerWarnings(conversation.client, conversation.id).then(printWarnings);
        answer = await answered(conversation.resume());
        await warned;
      }
      say(resumedLine(conversation.id, answer, open.status), o.quiet);
      if (!o.wait) return;
      exitWith(await waitForOutcome(conversation, { afterRun: answer.runNumber, ...(timeoutMs ? { timeoutMs } : {}) }), o.quiet);
    });
  });

program
  .command('status')
  .description('current state of a conversation')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .option('--json', 'one JSON object')
  .action(async (id: string, o: { json?: boolean }) => {
    await withClient(async (client) => {
      // With no worker to answer the query, the status it last recorded (marked as such), at once.
      const answer = await stateOrLastKnown(client, await attach(client, id), answered);
      if ('lastKnown' in answer) {
        console.log(o.json ? JSON.stringify(answer.lastKnown) : formatLastKnown(answer.lastKnown));
        return;
      }
      const s = answer.state;
      const waiting = await waitingNow(client, s);
      console.log(
        o.json
          ? JSON.stringify({ ...stateJson(s), waiting })
          : `${formatState(s)}${waiting ? `\n  ${pc.yellow(waitingLine(waiting, Date.now()))}` : ''}`,
      );
    });
  });

/**
 * What a running conversation waits for (its oldest call no worker has started, on a queue nobody
 * polls), or null; a fact that cannot be read is left out (this only explains).
 */
async function waitingNow(client: Client, s: ConversationState, described?: WorkflowExecutionDescription): Promise<Waiting | null> {
  if (s.status !== 'running' || s.closed) return null;
  try {
    const { raw } = described ?? (await client.workflow.getHandle(s.id).describe());
    const queues = await conversationQueues(client, s.id).catch(() => undefined);
    const call = oldestUnstarted(raw.pendingActivities ?? [], queues?.toolTaskQueue);
    if (!call) return null;
    const { polling } = await queuePollers(client, call.taskQueue, 'activity');
    return waitingFor({ state: s, call, polled: polling, toolTaskQueue: queues?.toolTaskQueue, now: Date.now() });
  } catch {
    return null;
  }
}

/**
 * For a following command: what a pooled conversation waits for (its host, or a host to take it),
 * once one of its calls has waited past the pick-up grace (the state is asked only then), said once
 * a call. Other waits are said already: the watch's warning and the conversation's own `host` event.
 */
async function explainWait(conversation: Conversation, d: WorkflowExecutionDescription): Promise<{ key: string; line: string } | null> {
  const call = oldestUnstarted(d.raw.pendingActivities ?? [], undefined);
  if (!call || Date.now() - call.scheduledAt < PICKUP_GRACE_MS) return null;
  const s = await conversation.state();
  if (s.pool === undefined) return null;
  const w = await waitingNow(conversation.client, s, d);
  return w && { key: `${call.activityType} ${call.taskQueue} ${call.scheduledAt}`, line: pc.yellow(waitingLine(w, Date.now())) };
}

program
  .command('events')
  .description('the event log')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .option('--json', 'one JSON object a line')
  .option(
    '--follow',
    'keep printing new events, and the reply and command output as they stream, through pauses, messages and resumes until the conversation is closed (or Ctrl-C)',
  )
  .option('--until-stop', 'with --follow: end when the run stops; the exit code says how (0 finished, 1 error, 2 stuck, 3 paused)')
  .option('--timeout <seconds>', 'with --follow: give up after this long (exit 124)', positiveNumber)
  .option('-q, --quiet', 'with --follow: no closing line on stderr unless it failed')
  .option('--from <index>', 'start at this event index', nonNegativeInt, 0)
  .action(
    async (id: string, o: { json?: boolean; follow?: boolean; untilStop?: boolean; timeout?: number; quiet?: boolean; from: number }) => {
      if (o.untilStop && !o.follow) throw new UsageError('--until-stop goes with --follow');
      await withClient(async (client) => {
        const conversation = await attach(client, id);
        if (o.follow) {
          const s = await followEvents(conversation, {
            json: o.json ?? false,
            fromIndex: o.from,
            live: true,
            ...(o.untilStop ? { until: stopped } : {}),
            ...(o.timeout !== undefined ? { timeoutMs: o.timeout * 1000 } : {}),
          });
          const outcome = await outcomeWithReason(conversation, s);
          // Followed to the close: the conversation ended; its last run's status is only told.
          exitWith(
            o.untilStop || !s.closed ? outcome : { code: 0, failed: false, line: `${s.id} closed (its last run: ${s.status})` },
            o.quiet,
          );
          return;
        }
        for (const e of await answered(conversation.events(o.from))) console.log(o.json ? JSON.stringify(e) : formatEvent(e));
      });
    },
  );

program
  .command('list')
  .description('conversations, newest first (a visibility query: works on any Temporal cluster)')
  .addOption(new Option('--status <status>', 'only this status').choices([...CONVERSATION_STATUSES]))
  .option('--json', 'one JSON object a line')
  .option('--limit <n>', 'at most this many', positiveInt, 100)
  .option('--parent <id>', 'only the sub-agents (child conversations) of this conversation', conversationIdArg)
  .option('--schedule <name>', 'only the conversations this schedule started')
  .option('--tenant <name>', "only this tenant's conversations (the team API's; the FaheemTenant search attribute)", tenantArg)
  .action(async (o: { status?: string; json?: boolean; limit: number; parent?: string; schedule?: string; tenant?: string }) => {
    await withClient(async (client) => {
      let query = listQueryText({
        ...(o.status ? { status: o.status as ConversationStatus } : {}),
        ...(o.parent ? { parentId: o.parent } : {}),
        ...(o.tenant !== undefined ? { tenant: o.tenant } : {}),
      });
      if (o.schedule) query += ` AND ${scheduleRunsQuery(o.schedule)}`;
      const { rows, capped } = await listNewestFirst(client, query, o.limit);
      for (const row of rows) {
        console.log(
          o.json
            ? JSON.stringify(row)
            : `${row.id}  ${listedStatus(row)}  ${pc.dim(`started ${shownTime(row.startTime)}`)}${
                row.tenant !== undefined ? pc.dim(`  tenant ${row.tenant}`) : ''
              }`,
        );
      }
      if (capped)
        console.error(
          pc.yellow(
            `faheem list: this server cannot order a list, so the newest of the first ${LIST_SCAN_CAP} conversations are shown; narrow it with --status, --tenant or --parent`,
          ),
        );
    });
  });

/**
 * A row's status for people: a closed conversation is `closed` (its last status, which may still
 * say `running` when it was closed mid-run, follows only when it says how the run ended).
 */
function listedStatus(row: ListRow): string {
  if (!row.closed) return colorStatus(row.status);
  return `closed${['finished', 'error', 'stuck'].includes(row.status) ? pc.dim(` (${row.status})`) : ''}`;
}

/** How many conversations `list` reads at most from a server that cannot order them (then sorts). */
const LIST_SCAN_CAP = 10_000;

interface ListRow {
  id: string;
  status: string;
  closed: boolean;
  startTime: string;
  tenant?: string;
}

/**
 * The first `limit` conversations the query finds, newest first: ordered by the server when it
 * can, else (the dev server's SQLite) read in full, up to LIST_SCAN_CAP, and sorted here.
 */
async function listNewestFirst(client: Client, query: string, limit: number): Promise<{ rows: ListRow[]; capped: boolean }> {
  const read = async (q: string, max: number) => {
    const rows: ListRow[] = [];
    for await (const wf of client.workflow.list({ query: q })) {
      if (rows.length >= max) return { rows, capped: true };
      const tenant = wf.typedSearchAttributes.get(TenantKey);
      rows.push({
        id: wf.workflowId,
        status: String(wf.typedSearchAttributes.get(ConversationStatusKey) ?? '?'),
        closed: wf.status.name !== 'RUNNING',
        startTime: wf.startTime.toISOString(),
        ...(tenant !== undefined ? { tenant: String(tenant) } : {}),
      });
    }
    return { rows, capped: false };
  };
  try {
    const { rows } = await read(`${query} ${NEWEST_FIRST}`, limit);
    return { rows, capped: false };
  } catch (err) {
    if (!isOrderRefused(err)) throw err;
  }
  const { rows, capped } = await read(query, LIST_SCAN_CAP);
  return { rows: newestFirst(rows).slice(0, limit), capped };
}

program
  .command('close')
  .description('end the conversation workflow cleanly (its history stays readable)')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .option('-q, --quiet', 'print nothing on success')
  .action(async (id: string, o: { quiet?: boolean }) => {
    await withOpenConversation(id, 'close', async (conversation, open) => {
      await conversation.close();
      // With a worker there, the workflow ends within moments: say so once it has.
      const polling = await open.workerPolling;
      const closedNow =
        polling &&
        (await withTimeout(
          conversation.client.workflow
            .getHandle(conversation.id)
            .result()
            .then(
              () => true,
              () => true,
            ),
          UPDATE_TIMEOUT_MS,
          () => new NoWorkerError('no worker closed it in time'),
        ).catch(() => false));
      say(closedLine(conversation.id, open.status, closedNow), o.quiet);
    });
  });

program
  .command('approve')
  .description('run the actions waiting for confirmation')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .option('-q, --quiet', 'print nothing on success')
  .action(async (id: string, o: { quiet?: boolean }) => {
    await withOpenConversation(id, 'approve', async (conversation) => {
      say(answeredLine(conversation.id, 'approved', await answered(conversation.approve())), o.quiet);
    });
  });

program
  .command('reject')
  .description('refuse the actions waiting for confirmation; the model sees the reason and goes on')
  .argument('<id>', 'the conversation id', conversationIdArg)
  .option('--reason <reason>', 'why (the model reads it)')
  .option('-q, --quiet', 'print nothing on success')
  .action(async (id: string, o: { reason?: string; quiet?: boolean }) => {
    await withOpenConversation(id, 'reject', async (conversation) => {
      say(answeredLine(conversation.id, 'rejected', await answered(conversation.reject(o.reason ?? '')), o.reason), o.quiet);
    });
  });

program.addCommand(consoleCommand());
program.addCommand(apiCommand(settings));
program.addCommand(apiKeyCommand(settings));
program.addCommand(acpCommand());
program.addCommand(scheduleCommand({ withClient, positiveInt, positiveNumber, readMcpConfig }));
program.addCommand(deployCommand({ withClient, positiveInt, settings }));
for (const command of timeTravelCommands({
  withClient,
  answered,
  nonNegativeInt,
  withConversation: (id, fn) => withClient(async (client) => fn(await attach(client, id))),
})) {
  program.addCommand(command);
}

program.addCommand(workspaceCommand());

program
  .command('doctor')
  .description('check each part: server, namespace, search attributes, workers, model, encryption key, sandbox (one line each)')
  .option('--model [model]', 'also make one tiny call to this model (default: LLM_MODEL), as the worker would')
  .option(
    '--config',
    'list every environment variable faheem reads, with its value here (or why it is not valid) or its default (secrets masked)',
  )
  .action(async (o: { model?: string | true; config?: boolean }) => {
    const { ok, summary } = await doctor({ env, ...(o.model !== undefined ? { model: o.model } : {}) });
    for (const line of configurationLines(env, o.config === true)) console.log(line);
    // A value the table's check refuses stops the process that reads it: worth a non-zero exit here.
    const invalid = effectiveConfiguration(env, true).filter((r) => r.problem);
    const refused = invalid.map((r) => `${r.name} ${r.problem} (fix or unset it)`);
    if (!ok || refused.length > 0) throw new UsageError([...(ok ? [] : [summary]), ...refused].join('; '));
    console.log(pc.green(summary));
  });

/** A bad flag or argument: the error and one hint naming the command's help, not the whole help. */
function hintAfterErrors(command: Command, path: string): void {
  command.showHelpAfterError(pc.dim(`(\`${path} --help\` lists the options)`));
  for (const sub of command.commands) hintAfterErrors(sub, `${path} ${sub.name()}`);
}
hintAfterErrors(program, 'faheem');

try {
  await program.parseAsync(process.argv);
  // Open handles (gRPC) can keep Node alive; the command is done.
  if (!['server', 'worker', 'codec-server'].includes(process.argv[2] ?? '')) process.exit(); // with process.exitCode
} catch (err) {
  console.error(pc.red(`faheem: ${describe(err)}`));
  process.exit(err instanceof GaveUpError ? EXIT.timeout : 1);
}

/** The address the CLI talks to (TEMPORAL_ADDRESS or the envconfig profile's), for error lines. */
function temporalAddress(): string {
  try {
    return connectConfig(settings).connectionOptions.address;
  } catch {
    return connection.address;
  }
}

/** The one line the CLI prints for an error: ours say what to do; Temporal's get a hint. */
function describe(err: unknown): string {
  if (err instanceof FaheemError) return err.message;
  const temporal = describeTemporalError(err, temporalAddress());
  if (temporal) return temporal;
  if (err instanceof WorkflowNotFoundError) return `${err.message} (the conversation may be closed; see \`faheem list\`)`;
  return (err as Error | undefined)?.message ?? String(err);
}
