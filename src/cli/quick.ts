// The quick paths of `faheem status` and `faheem pause`: the same answers and lines as the full
// commands (src/cli/index.ts), over Temporal's HTTP API (../temporal-http.ts) and without loading
// the SDK, commander or zod, so a command a person types often costs about what the Go CLI's does.
// A quick path only runs where it is sure to match the full one: a plain local connection, no
// encryption key, no tracing, the JSON payloads it can read. Anything else (an option it does not
// know, an error to explain, no worker to answer) steps aside before printing, and the full
// command runs as if nothing had happened: every check and message stays in one place.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Settings } from '../environment.js';
import { FaheemError } from '../core/errors.js';
import { faheemHome } from '../home.js';
import { codecSettings } from '../settings/codec.js';
import { connectionSettings } from '../settings/connection.js';
import { telemetrySettings } from '../settings/telemetry.js';
import {
  callHttpApi,
  closeHttpApi,
  isObject,
  jsonPayload,
  readHttpAccess,
  readJsonPayload,
  readOnlyPayload,
  type HttpApi,
} from '../client/temporal-http.js';
import { randomUUID } from 'node:crypto';
import { DEFAULTS, type ConversationState } from '../core/types.js';
import { formatState, stateJson } from './format.js';
import { pausedLine, queuedLine } from './outcome.js';
import { POLLER_FRESH_MS, QUICK_ANSWER_MS, UPDATE_TIMEOUT_MS } from './presence-rules.js';

/** What a quick command reads from the environment (the entry point passes it in). */
export type QuickEnv = Readonly<Record<string, string | undefined>>;

/** A command the quick paths serve, read from argv; undefined for any other. */
export type QuickCommand =
  | { kind: 'status'; id: string; json: boolean }
  | { kind: 'pause'; id: string; now: boolean; quiet: boolean }
  | { kind: 'send'; id: string; message: string; quiet: boolean };

/**
 * A quick command that acted and then could not finish: it cannot step aside (the full command
 * would act twice), so it says what it knows. The entry point prints it and exits 1.
 */
export class QuickFailure extends FaheemError {
  constructor(message: string) {
    super('no_worker', message);
  }
}

/** The per-call bound: a frontend that does not answer within it is left to the gRPC path. */
const CALL_TIMEOUT_MS = 3_000;

/**
 * Reads `status ID [--json]`, `pause ID [--now] [-q|--quiet]` or `send ID MESSAGE [-q|--quiet]`;
 * anything else (another option, a message the full command would refuse) is not quick.
 */
export function quickCommand(argv: readonly string[]): QuickCommand | undefined {
  const [name, ...rest] = argv;
  const flags = rest.filter((a) => a.startsWith('-'));
  const positional = rest.filter((a) => !a.startsWith('-'));
  const id = positional[0];
  if (id === undefined || !isPlainId(id)) return undefined;
  const only = (allowed: string[]) => flags.every((f) => allowed.includes(f));
  const quiet = flags.includes('-q') || flags.includes('--quiet');
  if (name === 'status' && positional.length === 1 && only(['--json'])) return { kind: 'status', id, json: flags.includes('--json') };
  if (name === 'pause' && positional.length === 1 && only(['--now', '-q', '--quiet']))
    return { kind: 'pause', id, now: flags.includes('--now'), quiet };
  const message = positional[1];
  if (name === 'send' && positional.length === 2 && only(['-q', '--quiet']) && message !== undefined && sendable(message))
    return { kind: 'send', id, message, quiet };
  return undefined;
}

// The full command's checks (checkMessage): what fails them goes there for its message.
function sendable(message: string): boolean {
  return message.trim() !== '' && message.length <= DEFAULTS.maxMessageChars;
}

// Ids the full path would accept as they are; any other goes there for its message.
function isPlainId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id);
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * The HTTP API the quick paths may use, or undefined when only the full client is sure to connect
 * as configured. `FAHEEM_TEMPORAL_HTTP` names it (`http://host:port`; `off`: never; with
 * FAHEEM_TEMPORAL_HTTP_HOST, the Host header to send); otherwise a loopback TEMPORAL_ADDRESS (default
 * `localhost:7233`) uses the access file `faheem server` left for that port under FAHEEM_HOME (its
 * URL and the one Host name it answers to), and no file means the gRPC path. TLS, API keys, envconfig profiles, an
 * encryption key or a tracing exporter all take the full path. The settings are read by the same
 * area parsers as the full command's (src/settings/), which load no zod and no SDK.
 */
export function quickEndpoint(env: QuickEnv): HttpApi | undefined {
  // Unchecked: the quick paths read only variables without checks, and a blank value is unset.
  const settings = env as Settings;
  const connection = connectionSettings(settings);
  const named = connection.httpApi;
  if (named === 'off') return undefined;
  if (connection.envconfig) return undefined;
  if (codecSettings(settings).encrypts) return undefined;
  if (telemetrySettings(settings).tracing) return undefined;
  if (envconfigFileExists(env)) return undefined;
  const namespace = connection.namespace;
  if (named) {
    let url: URL;
    try {
      url = new URL(named);
    } catch {
      return undefined;
    }
    const host = connection.httpApiHost;
    return url.protocol === 'http:' && url.pathname === '/' ? { base: url.origin, namespace, ...(host ? { host } : {}) } : undefined;
  }
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(connection.address);
  if (!match || !LOOPBACK.has(match[1]!)) return undefined;
  // The access `faheem server` left for this port: its HTTP API answers only to that Host name.
  const access = readHttpAccess(faheemHome(settings), Number(match[2]));
  if (!access) return undefined;
  let url: URL;
  try {
    url = new URL(access.url);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname) ? { base: url.origin, namespace, host: access.host } : undefined;
}

// Temporal's envconfig reads its default file when present (profiles, TLS): the full path honours
// it. (A named TEMPORAL_CONFIG_FILE is envconfig's already.) HOME and XDG_CONFIG_HOME are the
// system's, not faheem's settings.
function envconfigFileExists(env: QuickEnv): boolean {
  const base = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, '.config') : os.homedir() ? path.join(os.homedir(), '.config') : '');
  return base !== '' && existsSync(path.join(base, 'temporalio', 'temporal.toml'));
}

/**
 * Runs a quick command when it can. Answers true when it printed the command's answer (the process
 * is done), false when it printed nothing and the full command must run.
 */
export async function runQuick(argv: readonly string[], env: QuickEnv, print: (line: string) => void = console.log): Promise<boolean> {
  const command = quickCommand(argv);
  const api = command && quickEndpoint(env);
  if (!command || !api) return false;
  try {
    const line =
      command.kind === 'status'
        ? await quickStatus(api, command)
        : command.kind === 'pause'
          ? await quickPause(api, command)
          : await quickSend(api, command);
    if (line === undefined) return false;
    if (line !== '') print(line);
    return true;
  } catch (err) {
    if (err instanceof QuickFailure) throw err;
    return false; // a transport failure or an answer it did not expect: the full command says what it is
  } finally {
    closeHttpApi();
  }
}

async function quickStatus(api: HttpApi, command: { id: string; json: boolean }): Promise<string | undefined> {
  // Like the full path's first race: an answer within QUICK_ANSWER_MS, or the full path takes over
  // (it finds out whether a worker is there, and what to say when none is).
  const s = await queryState(api, `/workflows/${encodeURIComponent(command.id)}`, QUICK_ANSWER_MS).catch(() => undefined);
  if (!s) return undefined;
  // A running conversation with a call no worker has started may be waiting for one: the full
  // path finds out and says what for (waiting-note.ts).
  if (s.status === 'running' && !s.closed) {
    const described = await callHttpApi(api, 'GET', `/workflows/${encodeURIComponent(command.id)}`, undefined, CALL_TIMEOUT_MS);
    if (described.status !== 200) return undefined;
    const pending = Array.isArray(described.body.pendingActivities) ? described.body.pendingActivities : [];
    if (pending.some((p) => !isObject(p) || p.state === undefined || p.state === 'PENDING_ACTIVITY_STATE_SCHEDULED')) return undefined;
  }
  return command.json ? JSON.stringify({ ...stateJson(s), waiting: null }) : formatState(s);
}

/** The `state` query's answer, when it came in time and reads as one; undefined otherwise. */
async function queryState(api: HttpApi, workflow: string, timeoutMs: number): Promise<ConversationState | undefined> {
  const answer = await callHttpApi(api, 'POST', `${workflow}/query/state`, { query: { queryType: 'state' } }, timeoutMs);
  if (answer.status !== 200 || !isObject(answer.body.queryResult)) return undefined;
  const read = readOnlyPayload(answer.body.queryResult.payloads);
  return read && isConversationState(read.value) ? read.value : undefined;
}

// Our own workflow's answer; enough is checked that formatting cannot throw on it.
function isConversationState(value: unknown): value is ConversationState {
  return (
    isObject(value) &&
    typeof value.id === 'string' &&
    typeof value.status === 'string' &&
    isObject(value.metrics) &&
    isObject(value.terminal)
  );
}

/** What a changing command knows before it acts (the full path's OpenConversation). */
interface OpenWorkflow {
  /** The ConversationStatus search attribute; null before a worker ran it. */
  before: string | null;
  taskQueue: string;
}

/** The conversation, if it is open and this process can read it; undefined leaves it to the full path. */
async function openWorkflow(api: HttpApi, workflow: string): Promise<OpenWorkflow | undefined> {
  const described = await callHttpApi(api, 'GET', workflow, undefined, CALL_TIMEOUT_MS);
  if (described.status !== 200) return undefined; // not found, or refused: the full path says so
  const info = described.body.workflowExecutionInfo;
  if (!isObject(info) || info.status !== 'WORKFLOW_EXECUTION_STATUS_RUNNING' || typeof info.taskQueue !== 'string') return undefined;
  // A summary this process cannot read means an encrypted conversation: the full path explains.
  const config = described.body.executionConfig;
  const summary = isObject(config) && isObject(config.userMetadata) ? config.userMetadata.summary : undefined;
  if (summary !== undefined && !readJsonPayload(summary)) return undefined;
  const attributes =
    isObject(info.searchAttributes) && isObject(info.searchAttributes.indexedFields) ? info.searchAttributes.indexedFields : {};
  const recorded = attributes.ConversationStatus === undefined ? { value: null } : readJsonPayload(attributes.ConversationStatus);
  if (!recorded) return undefined;
  return { before: recorded.value === null ? null : String(recorded.value), taskQueue: info.taskQueue };
}

async function quickPause(api: HttpApi, command: { id: string; now: boolean; quiet: boolean }): Promise<string | undefined> {
  const workflow = `/workflows/${encodeURIComponent(command.id)}`;
  const open = await openWorkflow(api, workflow);
  if (!open) return undefined;
  const { before } = open;
  const polling = workerPolls(api, open.taskQueue);
  polling.catch(() => undefined);
  const signalled = await callHttpApi(
    api,
    'POST',
    `${workflow}/signal/pause`,
    { input: { payloads: [jsonPayload({ now: command.now })] }, identity: `${process.pid}@${os.hostname()}` },
    CALL_TIMEOUT_MS,
  );
  // Closed meanwhile, or refused: the full path (a second pause changes nothing) says what happened.
  if (signalled.status !== 200) return undefined;
  const line = pausedLine(command.id, before, command.now, await polling.catch(() => true));
  return command.quiet ? '' : line;
}

/** Whether a worker polled the workflow task queue lately (the full path's queuePollers). */
async function workerPolls(api: HttpApi, queue: string): Promise<boolean> {
  const answer = await callHttpApi(
    api,
    'GET',
    `/task-queues/${encodeURIComponent(queue)}?taskQueueType=TASK_QUEUE_TYPE_WORKFLOW`,
    undefined,
    CALL_TIMEOUT_MS,
  );
  if (answer.status !== 200) return true; // cannot tell: say nothing of a missing worker
  const pollers = Array.isArray(answer.body.pollers) ? answer.body.pollers : [];
  const now = Date.now();
  return pollers.some((p) => isObject(p) && typeof p.lastAccessTime === 'string' && now - Date.parse(p.lastAccessTime) < POLLER_FRESH_MS);
}

/**
 * `send`: the addMessage update, then the state for the line. Before the update it may still step
 * aside; once the update is on its way it may not (the full command would add the message again),
 * so an answer that never comes is asked again under the same update id (the server runs an id
 * once) and, failing that, reported.
 */
async function quickSend(api: HttpApi, command: { id: string; message: string; quiet: boolean }): Promise<string | undefined> {
  const workflow = `/workflows/${encodeURIComponent(command.id)}`;
  const open = await openWorkflow(api, workflow);
  // No worker: the full command waits for one and says so.
  if (!open || !(await workerPolls(api, open.taskQueue))) return undefined;
  const updateId = randomUUID();
  const request = {
    request: {
      meta: { updateId, identity: `${process.pid}@${os.hostname()}` },
      input: { name: 'addMessage', args: { payloads: [jsonPayload(command.message)] } },
    },
    waitPolicy: { lifecycleStage: 'UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED' },
  };
  const deadline = Date.now() + UPDATE_TIMEOUT_MS;
  let index: number | undefined;
  let first = true;
  while (index === undefined) {
    const left = deadline - Date.now();
    if (left <= 0)
      throw new QuickFailure(
        `no worker answered within ${UPDATE_TIMEOUT_MS / 1000} s whether the message was added (update ${updateId}); \`faheem events ${command.id}\` shows it if it was`,
      );
    let answer;
    try {
      answer = await callHttpApi(api, 'POST', `${workflow}/update/addMessage`, request, left);
    } catch (err) {
      // A refused connection never reached the server; anything else may have: ask again, same id.
      if (first && err instanceof Error && /ECONNREFUSED|ENOTFOUND/.test(err.message)) return undefined;
      first = false;
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    first = false;
    const outcome = answer.body.outcome;
    // Refused before it was admitted (closed, not found), or by the workflow's validator: nothing
    // happened, and the full command says why.
    if (answer.status !== 200 || (isObject(outcome) && outcome.failure !== undefined)) return undefined;
    if (!isObject(outcome) || !isObject(outcome.success)) continue; // admitted, not yet completed: ask again
    const value = readOnlyPayload(outcome.success.payloads)?.value;
    if (!isObject(value) || typeof value.index !== 'number')
      throw new QuickFailure(`the message was added, with an answer this CLI does not read`);
    index = value.index;
  }
  const state = await queryState(api, workflow, UPDATE_TIMEOUT_MS).catch(() => undefined);
  if (!state) throw new QuickFailure(`message added (event ${index}); its conversation's state could not be read`);
  return command.quiet ? '' : queuedLine(command.id, state.status, state.pendingMessages, false);
}
