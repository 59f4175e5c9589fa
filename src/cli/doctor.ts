// `faheem doctor`: is every part there? One line per check with a mark (✓ fine, ✗ wrong, ! worth
// knowing); the command fails when a line is ✗. Every check has its own short time limit.
import { Client, isGrpcServiceError, type Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { checkSandbox, resolveSandbox, sandboxFromEnv } from '../sandbox/sandbox.js';
import pc from 'picocolors';
import { CONNECT_TIMEOUT_MS, connectConfig, connectConnection } from '../connection.js';
import { connectionSettings } from '../settings/connection.js';
import { modelSettings } from '../settings/models.js';
import { storeSettings } from '../settings/store.js';
import { ModelConfigError, PROVIDERS, resolveModel } from '../models/provider.js';
import { splitChain } from '../models/workflow/model-chain.js';
import { SEARCH_ATTRIBUTES } from '../client/search-attributes.js';
import { dataConverter } from '../storage/local-payloads.js';
import { redact, secretValues } from '../security/redact.js';
import { noToolWorker, noWorkflowWorker, queuePollers, startInputPayloads } from './presence.js';
import { withTimeout } from '../core/timeout.js';
import { SCRIPTED_DEMO, modelOfIdentity } from '../models/worker-model.js';
import { storeGuarantee } from '../pool/shipping.js';
import { WORKER_COMMANDS_CONFIG, describePauseChannel, pauseChannelOf, type PauseChannel } from '../client/pause-channel.js';
import type { ChildEnv, Settings } from '../environment.js';

/**
 * How a pause reaches the calls in flight: worker commands, or (a warning) heartbeats ten times a
 * second, with the server settings that turn worker commands on.
 */
export function pauseLine(channel: PauseChannel): CheckLine {
  const [capability, cancellations] = WORKER_COMMANDS_CONFIG.map((setting) => setting.split('=')[0]);
  return channel === 'worker-commands'
    ? line('ok', 'pause', `${describePauseChannel(channel)}; on your own cluster ${cancellations} must be true too`)
    : line(
        'warn',
        'pause',
        'this server has no worker commands: a pause reaches calls in flight through heartbeats, ten a second per model call ' +
          `(on your own cluster set the dynamic config ${capability} and ${cancellations} to true; \`faheem server\` does)`,
      );
}

/** gRPC's status code for NOT_FOUND (a namespace that does not exist). */
const GRPC_NOT_FOUND = 5;

export type Mark = 'ok' | 'fail' | 'warn';
export interface CheckLine {
  mark: Mark;
  name: string;
  detail: string;
}

const RPC_TIMEOUT_MS = 3_000;
const MODEL_TIMEOUT_MS = 15_000;

export interface DoctorOptions {
  /** Make one tiny chat-completions call to this model (`true`: the configured LLM_MODEL). */
  model?: string | true;
  /** The environment the checks read (the CLI's, read once at its edge); the model check's worker reads its own. */
  env: ChildEnv;
  /** Where each line goes as soon as it is known (default: stdout). */
  print?: (line: string) => void;
}

/** Runs every check, prints one line each, and answers whether none failed (with a one-line summary). */
export async function doctor(options: DoctorOptions): Promise<{ ok: boolean; lines: CheckLine[]; summary: string }> {
  const env = options.env;
  const print = options.print ?? ((line: string) => console.log(line));
  const server = serverChecks(env);
  // Independent checks run together; lines print in a fixed order as each is known.
  const groups: Promise<CheckLine[]>[] = [
    server.then((s) => s.lines),
    server.then((s) => modelChecks(env, options.model, s.workerModels)),
    server.then((s) => encryptionCheck(env, s.client)),
    Promise.resolve(storeCheck(env)),
    sandboxCheck(env),
  ];
  const lines: CheckLine[] = [];
  for (const group of groups) {
    for (const line of await group) {
      lines.push(line);
      print(formatLine(line));
    }
  }
  const s = await server;
  await s.connection?.close().catch(() => undefined);
  const failed = lines.filter((l) => l.mark === 'fail').length;
  const warned = lines.filter((l) => l.mark === 'warn').length;
  const plural = (n: number, word: string) => `${n} ${word}${n > 1 ? 's' : ''}`;
  const summary = failed
    ? `${plural(failed, 'problem')} found${warned ? `, ${plural(warned, 'warning')}` : ''}`
    : `all parts answer${warned ? ` (${plural(warned, 'warning')})` : ''}`;
  return { ok: failed === 0, lines, summary };
}

const MARKS: Record<Mark, string> = { ok: pc.green('✓'), fail: pc.red('✗'), warn: pc.yellow('!') };

export function formatLine(l: CheckLine): string {
  const detail = l.mark === 'fail' ? pc.red(l.detail) : l.mark === 'warn' ? pc.yellow(l.detail) : l.detail;
  return `${MARKS[l.mark]} ${pc.bold(l.name.padEnd(18))} ${detail}`;
}

const line = (mark: Mark, name: string, detail: string): CheckLine => ({ mark, name, detail });

function message(err: unknown): string {
  const e = err as Error & { details?: string };
  return (e?.details || e?.message || String(err)).split('\n')[0] ?? '';
}

/** Within `ms`, or an error saying it took too long. */
async function within<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  return withTimeout(fn(), ms, () => new Error(`${what}: no answer within ${ms / 1000} s`));
}

// ---- The server, its namespace, the search attributes, the workers ----

async function serverChecks(
  env: Settings,
): Promise<{ lines: CheckLine[]; client?: Client; connection?: Connection; workerModels?: WorkerReport[] }> {
  const { connectionOptions, namespace } = connectConfig();
  let connection: Connection;
  try {
    ({ connection } = await within(CONNECT_TIMEOUT_MS + 1_000, 'connect', connectConnection));
  } catch (err) {
    return { lines: [line('fail', 'server', message(err))] };
  }
  const deadline = () => Date.now() + RPC_TIMEOUT_MS;
  const lines: CheckLine[] = [];
  try {
    const info = await connection.withDeadline(deadline(), () => connection.workflowService.getSystemInfo({}));
    lines.push(line('ok', 'server', `Temporal ${info.serverVersion || '(version not reported)'} at ${connectionOptions.address}`));
  } catch (err) {
    lines.push(line('fail', 'server', `Temporal at ${connectionOptions.address} connected but did not answer: ${message(err)}`));
  }
  try {
    const description = await connection.withDeadline(deadline(), () => connection.workflowService.describeNamespace({ namespace }));
    lines.push(line('ok', 'namespace', namespace));
    lines.push(pauseLine(pauseChannelOf(description)));
  } catch (err) {
    const notFound = isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND;
    lines.push(
      line(
        'fail',
        'namespace',
        notFound
          ? `${namespace} does not exist on this server (create it with \`temporal operator namespace create ${namespace}\`, or set TEMPORAL_NAMESPACE)`
          : `${namespace}: ${message(err)}`,
      ),
    );
    return { lines, connection };
  }
  lines.push(await searchAttributesCheck(connection, namespace));

  // Codecs are not needed to ask about queues; a malformed key is the encryption line's business.
  const client = new Client({ connection, namespace, dataConverter: safeDataConverter(env) ?? {} });
  const { taskQueue: mainQueue, toolTaskQueue: toolsQueue } = connectionSettings(env);
  const [main, tools] = await Promise.all([
    queuePollers(client, mainQueue, 'workflow', RPC_TIMEOUT_MS).catch((err: unknown) => err as Error),
    queuePollers(client, toolsQueue, 'activity', RPC_TIMEOUT_MS).catch((err: unknown) => err as Error),
  ]);
  if (main instanceof Error) lines.push(line('fail', 'workers', `${mainQueue}: ${message(main)}`));
  else if (main.polling)
    lines.push(line('ok', 'workers', `${count(main.identities)} ${mainQueue} (workflows and model calls): ${main.identities.join(', ')}`));
  else lines.push(line('fail', 'workers', `${noWorkflowWorker(main)}: conversations wait; run \`npx faheem worker\` against this server`));
  if (tools instanceof Error) lines.push(line('fail', 'tool worker', `${toolsQueue}: ${message(tools)}`));
  else if (tools.polling)
    lines.push(line('ok', 'tool worker', `${count(tools.identities)} ${toolsQueue} (this host's tools): ${tools.identities.join(', ')}`));
  else {
    lines.push(
      line('fail', 'tool worker', `${noToolWorker(tools)}: commands for workspaces on this host wait; run \`npx faheem worker\` here`),
    );
  }
  const workerModels =
    main instanceof Error || !main.polling
      ? undefined
      : main.identities.map((identity) => ({ identity, model: modelOfIdentity(identity) }));
  return { lines, client, connection, ...(workerModels ? { workerModels } : {}) };
}

/** A worker polling the main queue, and the model its identity names (undefined: an older worker that names none). */
interface WorkerReport {
  identity: string;
  model: string | undefined;
}

const count = (identities: string[]) => (identities.length === 1 ? '1 worker polls' : `${identities.length} workers poll`);

/** What each search attribute lets a list filter on (the doctor says what a missing one costs). */
const ATTRIBUTE_USE: Record<keyof typeof SEARCH_ATTRIBUTES, string> = {
  ConversationStatus: 'status',
  ConversationModel: 'model',
  FaheemTenant: 'tenant',
};

/** `a, b and c`. */
function andList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * The search attributes line from what the namespace has registered (`custom`: its custom
 * attributes by name): ok naming each with what it filters, or a failure naming the missing ones
 * and how to register them.
 */
export function searchAttributesLine(custom: Record<string, unknown>): CheckLine {
  const wanted = Object.keys(SEARCH_ATTRIBUTES) as (keyof typeof SEARCH_ATTRIBUTES)[];
  const missing = wanted.filter((name) => !(name in custom));
  if (missing.length === 0)
    return line(
      'ok',
      'search attributes',
      `${andList(wanted)} registered (lists filter by ${andList(wanted.map((name) => ATTRIBUTE_USE[name]))})`,
    );
  return line(
    'fail',
    'search attributes',
    `${andList(missing)} not registered (\`faheem list\` cannot filter by ${andList(missing.map((name) => ATTRIBUTE_USE[name]))}): ` +
      `\`temporal operator search-attribute create --name ${missing[0]} --type Keyword\`` +
      `${missing.length > 1 ? ' (and the others)' : ''}, or start a worker once with the rights to add them`,
  );
}

async function searchAttributesCheck(connection: Connection, namespace: string): Promise<CheckLine> {
  const wanted = Object.keys(SEARCH_ATTRIBUTES);
  try {
    const existing = await connection.withDeadline(Date.now() + RPC_TIMEOUT_MS, () =>
      connection.operatorService.listSearchAttributes({ namespace }),
    );
    return searchAttributesLine(existing.customAttributes ?? {});
  } catch (err) {
    return line('warn', 'search attributes', `could not list them (${message(err)}); \`faheem list\` needs ${andList(wanted)} (Keyword)`);
  }
}

// ---- The model ----

async function modelChecks(env: Settings, model: string | true | undefined, workers?: WorkerReport[]): Promise<CheckLine[]> {
  // The workers' own word first: the model is theirs, not this shell's.
  const reported = (workers ?? []).filter((w): w is WorkerReport & { model: string } => w.model !== undefined);
  if (model === undefined && reported.length > 0) return [workerModelLine(reported)];
  // `--model` with no name and no LLM_MODEL here: the model the workers report, so the call checks
  // theirs (from here, with this shell's key) instead of saying none is configured under them.
  const theirs = model === true && !env.LLM_MODEL ? soleWorkerModel(reported) : undefined;
  const name = model === true || model === undefined ? theirs : model;
  const lines: CheckLine[] = [];
  let resolved: ReturnType<typeof resolveModel>;
  const settings = modelSettings(env, secretValues(env));
  try {
    // A fallback chain: its first model here (the call below goes along the chain as a worker's does).
    resolved = resolveModel(splitChain(name || env.LLM_MODEL)[0], undefined, settings);
  } catch (err) {
    if (!(err instanceof ModelConfigError)) throw err;
    // Without --model this describes the environment here; the worker's is what counts.
    const detail =
      `${err.message}` +
      (model === undefined ? ' (no worker reports its model: this checks the environment here; the worker needs it)' : '') +
      (theirs ? ` (${theirs} is the workers' model; this call is made from here, with this shell's settings)` : '');
    return [line(model === undefined ? 'warn' : 'fail', 'model', detail)];
  }
  const shown = name || env.LLM_MODEL || resolved.apiModel;
  const here = model === undefined ? '; no worker reports its model: this is the environment here' : theirs ? "; the workers' model" : '';
  lines.push(line('ok', 'model', `${shown} → ${resolved.baseUrl} (${keySource(env, resolved.provider)}${here})`));
  if (model === undefined) return lines;

  // Loaded only for this check: the model SDKs and the price catalogue would slow every CLI command.
  const { ModelClients } = await import('../models/client.js');
  const models = new ModelClients(settings, () => {});
  const secrets = [...secretValues(env), resolved.apiKey];
  const signal = AbortSignal.timeout(MODEL_TIMEOUT_MS);
  const started = performance.now();
  try {
    // As the worker calls it: the Messages API for anthropic/ models, chat completions otherwise.
    const response = await models.complete(
      {
        llm: { usageId: 'doctor', model: shown },
        messages: [{ role: 'user', content: 'Reply with the single word OK.' }],
        tools: [],
        conversationId: 'doctor',
        noReasoning: true,
      },
      signal,
    );
    const ms = Math.round(performance.now() - started);
    const reply = (response.content ?? '').trim().slice(0, 40);
    lines.push(line('ok', 'model call', `${shown} answered in ${ms} ms${reply ? ` (${JSON.stringify(redact(reply, secrets))})` : ''}`));
  } catch (err) {
    const why = signal.aborted ? `no answer from ${resolved.baseUrl} within ${MODEL_TIMEOUT_MS / 1000} s` : (err as Error).message;
    lines.push(line('fail', 'model call', redact(why, secrets)));
  }
  return lines;
}

/** The one model every reporting worker names (not none, not the scripted stand-in); undefined otherwise. */
export function soleWorkerModel(reported: readonly { model: string }[]): string | undefined {
  const models = new Set(reported.map((w) => w.model));
  const [only] = models;
  return models.size === 1 && only !== 'none' && only !== SCRIPTED_DEMO ? only : undefined;
}

/** The model line from what the workers report (their identities): theirs, never a key. */
export function workerModelLine(reported: { identity: string; model: string }[]): CheckLine {
  const byModel = new Map<string, string[]>();
  for (const w of reported) byModel.set(w.model, [...(byModel.get(w.model) ?? []), w.identity.split(' ')[0]!]);
  const parts = [...byModel].map(([m, ids]) => `${m === 'none' ? 'no model' : m} (${ids.join(', ')})`);
  const none = byModel.has('none');
  const scripted = byModel.has(SCRIPTED_DEMO);
  const detail =
    `the worker${reported.length > 1 ? 's' : ''} report${reported.length > 1 ? '' : 's'} ${parts.join('; ')}` +
    (none ? ': a conversation that names no model fails there; set LLM_MODEL where the worker runs' : '') +
    (scripted ? `: ${SCRIPTED_DEMO} is the offline scripted model, a stand-in that replays a fixed script` : '');
  return line(none || scripted ? 'warn' : 'ok', 'model', detail);
}

/** Which variable the key comes from (never any of its characters). */
function keySource(env: Settings, provider: string): string {
  const keyVar = PROVIDERS[provider]?.keyVar;
  if (keyVar && env[keyVar]) return `key from ${keyVar}`;
  if (env.LLM_API_KEY) return 'key from LLM_API_KEY';
  return 'no key';
}

// ---- Encryption ----

type Converter = { payloadCodecs?: PayloadCodec[] };

function safeDataConverter(env: Settings): ReturnType<typeof dataConverter> | undefined {
  try {
    return dataConverter(storeSettings(env));
  } catch {
    return undefined;
  }
}

async function encryptionCheck(env: Settings, client: Client | undefined): Promise<CheckLine[]> {
  const configured = (['FAHEEM_ENCRYPTION_KEY', 'FAHEEM_ENCRYPTION_KEYS'] as const).filter((v) => env[v]);
  const secrets = secretValues(env);
  let codecs: PayloadCodec[];
  try {
    codecs = (dataConverter(storeSettings(env)) as Converter).payloadCodecs ?? [];
  } catch (err) {
    return [line('fail', 'encryption', redact(message(err), secrets))];
  }
  if (codecs.length === 0) {
    if (configured.length > 0) return [line('fail', 'encryption', `${configured.join(' and ')} set, but no payload codec uses it`)];
    const encrypted = await newestConversationEncoding(client);
    if (encrypted?.encrypted) {
      return [
        line(
          'fail',
          'encryption',
          `no encryption key configured, but conversation ${encrypted.id} is encrypted (${encrypted.encoding}): set FAHEEM_ENCRYPTION_KEY`,
        ),
      ];
    }
    return [
      line(
        'warn',
        'encryption',
        'no encryption key configured: conversations are stored in plain text (set FAHEEM_ENCRYPTION_KEY, base64 of 32 bytes)',
      ),
    ];
  }
  try {
    const text = `faheem doctor sample ${Date.now()}`;
    const sample = defaultPayloadConverter.toPayload({ sample: text });
    let encoded = [sample];
    for (const codec of codecs) encoded = await within(RPC_TIMEOUT_MS, 'encode', () => codec.encode(encoded));
    const [cipher] = encoded;
    if (!cipher || Buffer.from(cipher.data ?? []).includes(text))
      return [line('fail', 'encryption', 'a sample payload came out of the codec unencrypted')];
    let decoded = encoded;
    for (const codec of [...codecs].reverse()) decoded = await within(RPC_TIMEOUT_MS, 'decode', () => codec.decode(decoded));
    if (!decoded[0] || !Buffer.from(decoded[0].data ?? []).equals(Buffer.from(sample.data ?? []))) {
      return [line('fail', 'encryption', 'a sample payload did not decrypt to what was encrypted')];
    }
    const meta = metadataText(cipher);
    let detail = `a sample payload encrypts and decrypts${meta ? ` (${meta})` : ''}`;
    // The key against real data: the newest conversation's first payload.
    const newest = await newestConversationInput(client);
    if (newest && newest.payloads.length > 0) {
      try {
        let p = newest.payloads;
        for (const codec of [...codecs].reverse()) p = await within(RPC_TIMEOUT_MS, 'decode', () => codec.decode(p));
        detail += `; reads conversation ${newest.id}`;
      } catch (err) {
        return [line('fail', 'encryption', redact(`the key cannot read conversation ${newest.id}: ${message(err)}`, secrets))];
      }
    }
    return [line('ok', 'encryption', detail)];
  } catch (err) {
    return [line('fail', 'encryption', redact(message(err), secrets))];
  }
}

function metadataText(p: Payload): string {
  const meta = p.metadata ?? {};
  return Object.entries(meta)
    .filter(([k]) => k === 'encoding' || /key/i.test(k))
    .map(
      ([k, v]) =>
        `${k} ${Buffer.from(v ?? [])
          .toString('utf8')
          .slice(0, 40)}`,
    )
    .join(', ');
}

async function newestConversationInput(client: Client | undefined): Promise<{ id: string; payloads: Payload[] } | undefined> {
  if (!client) return undefined;
  try {
    return await within(RPC_TIMEOUT_MS * 2, 'newest conversation', async () => {
      for await (const wf of client.workflow.list({ query: `WorkflowType = 'conversation'`, pageSize: 1 })) {
        return { id: wf.workflowId, payloads: await startInputPayloads(client, wf.workflowId, wf.runId) };
      }
      return undefined;
    });
  } catch {
    return undefined;
  }
}

async function newestConversationEncoding(
  client: Client | undefined,
): Promise<{ id: string; encoding: string; encrypted: boolean } | undefined> {
  const newest = await newestConversationInput(client);
  const first = newest?.payloads[0];
  if (!newest || !first) return undefined;
  const encoding = Buffer.from(first.metadata?.encoding ?? []).toString('utf8');
  return { id: newest.id, encoding, encrypted: /encrypt/i.test(encoding) };
}

// ---- The workspace store ----

/** Only with a store (FAHEEM_OBJECT_STORE): whether its objects are bound to their place, or anyone who can write there decides what is restored. */
function storeCheck(env: Settings): CheckLine[] {
  const guarantee = storeGuarantee(storeSettings(env));
  return guarantee ? [line(guarantee.bound ? 'ok' : 'warn', 'workspace store', guarantee.detail)] : [];
}

// ---- The sandbox ----

async function sandboxCheck(env: Settings): Promise<CheckLine[]> {
  let request: ReturnType<typeof sandboxFromEnv>;
  try {
    request = sandboxFromEnv(env);
  } catch (err) {
    return [line('fail', 'sandbox', message(err))];
  }
  if (request.kind === 'none') {
    return [line('warn', 'sandbox', "commands run unsandboxed, with the worker user's rights (FAHEEM_SANDBOX=none)")];
  }
  // The same resolution the worker makes at start, so doctor passes only where the worker's sandbox works.
  try {
    const { sandbox, warning } = await resolveSandbox(request, env);
    if (!sandbox || warning) return [line('warn', 'sandbox', warning ?? 'commands run unsandboxed')];
    const version = await checkSandbox(sandbox, env);
    const net =
      sandbox.network === 'internet'
        ? 'network internet (no loopback, host or private addresses)'
        : sandbox.network === 'none'
          ? 'no network'
          : "network host: commands reach this host's loopback services";
    return [line(sandbox.network === 'host' ? 'warn' : 'ok', 'sandbox', `${version}: a trial command runs confined, ${net}`)];
  } catch (err) {
    return [line('fail', 'sandbox', message(err))];
  }
}
