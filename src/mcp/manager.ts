// Connections to the MCP servers of each conversation, on the tool-host worker. One connection (for stdio:
// one child process) per conversation, server and config; started on first use, shared by concurrent
// callers, dropped when the server goes away and started again on the next use, closed after idleMs.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, type Stream } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ContentBlock, Tool } from '@modelcontextprotocol/sdk/types.js';
import { commandBaseEnv, isMcpOfferedVariable, isWorkerOwnVariable } from '../security/env-policy.js';
import { hiddenDirs, sandboxedCommand, type Sandbox } from '../sandbox/sandbox.js';
import { expandEnv, mcpToolName, type McpServer, type McpServers } from './config.js';
import type { ChildEnv } from '../environment.js';

export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  title?: string;
}

export interface McpToolInfo {
  /** The name the model sees: mcpToolName(server, tool). */
  name: string;
  server: string;
  /** The server's own name for the tool. */
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: McpToolAnnotations;
}

export interface McpServerError {
  server: string;
  message: string;
}

export interface McpCallResult {
  content: string;
  isError: boolean;
}

export interface McpManagerOptions {
  /** The worker's environment: what stdio servers start from (through the allow-list), and ${VAR} in env and headers. */
  env: ChildEnv;
  /** Close a connection unused for this long. Default 10 min. */
  idleMs?: number;
  /** Limit for starting a server and for listing its tools. Default 30 s. */
  connectTimeoutMs?: number;
  /**
   * Start stdio servers under this sandbox, as the conversation's commands are (its workspace writable,
   * the same network). Default: unsandboxed.
   */
  sandbox?: Sandbox;
}

const CLIENT_INFO = { name: 'faheemcode', version: '0.1.0' };
const STDERR_KEEP = 4096;
const STDERR_SHOW = 2000;
// How long to wait for a dead child's last stderr bytes, or for an HTTP session to be ended, before moving on.
const FLUSH_MS = 500;
const CLOSE_SESSION_MS = 2000;
const MAX_PAGES = 100;
// The SDK's own default for a request without a timeout.
const DEFAULT_CALL_TIMEOUT_MS = 60_000;

interface StderrTail {
  text(): string;
  /** Resolves when the child's stderr has ended, or after `FLUSH_MS`. */
  ended(): Promise<void>;
}

interface Connection {
  key: string;
  server: string;
  client: Client;
  transport: Transport;
  stderr: StderrTail | undefined;
  closed: boolean;
  busy: number;
  idleTimer: NodeJS.Timeout | undefined;
}

interface Entry {
  conversationId: string;
  server: string;
  promise: Promise<Connection>;
  conn?: Connection;
}

/** The MCP SDK's parts used here, loaded at the first server start (a worker with no MCP server never needs them). */
interface McpSdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StdioClientTransport: typeof import('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport;
  getDefaultEnvironment: typeof import('@modelcontextprotocol/sdk/client/stdio.js').getDefaultEnvironment;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  StreamableHTTPError: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPError;
  McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  ErrorCode: typeof import('@modelcontextprotocol/sdk/types.js').ErrorCode;
}
let sdk: McpSdk | undefined;
async function loadSdk(): Promise<McpSdk> {
  if (sdk) return sdk;
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  sdk = {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  };
  return sdk;
}

/** Whether `err` is an MCP protocol error (none can exist before the SDK is loaded). */
function isMcpError(err: unknown): err is InstanceType<McpSdk['McpError']> {
  return sdk !== undefined && err instanceof sdk.McpError;
}

function errorMessage(err: unknown): string {
  if (isMcpError(err)) return err.message.replace(/^MCP error -?\d+: /, '');
  // The SDK leaves the HTTP status out of the message.
  if (sdk && err instanceof sdk.StreamableHTTPError && err.code !== undefined && !err.message.includes(String(err.code)))
    return `${err.message} (HTTP ${err.code})`;
  if (!(err instanceof Error)) return String(err);
  // fetch puts the useful part ("connect ECONNREFUSED 127.0.0.1:9") in the cause.
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
}

function isTimeout(err: unknown): boolean {
  return sdk !== undefined && isMcpError(err) && err.code === (sdk.ErrorCode.RequestTimeout as number);
}

function abortError(what: string, signal: AbortSignal): Error {
  const err = new Error(`${what} was aborted`, { cause: signal.reason });
  err.name = 'AbortError';
  return err;
}

/** Races `promise` against `signal` so a caller can stop waiting for work it shares with others. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(what, signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(what, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

// Stable JSON (sorted keys) so the same config always gives the same connection key.
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

// Keeps the last few KB of a child's stderr, for error messages; the worker's own stderr stays clean.
function captureStderr(stream: Stream | null): StderrTail | undefined {
  if (!stream) return undefined;
  let buf = '';
  let done = false;
  const ended = new Promise<void>((resolve) => {
    const finish = () => {
      done = true;
      resolve();
    };
    stream.once('end', finish);
    stream.once('close', finish);
    stream.once('error', finish);
  });
  if (stream instanceof Readable) stream.setEncoding('utf8');
  stream.on('data', (chunk: string | Buffer) => {
    buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (buf.length > STDERR_KEEP * 2) buf = buf.slice(-STDERR_KEEP);
  });
  return {
    text: () => buf.slice(-STDERR_KEEP),
    ended: () => (done ? Promise.resolve() : Promise.race([ended, sleep(FLUSH_MS)])),
  };
}

function stderrSuffix(stderr: StderrTail | undefined): string {
  const tail = stderr?.text().trimEnd() ?? '';
  if (!tail) return '';
  return `. Its stderr ended with:\n${tail.length > STDERR_SHOW ? `…${tail.slice(-STDERR_SHOW)}` : tail}`;
}

// Enough to recognise the server without echoing arguments, which may hold tokens.
function describeServer(name: string, config: McpServer): string {
  if ('command' in config) {
    return `"${name}" (${path.basename(config.command)}${config.args?.length ? ' …' : ''})`;
  }
  const url = new URL(config.url);
  return `"${name}" (${url.origin}${url.pathname})`;
}

export { isWorkerOwnVariable };

function expandValues(values: Record<string, string> | undefined, env: ChildEnv, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  // Only what the worker offers is filled in; a name it does not offer reads as unset (its default, if any, applies).
  const offered: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) if (isMcpOfferedVariable(k, env)) offered[k] = v;
  for (const [k, v] of Object.entries(values ?? {})) {
    try {
      for (const [, name, fallback] of v.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-)?/g)) {
        if (!name) continue;
        if (isWorkerOwnVariable(name))
          throw new Error(`\${${name}} is the worker's own and is never given to MCP servers; give the server a variable of its own`);
        if (!fallback && !isMcpOfferedVariable(name, env))
          throw new Error(
            `\${${name}} is not offered to MCP servers on this worker: list it in the worker's FAHEEM_MCP_ENV (comma-separated names), or give it as FAHEEM_SECRET_${name}`,
          );
      }
      out[k] = expandEnv(v, offered);
    } catch (err) {
      throw new Error(`${what} ${k}: ${errorMessage(err)}`);
    }
  }
  return out;
}

function contentText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${block.data.length} bytes base64]`;
    case 'resource':
      return 'text' in block.resource ? block.resource.text : `[resource: ${block.resource.uri}]`;
    case 'resource_link':
      return `[resource link: ${block.uri}]`;
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

type RawCallResult = Awaited<ReturnType<Client['callTool']>>;

function resultText(result: RawCallResult): string {
  let text: string;
  if ('content' in result && Array.isArray(result.content) && result.content.length > 0) {
    text = result.content.map(contentText).join('\n');
  } else if ('structuredContent' in result && result.structuredContent !== undefined) {
    text = JSON.stringify(result.structuredContent);
  } else if ('toolResult' in result && result.toolResult !== undefined) {
    // Servers on the 2024-10-07 protocol answer with toolResult instead of content.
    text = typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
  } else {
    text = '';
  }
  return text === '' ? '(no output)' : text;
}

function annotationsOf(tool: Tool): McpToolAnnotations {
  const a = tool.annotations ?? {};
  const out: McpToolAnnotations = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof a[key] === 'boolean') out[key] = a[key];
  }
  const title = a.title ?? tool.title;
  if (typeof title === 'string') out.title = title;
  return out;
}

export class McpManager {
  private readonly env: ChildEnv;
  private readonly sandbox: Sandbox | undefined;
  private readonly idleMs: number;
  private readonly connectTimeoutMs: number;
  private readonly entries = new Map<string, Entry>();

  constructor(options: McpManagerOptions) {
    this.env = options.env;
    this.sandbox = options.sandbox;
    this.idleMs = options.idleMs ?? 10 * 60_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  }

  /** Starts (lazily, once) every server of this conversation and lists their tools; a server that fails gives an entry in `errors`, the others still answer. */
  async listTools(
    conversationId: string,
    servers: McpServers,
    options: { signal?: AbortSignal; cwd?: string } = {},
  ): Promise<{ tools: McpToolInfo[]; errors: McpServerError[] }> {
    const { signal, cwd } = options;
    if (signal?.aborted) throw abortError('listing MCP tools', signal);
    const perServer = await Promise.all(
      Object.entries(servers).map(async ([name, config]) => {
        try {
          return { name, tools: await this.listServerTools(conversationId, name, config, cwd, signal) };
        } catch (err) {
          if (signal?.aborted) throw abortError('listing MCP tools', signal);
          return { name, error: errorMessage(err) };
        }
      }),
    );
    const tools: McpToolInfo[] = [];
    const errors: McpServerError[] = [];
    const taken = new Map<string, string>();
    for (const entry of perServer) {
      if (entry.tools === undefined) {
        errors.push({ server: entry.name, message: entry.error });
        continue;
      }
      for (const tool of entry.tools) {
        const exposed = mcpToolName(entry.name, tool.name);
        const owner = taken.get(exposed);
        if (owner) {
          errors.push({ server: entry.name, message: `tool "${tool.name}" was left out: its name ${exposed} is already used by ${owner}` });
          continue;
        }
        taken.set(exposed, `tool "${tool.name}" of server "${entry.name}"`);
        tools.push({
          name: exposed,
          server: entry.name,
          tool: tool.name,
          description: tool.description ?? '',
          inputSchema: (tool.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
          annotations: annotationsOf(tool),
        });
      }
    }
    return { tools, errors };
  }

  /** Calls one tool; starts the server if needed. Failures come back as isError results; an abort rejects with name 'AbortError'. */
  async callTool(
    conversationId: string,
    servers: McpServers,
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; cwd?: string; timeoutMs?: number } = {},
  ): Promise<McpCallResult> {
    const { signal, cwd, timeoutMs } = options;
    const what = `MCP tool "${tool}" of server "${server}"`;
    if (signal?.aborted) throw abortError(what, signal);
    const config = Object.hasOwn(servers, server) ? servers[server] : undefined;
    if (!config) {
      const known = Object.keys(servers);
      return {
        isError: true,
        content: `No MCP server named "${server}" is configured for this conversation${known.length ? ` (configured: ${known.join(', ')})` : ''}.`,
      };
    }
    let conn: Connection;
    try {
      conn = await abortable(this.connection(conversationId, server, config, cwd), signal, what);
    } catch (err) {
      if (signal?.aborted) throw abortError(what, signal);
      return { isError: true, content: errorMessage(err) };
    }
    try {
      const result = await this.use(conn, () =>
        conn.client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          ...(timeoutMs !== undefined && { timeout: timeoutMs }),
        }),
      );
      return { content: resultText(result), isError: result.isError === true };
    } catch (err) {
      if (signal?.aborted) throw abortError(what, signal);
      const { broken, note } = await this.afterFailure(conn, err);
      const why = isTimeout(err) ? `no answer within ${duration(timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS)}` : errorMessage(err);
      const tail = broken || isTimeout(err) ? stderrSuffix(conn.stderr) : '';
      return { isError: true, content: `Calling tool "${tool}" on MCP server "${server}" failed: ${why}${note}${tail}` };
    }
  }

  async closeConversation(conversationId: string): Promise<void> {
    const closing = [...this.entries].filter(([, e]) => e.conversationId === conversationId).map(([key, e]) => this.closeEntry(key, e));
    await Promise.all(closing);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.entries].map(([key, e]) => this.closeEntry(key, e)));
  }

  private async listServerTools(
    conversationId: string,
    name: string,
    config: McpServer,
    cwd: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Tool[]> {
    const conn = await abortable(this.connection(conversationId, name, config, cwd), signal, 'listing MCP tools');
    if (!conn.client.getServerCapabilities()?.tools) return [];
    try {
      return await this.use(conn, async () => {
        const tools: Tool[] = [];
        const seen = new Set<string>();
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES; page++) {
          const result = await conn.client.listTools(cursor === undefined ? undefined : { cursor }, {
            signal,
            timeout: this.connectTimeoutMs,
          });
          tools.push(...result.tools);
          cursor = result.nextCursor;
          if (cursor === undefined || seen.has(cursor)) break;
          seen.add(cursor);
        }
        // Tools that can only run as tasks cannot be called through callTool; the model must not see them.
        return tools.filter((t) => t.execution?.taskSupport !== 'required');
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const { broken, note } = await this.afterFailure(conn, err);
      const why = isTimeout(err) ? `no answer within ${duration(this.connectTimeoutMs)}` : errorMessage(err);
      throw new Error(
        `listing the tools of ${describeServer(name, config)} failed: ${why}${note}${broken ? stderrSuffix(conn.stderr) : ''}`,
      );
    }
  }

  /** After a failed request: drop a connection that is gone or unusable, so the next use starts afresh. */
  private async afterFailure(conn: Connection, err: unknown): Promise<{ broken: boolean; note: string }> {
    // The transport closed under us: for stdio, the server exited.
    const exited = conn.closed;
    // Over HTTP a failed request (server restarted, session gone) brings no close event, only a non-protocol error.
    const broken = exited || !isMcpError(err);
    if (!broken) return { broken, note: '' };
    await this.drop(conn);
    if (exited) {
      await conn.stderr?.ended();
      return { broken, note: ' (the server has stopped; it will be started again on the next call)' };
    }
    return { broken, note: ' (the connection was dropped; a new one will be made on the next call)' };
  }

  /** The live connection for this conversation, server and config, started if there is none. */
  private connection(conversationId: string, server: string, config: McpServer, cwd: string | undefined): Promise<Connection> {
    const childCwd = 'command' in config ? (config.cwd ? path.resolve(cwd ?? process.cwd(), config.cwd) : cwd) : undefined;
    const key = stableJson({ conversationId, server, config, cwd: childCwd });
    let entry = this.entries.get(key);
    if (entry?.conn?.closed) {
      this.entries.delete(key);
      entry = undefined;
    }
    if (entry) return entry.promise;
    // A changed config replaces the old connection of the same server.
    for (const [k, e] of this.entries) {
      if (e.conversationId === conversationId && e.server === server) void this.closeEntry(k, e);
    }
    const promise = this.start(key, server, config, childCwd, cwd);
    const created: Entry = { conversationId, server, promise };
    this.entries.set(key, created);
    promise.then(
      (conn) => {
        created.conn = conn;
      },
      () => {
        // A failed start is not remembered: the next use tries again.
        if (this.entries.get(key) === created) this.entries.delete(key);
      },
    );
    return promise;
  }

  private async start(
    key: string,
    server: string,
    config: McpServer,
    cwd: string | undefined,
    workspace: string | undefined,
  ): Promise<Connection> {
    const label = describeServer(server, config);
    const verb = 'command' in config ? 'start' : 'connect to';
    let transport: Transport;
    let stderr: StderrTail | undefined;
    // A sandboxed server with no workspace gets a folder of its own, removed when it closes.
    let scratch: string | undefined;
    const removeScratch = () => (scratch ? rm(scratch, { recursive: true, force: true }).catch(() => undefined) : Promise.resolve());
    const { Client, StdioClientTransport, getDefaultEnvironment, StreamableHTTPClientTransport } = await loadSdk();
    try {
      if ('command' in config) {
        const env = expandValues(config.env, this.env, 'env');
        // What commands start from (the allowlist) plus what the config asks for: the worker's secrets stay out.
        const base = { ...getDefaultEnvironment(), ...commandBaseEnv(this.env), ...env };
        // Sandboxed like the conversation's commands: its workspace is the one writable directory.
        const ws = this.sandbox ? (workspace ?? (scratch = await mkdtemp(path.join(os.tmpdir(), 'faheem-mcp-')))) : undefined;
        const run = sandboxedCommand(
          this.sandbox,
          { workspace: ws ?? '/', ...(cwd ? { cwd } : {}), hide: this.sandbox ? hiddenDirs(this.env) : [], newSession: true },
          config.command,
          config.args ?? [],
          base,
        );
        const stdio = new StdioClientTransport({
          command: run.file,
          args: run.args,
          env: run.env,
          cwd,
          stderr: 'pipe',
        });
        stderr = captureStderr(stdio.stderr);
        transport = stdio;
      } else {
        const headers = expandValues(config.headers, this.env, 'header');
        transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
      }
    } catch (err) {
      await removeScratch();
      throw new Error(`could not ${verb} ${label}: ${errorMessage(err)}`);
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const conn: Connection = { key, server, client, transport, stderr, closed: false, busy: 0, idleTimer: undefined };
    // Set before connecting so that no crash, however early, goes unnoticed.
    client.onclose = () => {
      conn.closed = true;
      clearTimeout(conn.idleTimer);
      const entry = this.entries.get(key);
      if (entry?.conn === conn) this.entries.delete(key);
      void removeScratch();
    };
    // Errors also surface on the request that hit them; without a handler the SDK would stay silent anyway.
    client.onerror = () => undefined;
    try {
      await client.connect(transport, { timeout: this.connectTimeoutMs });
    } catch (err) {
      await client.close().catch(() => undefined);
      await stderr?.ended();
      const why = isTimeout(err) ? `no answer to "initialize" within ${duration(this.connectTimeoutMs)}` : errorMessage(err);
      throw new Error(`could not ${verb} ${label}: ${why}${stderrSuffix(stderr)}`);
    }
    this.touch(conn);
    return conn;
  }

  private async use<T>(conn: Connection, fn: () => Promise<T>): Promise<T> {
    conn.busy++;
    try {
      return await fn();
    } finally {
      conn.busy--;
      this.touch(conn);
    }
  }

  private touch(conn: Connection): void {
    clearTimeout(conn.idleTimer);
    if (conn.closed) return;
    conn.idleTimer = setTimeout(() => {
      if (conn.busy > 0) this.touch(conn);
      else void this.drop(conn);
    }, this.idleMs);
    // An idle connection must not keep the worker alive.
    conn.idleTimer.unref();
  }

  private async closeEntry(key: string, entry: Entry): Promise<void> {
    if (this.entries.get(key) === entry) this.entries.delete(key);
    let conn: Connection;
    try {
      conn = await entry.promise;
    } catch {
      return;
    }
    await this.drop(conn);
  }

  private async drop(conn: Connection): Promise<void> {
    const entry = this.entries.get(conn.key);
    if (entry?.conn === conn) this.entries.delete(conn.key);
    clearTimeout(conn.idleTimer);
    const wasClosed = conn.closed;
    conn.closed = true;
    if (wasClosed) return;
    // Tell an HTTP server the session is over, so it frees it; a dead server must not hold us up.
    if (sdk && conn.transport instanceof sdk.StreamableHTTPClientTransport) {
      await Promise.race([conn.transport.terminateSession().catch(() => undefined), sleep(CLOSE_SESSION_MS)]);
    }
    await conn.client.close().catch(() => undefined);
  }
}
