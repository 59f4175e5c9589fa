// `faheem acp`: an Agent Client Protocol agent (protocol version 1, the SDK's `agent()` builder) on a
// pair of streams, usually stdin and stdout. Each handler is one call on the session manager; every
// error becomes a JSON-RPC error with a message that says what to do, and the process stays up.
import { RequestError, agent, methods, ndJsonStream, PROTOCOL_VERSION, type AgentConnection } from '@agentclientprotocol/sdk';
import { Readable, Writable } from 'node:stream';
import { ConversationClosedError, ConversationNotFoundError, FaheemError, InvalidRequestError } from '../core/errors.js';
import { AcpSessions, SessionUnknownError, type AcpSessionsOptions } from './sessions.js';

/** The JSON-RPC error for anything a handler throws: ours by kind, the SDK's as they are. */
export function toRequestError(err: unknown): RequestError {
  if (err instanceof RequestError) return err;
  if (err instanceof SessionUnknownError) return new RequestError(-32002, err.message, { sessionId: err.sessionId });
  if (err instanceof ConversationNotFoundError) return new RequestError(-32002, err.message, { sessionId: err.id });
  if (err instanceof ConversationClosedError) return new RequestError(-32002, err.message, { sessionId: err.id, closed: true });
  if (err instanceof InvalidRequestError) return new RequestError(-32602, err.message);
  if (err instanceof FaheemError) return new RequestError(-32603, err.message, { code: err.code });
  return new RequestError(-32603, (err as Error | undefined)?.message ?? String(err));
}

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toRequestError(err);
  }
}

/** What `startAcpAgent` takes: the session manager's options, and the streams (default stdin/stdout). */
export interface AcpAgentOptions extends AcpSessionsOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** This package's version, for `agentInfo`. */
  version?: string;
}

/** Serves ACP on the streams until the client goes away; resolves with the connection and the sessions. */
export function startAcpAgent(options: AcpAgentOptions): { connection: AgentConnection; sessions: AcpSessions } {
  const sessions = new AcpSessions(options);
  const app = agent({ name: 'faheemcode' })
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {} },
      },
      agentInfo: { name: 'faheemcode', title: 'faheemcode (durable Temporal conversations)', version: options.version ?? '0.0.0' },
      authMethods: [],
    }))
    .onRequest(methods.agent.authenticate, () => ({}))
    .onRequest(methods.agent.session.new, ({ params }) => guarded(() => sessions.newSession(params)))
    .onRequest(methods.agent.session.load, ({ params, client }) => guarded(() => sessions.loadSession(params, client)))
    .onRequest(methods.agent.session.list, ({ params }) => guarded(() => sessions.listSessions(params)))
    .onRequest(methods.agent.session.prompt, ({ params, client, signal }) => guarded(() => sessions.prompt(params, client, signal)))
    .onRequest(methods.agent.session.setMode, ({ params }) => guarded(async () => (await sessions.setMode(params), {})))
    .onNotification(methods.agent.session.cancel, ({ params }) => sessions.cancel(params.sessionId));
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(output as Writable) as WritableStream<Uint8Array>,
      Readable.toWeb(input as Readable) as ReadableStream<Uint8Array>,
    ),
  );
  return { connection, sessions };
}
