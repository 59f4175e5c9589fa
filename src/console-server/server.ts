// `faheem console`: a plain node:http server for people. It talks to Temporal only (the CLI's
// connection and codec: keys stay in this process), serves the prebuilt page from dist/console/ and
// a small JSON API the page calls with the token in a header.
import type { Client } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NoWorkerError } from '../errors.js';
import { DEFAULTS } from '../types.js';
import type { ConversationEvent, ConversationState } from '../types.js';
import type { LiveDelta } from '../live/types.js';
import { StateCache, attach, childTree, listConversations, shownModel } from './conversations.js';
import { startConversation } from '../start-conversation.js';
import { clientSettings, toolTaskQueue, taskQueue } from '../connection.js';
import type { Settings } from '../environment.js';
import { workerWarnings, workspaceProblem } from '../cli/presence.js';
import {
  HttpError,
  MAX_BODY_BYTES,
  actionBodies,
  conversationId,
  errorAnswer,
  followQuery,
  isAction,
  listQuery,
  newConversationBody,
  parseOr400,
  type ActionName,
} from './requests.js';
import {
  SECURITY_HEADERS,
  TOKEN_HEADER,
  checkToken,
  cookieValue,
  hostAllowed,
  newToken,
  originAllowed,
  pageCookieName,
  urlHost,
} from './security.js';
import { withTimeout } from '../timeout.js';

/** How the console is started. */
export interface ConsoleOptions {
  /** A client made like the CLI's (`connectClient()`): its data converter decodes the payloads. */
  client: Client;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 8234; 0 picks a free one). */
  port?: number;
  /** The Temporal Web UI the page links to (default TEMPORAL_UI_URL, else http://localhost:8233). */
  temporalUiUrl?: string;
  /** The settings it runs with: TEMPORAL_UI_URL and the task queues (default: this process's, read once at start). */
  settings?: Settings;
  /** Where index.html, app.js and app.css are (default: dist/console/ beside this module). */
  assetsDir?: string;
  /** How long an action waits for a worker to answer before saying none did (default 20 s). */
  answerTimeoutMs?: number;
  /** The scheme browsers reach the console with: `http` (default), or `https` behind a TLS proxy (the POST Origin check). */
  scheme?: 'http' | 'https';
}

/** A running console. */
export interface ConsoleServer {
  /** The URL to open, with the token: `http://HOST:PORT/?token=…`. */
  url: string;
  /** The URL without the token. */
  origin: string;
  token: string;
  host: string;
  port: number;
  /** Follow streams open now (each ends when its browser goes away). */
  followers(): number;
  close(): Promise<void>;
}

/** How often a follow stream asks whether its conversation has closed. */
const CLOSED_CHECK_MS = 3_000;

/** The default port of `faheem console`. */
export const DEFAULT_CONSOLE_PORT = 8234;

const ASSETS: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/app.css': 'app.css',
};
const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** dist/console/ holds the page: beside this module when compiled, else the repository's dist/. */
function defaultAssetsDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  if (existsSync(path.join(here, 'index.html'))) return here;
  return path.resolve(here, '..', '..', 'dist', 'console');
}

/** Starts the console; resolves once it listens. */
export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const client = options.client;
  const host = options.host ?? '127.0.0.1';
  const token = newToken();
  // Unlocks the page (which holds nothing secret) on a reload once the token has left the address
  // bar; never the API. A cookie goes to every port of the host, so it is not the token.
  const pageKey = newToken();
  const scheme = options.scheme ?? 'http';
  const assetsDir = options.assetsDir ?? defaultAssetsDir();
  const settings = options.settings ?? clientSettings();
  const uiBase = (options.temporalUiUrl ?? (settings.TEMPORAL_UI_URL || 'http://localhost:8233')).replace(/\/+$/, '');
  const answerTimeoutMs = options.answerTimeoutMs ?? 20_000;
  const states = new StateCache(client);
  const namespace = client.options.namespace;
  let port = options.port ?? DEFAULT_CONSOLE_PORT;
  const streams = new Set<AbortController>();

  const temporalUrl = (id: string) => `${uiBase}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(id)}`;

  /** An action's promise, or a NoWorkerError when no worker answered in time. */
  async function answered<T>(promise: Promise<T>): Promise<T> {
    return withTimeout(
      promise,
      answerTimeoutMs,
      () => new NoWorkerError(`no worker answered within ${answerTimeoutMs / 1000} s; is \`faheem worker\` running?`),
    );
  }

  async function detail(id: string) {
    const conversation = await attach(client, id);
    const described = await client.workflow.getHandle(id).describe();
    const closed = described.status.name !== 'RUNNING';
    let state: ConversationState | undefined;
    let stateError: string | undefined;
    try {
      state = await answered(conversation.state());
      states.set(id, `${described.runId}:${described.historyLength}`, { cost: state.metrics.accumulatedCost, model: state.model ?? '' });
    } catch (err) {
      stateError = errorAnswer(err).error;
    }
    const tree = await childTree(client, id, 3, states).catch(() => []);
    return {
      id,
      closed,
      temporalUrl: temporalUrl(id),
      tree,
      ...(stateError ? { stateError } : {}),
      state: state
        ? {
            status: state.status,
            closed: state.closed || closed,
            iterations: state.iterations,
            runNumber: state.runNumber,
            events: state.events,
            pendingMessages: state.pendingMessages,
            metrics: {
              accumulatedCost: state.metrics.accumulatedCost,
              promptTokens: state.metrics.promptTokens,
              completionTokens: state.metrics.completionTokens,
              cacheReadTokens: state.metrics.cacheReadTokens,
              cacheWriteTokens: state.metrics.cacheWriteTokens ?? 0,
              llmCalls: state.metrics.llmCalls,
            },
            lastError: state.lastError,
            workspace: state.workspace,
            model: state.model,
            pendingActions: state.pendingActions,
            children: state.children ?? [],
            parentId: state.parentId ?? null,
            waitingForHost: state.waitingForHost ?? null,
          }
        : {
            status: String(described.searchAttributes.ConversationStatus?.[0] ?? 'unknown'),
            closed,
            model:
              shownModel(
                described.searchAttributes.ConversationModel?.[0] === undefined
                  ? null
                  : String(described.searchAttributes.ConversationModel[0]),
                undefined,
              ) ?? '',
          },
    };
  }

  async function act(id: string, action: ActionName, body: unknown): Promise<unknown> {
    const conversation = await attach(client, id);
    switch (action) {
      case 'pause': {
        const b = parseOr400(actionBodies.pause, body);
        await conversation.pause({ now: b.now ?? false });
        return { ok: true };
      }
      case 'resume': {
        parseOr400(actionBodies.resume, body);
        return { ok: true, ...(await answered(conversation.resume())) };
      }
      case 'send': {
        const b = parseOr400(actionBodies.send, body);
        const index = await answered(conversation.sendMessage(b.text));
        if (b.run) await answered(conversation.resume());
        return { ok: true, index };
      }
      case 'approve': {
        parseOr400(actionBodies.approve, body);
        return { ok: true, approved: await answered(conversation.approve()) };
      }
      case 'reject': {
        const b = parseOr400(actionBodies.reject, body);
        return { ok: true, rejected: await answered(conversation.reject(b.reason ?? '')) };
      }
      case 'close': {
        parseOr400(actionBodies.close, body);
        await conversation.close();
        return { ok: true };
      }
    }
  }

  /**
   * The "New conversation" form: checked (zod), the workspace looked at on this machine when the
   * tools run here (as `faheem start` does), then started through the CLI's own path.
   */
  async function create(body: unknown): Promise<{ id: string; warnings: string[] }> {
    const form = parseOr400(newConversationBody, body);
    const toolQueue = toolTaskQueue(settings);
    const warnings: string[] = [];
    const problem = await workspaceProblem(form.workspace);
    if (problem) {
      // The tools run on another host: the workspace may be there.
      if (toolQueue.endsWith(`@${os.hostname()}`)) throw new HttpError(400, `workspace ${problem}: create it or choose another folder`);
      warnings.push(`workspace ${problem} on this machine; the host behind the tool queue ${toolQueue} must have it`);
    }
    const present = workerWarnings(client, { taskQueue: taskQueue(settings), toolTaskQueue: toolQueue });
    const conversation = await startConversation(client, {
      message: form.message,
      workspace: form.workspace,
      ...(form.id ? { id: form.id } : {}),
      ...(form.model ? { model: form.model } : {}),
      confirm: form.confirm,
      maxIterations: DEFAULTS.maxIterations,
    });
    warnings.push(...(await present).map((w) => w.replace(/^warning: /, '')));
    return { id: conversation.id, warnings };
  }

  /**
   * Relays the conversation's events (and live lines) as NDJSON until the browser goes away or the
   * conversation closes (checked every few seconds with describe(), which needs no worker): then the
   * events that are left, and an end line, so the page stops asking.
   */
  async function follow(res: http.ServerResponse, id: string, query: URLSearchParams): Promise<void> {
    const q = parseOr400(followQuery, Object.fromEntries(query));
    const conversation = await attach(client, id);
    const abort = new AbortController();
    streams.add(abort);
    const stop = () => abort.abort();
    res.on('close', stop);
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    let next = q.from;
    const write = (item: ConversationEvent | LiveDelta) => {
      if ('index' in item) next = Math.max(next, item.index + 1);
      res.write(`${JSON.stringify(item)}\n`);
    };
    // A blank line now and then: the browser's reader ignores it, a dead connection shows up.
    let closed = await conversation.isClosed().catch(() => false);
    const beat = setInterval(() => res.write('\n'), 15_000);
    const watch = setInterval(() => {
      void conversation.isClosed().then(
        (c) => {
          if (c) {
            closed = true;
            abort.abort();
          }
        },
        () => undefined,
      );
    }, CLOSED_CHECK_MS);
    const aborted = new Promise<'aborted'>((resolve) => abort.signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
    let items: AsyncGenerator<ConversationEvent | LiveDelta> | undefined;
    try {
      if (!closed) {
        items = conversation.follow({
          fromIndex: q.from,
          live: true,
          ...(q.liveFrom !== undefined ? { liveFrom: q.liveFrom } : {}),
          signal: abort.signal,
        });
        for (;;) {
          const step = await Promise.race([items.next(), aborted]);
          if (step === 'aborted' || step.done) break;
          write(step.value);
        }
      }
      if (closed && !res.destroyed) {
        // A closed conversation does not change: what is left of its events, and the end.
        for (const e of await conversation.events(next)) write(e);
        res.write(`${JSON.stringify({ end: true, closed: true })}\n`);
      }
    } catch (err) {
      if (!res.destroyed) res.write(`${JSON.stringify({ end: true, error: errorAnswer(err).error })}\n`);
    } finally {
      clearInterval(beat);
      clearInterval(watch);
      abort.abort();
      streams.delete(abort);
      // Ends the generator once its pending wait settles (at once when it honours the signal).
      if (items) void items.return(undefined).catch(() => undefined);
      res.end();
    }
  }

  async function readJson(req: http.IncomingMessage): Promise<unknown> {
    const type = String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (type !== 'application/json') throw new HttpError(415, 'send Content-Type: application/json');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return {};
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new HttpError(400, 'the body is not JSON');
    }
  }

  function json(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    // A body refused unread (too large) leaves the connection unusable: close it after the answer.
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...(status === 413 ? { Connection: 'close' } : {}) });
    res.end(JSON.stringify(body));
  }

  async function serveAsset(res: http.ServerResponse, name: string): Promise<void> {
    let body: Buffer;
    try {
      body = await readFile(path.join(assetsDir, name));
    } catch {
      throw new HttpError(500, `the console's page is missing (${path.join(assetsDir, name)}); run \`npm run build\``);
    }
    res.writeHead(200, { 'Content-Type': TYPES[name] ?? 'application/octet-stream' });
    res.end(body);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    if (!hostAllowed(req.headers.host, { host, port }, [os.hostname()])) throw new HttpError(403, 'unexpected Host header');
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const method = req.method ?? 'GET';
    const asset = ASSETS[url.pathname];
    if (asset) {
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'method not allowed');
      // The page itself needs the token (it is in the URL printed); its script and style hold nothing secret.
      if (asset === 'index.html') {
        const check = checkToken(url.searchParams.get('token'), token);
        const cookie = cookieValue(req.headers.cookie, pageCookieName(port));
        const reload = check === 'missing' && cookie !== undefined && checkToken(cookie, pageKey) === 'ok';
        if (check === 'missing' && !reload) throw new HttpError(401, 'open the URL `faheem console` printed: it carries the token');
        if (check === 'wrong') throw new HttpError(403, 'wrong token: open the URL `faheem console` printed');
        if (check === 'ok')
          res.setHeader(
            'Set-Cookie',
            `${pageCookieName(port)}=${pageKey}; Path=/; HttpOnly; SameSite=Strict${scheme === 'https' ? '; Secure' : ''}`,
          );
      }
      return serveAsset(res, asset);
    }
    if (!url.pathname.startsWith('/api/')) throw new HttpError(404, 'not found');
    const check = checkToken(req.headers[TOKEN_HEADER], token);
    if (check === 'missing') throw new HttpError(401, `missing ${TOKEN_HEADER} header`);
    if (check === 'wrong') throw new HttpError(403, `wrong ${TOKEN_HEADER}`);

    const parts = url.pathname
      .slice('/api/'.length)
      .split('/')
      .map((p) => {
        try {
          return decodeURIComponent(p);
        } catch {
          throw new HttpError(400, 'malformed path');
        }
      });
    if (parts.length === 1 && parts[0] === 'defaults') {
      if (method !== 'GET') throw new HttpError(405, 'method not allowed');
      // What the form starts with: this machine's folder the console was started in.
      return json(res, 200, { workspace: process.cwd(), confirm: 'never' });
    }
    if (parts[0] !== 'conversations') throw new HttpError(404, 'not found');
    if (method === 'POST') {
      if (!originAllowed({ origin: req.headers.origin, host: req.headers.host, 'sec-fetch-site': header(req, 'sec-fetch-site') }, scheme))
        throw new HttpError(403, 'cross-origin request refused');
      if (parts.length === 1) return json(res, 201, await create(await readJson(req)));
      if (parts.length !== 3 || !isAction(parts[2]!)) throw new HttpError(404, 'not found');
      const id = parseOr400(conversationId, parts[1]);
      const body = await readJson(req);
      return json(res, 200, await act(id, parts[2], body));
    }
    if (method !== 'GET') throw new HttpError(405, 'method not allowed');
    if (parts.length === 1) {
      const q = parseOr400(listQuery, Object.fromEntries(url.searchParams));
      const page = await listConversations(client, {
        pageSize: q.pageSize,
        ...(q.status ? { status: q.status } : {}),
        ...(q.pageToken ? { pageToken: q.pageToken } : {}),
        ...(q.q ? { search: q.q } : {}),
        states,
      });
      return json(res, 200, page);
    }
    const id = parseOr400(conversationId, parts[1]);
    if (parts.length === 2) return json(res, 200, await detail(id));
    if (parts.length === 3 && parts[2] === 'follow') return follow(res, id, url.searchParams);
    throw new HttpError(404, 'not found');
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const { status, error } = errorAnswer(err);
      json(res, status, { error });
    });
  });
  // Slow or stuck clients do not hold sockets for ever. requestTimeout bounds receiving a request
  // (bodies are at most MAX_BODY_BYTES), not the answer: follow streams stay open as long as they run.
  server.headersTimeout = 20_000;
  server.requestTimeout = 120_000;
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : urlHost(host);
  const origin = `http://${shownHost}:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    host,
    port,
    followers: () => streams.size,
    async close() {
      for (const s of streams) s.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
