// `faheem console`: a plain node:http server for people. It talks to Temporal only (the CLI's
// connection and codec: keys stay in this process), serves the prebuilt page from dist/console/ and
// a small JSON API the page calls with the token in a header. routes.ts answers each request,
// handlers.ts does what the API's requests ask; this file starts and stops the server.
import type { Client } from '@temporalio/client';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientSettings } from '../connection.js';
import type { Settings } from '../environment.js';
import { connectionSettings } from '../settings/connection.js';
import { storeSettings } from '../settings/store.js';
import { readImage } from '../images/store.js';
import { StateCache } from './conversations.js';
import type { HandlerContext } from './handlers.js';
import { errorAnswer } from './requests.js';
import { json, route, type RouteContext } from './routes.js';
import { newToken, urlHost } from './security.js';

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

/** The default port of `faheem console`. */
export const DEFAULT_CONSOLE_PORT = 8234;

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
  const connection = connectionSettings(settings);
  const storage = storeSettings(settings);
  const uiBase = (options.temporalUiUrl ?? connection.temporalUiUrl).replace(/\/+$/, '');
  const answerTimeoutMs = options.answerTimeoutMs ?? 20_000;
  const states = new StateCache(client);
  const namespace = client.options.namespace;
  let port = options.port ?? DEFAULT_CONSOLE_PORT;
  const streams = new Set<AbortController>();

  const temporalUrl = (id: string) => `${uiBase}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(id)}`;
  const handlers: HandlerContext = {
    client,
    states,
    answerTimeoutMs,
    connection,
    readImage: (ref) => readImage(storage, ref),
    streams,
    temporalUrl,
  };
  const routes: RouteContext = { host, port, token, pageKey, scheme, assetsDir, handlers };

  const server = http.createServer((req, res) => {
    route(routes, req, res).catch((err: unknown) => {
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
  routes.port = port;
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
