// An editor for tests: `faheem acp` as a child process, driven by the ACP SDK's own `client()`, with
// every message the agent sends checked against ACP's JSON schema (shipped in the SDK package).
import { client, methods, ndJsonStream, type ClientConnection } from '@agentclientprotocol/sdk';
import type { RequestPermissionRequest, RequestPermissionResponse, SessionNotification, SessionUpdate } from '@agentclientprotocol/sdk';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { execa, type ResultPromise } from 'execa';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { ROOT } from './harness.js';

const require = createRequire(import.meta.url);
// The package's exports name no schema: find it beside its main module (…/dist/v1/stable/acp.js).
const schemaFile = path.join(path.dirname(require.resolve('@agentclientprotocol/sdk')), '..', '..', '..', 'schema', 'v1', 'schema.json');
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(JSON.parse(readFileSync(schemaFile, 'utf8')) as object, 'acp');
const validator = (def: string) => {
  const v = ajv.getSchema(`acp#/$defs/${def}`);
  if (!v) throw new Error(`no ${def} in ACP's schema`);
  return v;
};

/** The schema definition of each response, by the request's method. */
const RESPONSES: Record<string, string> = {
  initialize: 'InitializeResponse',
  authenticate: 'AuthenticateResponse',
  'session/new': 'NewSessionResponse',
  'session/load': 'LoadSessionResponse',
  'session/list': 'ListSessionsResponse',
  'session/prompt': 'PromptResponse',
  'session/set_mode': 'SetSessionModeResponse',
};
const REQUESTS: Record<string, string> = { 'session/request_permission': 'RequestPermissionRequest' };
const NOTIFICATIONS: Record<string, string> = {
  'session/update': 'SessionNotification',
  // Withdrawing a permission request answered elsewhere.
  '$/cancel_request': 'CancelRequestNotification',
};

/** Checks one message the agent sent (its requests' methods known from `sent`); answers what is wrong, or undefined. */
export function schemaProblem(message: Record<string, unknown>, sent: Map<unknown, string>): string | undefined {
  let def: string | undefined;
  let value: unknown;
  if (typeof message.method === 'string') {
    def = 'id' in message ? REQUESTS[message.method] : NOTIFICATIONS[message.method];
    value = message.params;
    if (!def) return `the agent sent ${message.method}, which it has no reason to`;
  } else if ('error' in message) {
    def = 'Error';
    value = message.error;
  } else {
    const method = sent.get(message.id);
    def = method ? RESPONSES[method] : undefined;
    value = message.result;
    if (!def) return `a response to an unknown request ${JSON.stringify(message.id)}`;
  }
  const validate = validator(def);
  if (validate(value)) return undefined;
  return `${def}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(message).slice(0, 500)}`;
}

/** How the test editor answers a permission request. */
export type PermissionAnswer = (request: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse>;

/** A running `faheem acp` and the SDK client driving it. */
export interface AcpProcess {
  process: ResultPromise;
  connection: ClientConnection;
  /** Every update received, by session. */
  updates(sessionId: string): SessionUpdate[];
  /** Every message of the agent that broke the schema (should stay empty). */
  problems: string[];
  /** Called with each update as it arrives (benches time them). */
  onUpdate(listener: (sessionId: string, update: SessionUpdate) => void): void;
  /** Every permission request received. */
  permissions: RequestPermissionRequest[];
  /** How the next permission requests are answered (default: allow once). */
  answerPermissions(answer: PermissionAnswer): void;
  stderr(): string;
  /** Raw lines the agent wrote to stdout. */
  lines: string[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `faheem acp` with `env` and connects the SDK's client to it. */
export async function startAcp(env: Record<string, string>, args: string[] = []): Promise<AcpProcess> {
  const child = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'acp', ...args], {
    cwd: ROOT,
    env,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    reject: false,
    buffer: false,
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const problems: string[] = [];
  const lines: string[] = [];
  const sent = new Map<unknown, string>();
  // What the client writes: remember its requests' methods (to check the answers), then pass it on.
  const toAgent = new PassThrough();
  let outBuffer = '';
  toAgent.on('data', (d: Buffer) => {
    outBuffer += d.toString();
    for (let nl = outBuffer.indexOf('\n'); nl >= 0; nl = outBuffer.indexOf('\n')) {
      const line = outBuffer.slice(0, nl);
      outBuffer = outBuffer.slice(nl + 1);
      try {
        const m = JSON.parse(line) as { id?: unknown; method?: string };
        if (m.method && m.id !== undefined) sent.set(m.id, m.method);
      } catch {
        // not ours to check
      }
    }
  });
  toAgent.pipe(child.stdin!);
  // What the agent writes: every line must be a JSON-RPC message that fits the schema.
  const fromAgent = new PassThrough();
  let inBuffer = '';
  child.stdout!.on('data', (d: Buffer) => {
    inBuffer += d.toString();
    for (let nl = inBuffer.indexOf('\n'); nl >= 0; nl = inBuffer.indexOf('\n')) {
      const line = inBuffer.slice(0, nl);
      inBuffer = inBuffer.slice(nl + 1);
      lines.push(line);
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        problems.push(`not JSON on stdout: ${line.slice(0, 200)}`);
        continue;
      }
      if (message.jsonrpc !== '2.0') problems.push(`not JSON-RPC 2.0: ${line.slice(0, 200)}`);
      const problem = schemaProblem(message, sent);
      if (problem) problems.push(problem);
    }
  });
  child.stdout!.pipe(fromAgent);

  const byId = new Map<string, SessionUpdate[]>();
  const listeners: ((sessionId: string, update: SessionUpdate) => void)[] = [];
  const permissions: RequestPermissionRequest[] = [];
  let answer: PermissionAnswer = (r) => ({
    outcome: { outcome: 'selected', optionId: r.options.find((o) => o.kind === 'allow_once')!.optionId },
  });
  const app = client({ name: 'faheem-test-editor' })
    .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
      const list = byId.get(params.sessionId) ?? [];
      list.push(params.update);
      byId.set(params.sessionId, list);
      for (const l of listeners) l(params.sessionId, params.update);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return answer(params);
    });
  const connection = app.connect(
    ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>),
  );
  return {
    process: child,
    connection,
    updates: (id) => byId.get(id) ?? [],
    problems,
    onUpdate: (l) => void listeners.push(l),
    permissions,
    answerPermissions: (a) => {
      answer = a;
    },
    stderr: () => err,
    lines,
    kill: async (signal = 'SIGTERM') => {
      connection.close();
      child.kill(signal);
      await child;
    },
  };
}

/** The text of the updates of one kind (`agent_message_chunk`, …), joined. */
export function chunkText(updates: SessionUpdate[], kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk'): string {
  return updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => {
      const content = 'content' in u && u.content && !Array.isArray(u.content) ? u.content : undefined;
      return content && content.type === 'text' ? content.text : '';
    })
    .join('');
}
