// The console's routes: which request is the page, which is the API and which handler answers it;
// the token, cookie, Host and Origin checks (security.ts) come first.
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { listConversations } from './conversations.js';
import { serveImage } from './images.js';
import { act, create, detail, follow, type HandlerContext } from './handlers.js';
import { HttpError, MAX_BODY_BYTES, conversationId, isAction, listQuery, parseOr400 } from './requests.js';
import { SECURITY_HEADERS, TOKEN_HEADER, checkToken, cookieValue, hostAllowed, originAllowed, pageCookieName } from './security.js';

/** What the routes check requests against, and the handlers they call. */
export interface RouteContext {
  host: string;
  /** The port listened on (known once listening, when 0 was asked for). */
  port: number;
  /** The API's token (and the page's, in its URL). */
  token: string;
  /** The page's cookie value: unlocks the page on a reload, never the API. */
  pageKey: string;
  scheme: 'http' | 'https';
  /** Where index.html, app.js, app.css and favicon.svg are. */
  assetsDir: string;
  handlers: HandlerContext;
}

const ASSETS: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/app.css': 'app.css',
  // The page names its icon; a browser that asks for /favicon.ico anyway gets the same (not a 404).
  '/favicon.svg': 'favicon.svg',
  '/favicon.ico': 'favicon.svg',
};
const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** Answers one request: the page (with its token or cookie) or the API (with the token header). */
export async function route(ctx: RouteContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
  if (!hostAllowed(req.headers.host, { host: ctx.host, port: ctx.port }, [os.hostname()]))
    throw new HttpError(403, 'unexpected Host header');
  const url = new URL(req.url ?? '/', 'http://console.invalid');
  const method = req.method ?? 'GET';
  const asset = ASSETS[url.pathname];
  if (asset) return servePage(ctx, req, res, url, method, asset);
  if (!url.pathname.startsWith('/api/')) throw new HttpError(404, 'not found');
  const check = checkToken(req.headers[TOKEN_HEADER], ctx.token);
  if (check === 'missing') throw new HttpError(401, `missing ${TOKEN_HEADER} header`);
  if (check === 'wrong') throw new HttpError(403, `wrong ${TOKEN_HEADER}`);
  return routeApi(ctx, req, res, url, method);
}

/** The page's files. The page itself needs the token (it is in the URL printed) or the cookie a first visit set; its script and style hold nothing secret. */
async function servePage(
  ctx: RouteContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  method: string,
  asset: string,
): Promise<void> {
  const { port, token, pageKey, scheme } = ctx;
  if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'method not allowed');
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
  return serveAsset(res, ctx.assetsDir, asset);
}

/** The API (its token already checked): `/api/defaults` and `/api/conversations[/ID[/ACTION|follow|images/SHA256]]`. */
async function routeApi(ctx: RouteContext, req: http.IncomingMessage, res: http.ServerResponse, url: URL, method: string): Promise<void> {
  const { handlers } = ctx;
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
    if (!originAllowed({ origin: req.headers.origin, host: req.headers.host, 'sec-fetch-site': header(req, 'sec-fetch-site') }, ctx.scheme))
      throw new HttpError(403, 'cross-origin request refused');
    if (parts.length === 1) return json(res, 201, await create(handlers, await readJson(req)));
    if (parts.length !== 3 || !isAction(parts[2]!)) throw new HttpError(404, 'not found');
    const id = parseOr400(conversationId, parts[1]);
    const body = await readJson(req);
    return json(res, 200, await act(handlers, id, parts[2], body));
  }
  if (method !== 'GET') throw new HttpError(405, 'method not allowed');
  if (parts.length === 1) {
    const q = parseOr400(listQuery, Object.fromEntries(url.searchParams));
    const page = await listConversations(handlers.client, {
      pageSize: q.pageSize,
      ...(q.status ? { status: q.status } : {}),
      ...(q.tenant ? { tenant: q.tenant } : {}),
      ...(q.pageToken ? { pageToken: q.pageToken } : {}),
      ...(q.q ? { search: q.q } : {}),
      states: handlers.states,
    });
    return json(res, 200, page);
  }
  const id = parseOr400(conversationId, parts[1]);
  if (parts.length === 2) return json(res, 200, await detail(handlers, id));
  if (parts.length === 3 && parts[2] === 'follow') return follow(handlers, res, id, url.searchParams);
  if (parts.length === 4 && parts[2] === 'images') return serveImage(handlers, res, id, parts[3]!);
  throw new HttpError(404, 'not found');
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

/** Answers `body` as JSON (nothing more once a stream has begun). */
export function json(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // A body refused unread (too large) leaves the connection unusable: close it after the answer.
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...(status === 413 ? { Connection: 'close' } : {}) });
  res.end(JSON.stringify(body));
}

async function serveAsset(res: http.ServerResponse, assetsDir: string, name: string): Promise<void> {
  let body: Buffer;
  try {
    body = await readFile(path.join(assetsDir, name));
  } catch {
    throw new HttpError(500, `the console's page is missing (${path.join(assetsDir, name)}); run \`npm run build\``);
  }
  res.writeHead(200, { 'Content-Type': TYPES[name] ?? 'application/octet-stream' });
  res.end(body);
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
