// Temporal's codec server protocol over node:http, so the Web UI (and `temporal … --codec-endpoint`)
// can show encrypted conversations to whoever runs this with the key: `POST /encode` and
// `POST /decode` with `{ "payloads": [{ "metadata": { key: base64 }, "data": base64 }] }`, answered
// in the same shape. The browser calls it directly, so it answers CORS (with the preflight) for the
// Web UI's origins only. Every request needs the token, as `Authorization: Bearer <token>` (the
// `temporal` CLI's --codec-auth) or as the first path segment (`<url>/<token>/decode`: the Web UI
// cannot send a header of its own), checked before a byte of the body is read.
import { HttpError, InvalidRequestError, ServerStartError } from '../core/errors.js';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual, createHash, randomBytes } from 'node:crypto';
import { isEncrypted } from '../security/codec.js';
import { isLoopback } from './exposure.js';

export const DEFAULT_CODEC_PORT = 8081;
/** The dev server's Web UI, under both names the browser may use for it. */
export const DEFAULT_UI_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const ALLOWED_HEADERS = 'X-Namespace, Authorization, Content-Type';

export interface CodecServerOptions {
  codec: PayloadCodec;
  port?: number;
  /** Interface to listen on (default 127.0.0.1: the browser runs on this machine). */
  host?: string;
  /**
   * Required on every request, as `Authorization: Bearer <token>` or as the URL's first path
   * segment. Default: a fresh random one (see {@link CodecServer.token}).
   */
  token?: string;
  /** Origins allowed to call from a browser (CORS); default the dev server's Web UI. */
  uiOrigins?: readonly string[];
  /**
   * `/decode` refuses a payload that is not encrypted: with a key set, a plaintext payload in history
   * was not written by a key holder, and is not shown as if it had been decrypted. Default false:
   * such payloads pass through, as histories written before the key was set and search attributes
   * (never encrypted, and decoded by `temporal workflow show`) need.
   */
  strict?: boolean;
}

export interface CodecServer {
  /** e.g. http://127.0.0.1:8081 — what `temporal --codec-endpoint` takes, with `--codec-auth "Bearer <token>"`. */
  url: string;
  /** `url` with the token as its first path segment: what `--ui-codec-endpoint` takes (the Web UI sends no header of its own). */
  uiEndpoint: string;
  /** The token every request needs. */
  token: string;
  port: number;
  close(): Promise<void>;
}

/** A fresh codec token: 32 random bytes, base64url (safe in a URL path). */
export function newCodecToken(): string {
  return randomBytes(32).toString('base64url');
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** `http://localhost:8233/` → `http://localhost:8233`; throws on something that is not an origin. */
export function normalizeOrigin(origin: string): string {
  let u: URL;
  try {
    u = new URL(origin.trim());
  } catch {
    throw new InvalidRequestError(`"${origin}" is not an origin like http://localhost:8233`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidRequestError(`"${origin}" is not an http(s) origin`);
  return u.origin;
}

function fromJson(p: JsonPayload, i: number): Payload {
  if (p === null || typeof p !== 'object') throw new HttpError(400, `payloads[${i}] is not an object`);
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) {
    if (typeof v !== 'string') throw new HttpError(400, `payloads[${i}].metadata.${k} is not a base64 string`);
    metadata[k] = new Uint8Array(Buffer.from(v, 'base64'));
  }
  if (p.data !== undefined && typeof p.data !== 'string') throw new HttpError(400, `payloads[${i}].data is not a base64 string`);
  return { metadata, data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')) };
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]),
    ),
    data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** Whether `given` is the token, compared in constant time (digests of equal length). */
function sameToken(given: string, expected: Buffer): boolean {
  return timingSafeEqual(digest(given), expected);
}

/** Starts the codec server; resolves once it listens. */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const origins = new Set((options.uiOrigins ?? DEFAULT_UI_ORIGINS).map(normalizeOrigin));
  const token = options.token ?? newCodecToken();
  if (!/^[A-Za-z0-9._~-]{16,}$/.test(token))
    throw new InvalidRequestError(
      'the codec token must be at least 16 characters of A-Z, a-z, 0-9, ".", "_", "~" or "-" (it may go in a URL path)',
    );
  const expected = digest(token);
  const strict = options.strict ?? false;
  const host = options.host ?? '127.0.0.1';
  const loopback = isLoopback(host);

  const sendTo = (req: IncomingMessage, res: ServerResponse, status: number, body: unknown) => {
    // An answer given before the body was read (refused) closes the connection: the rest is never read.
    res.writeHead(status, { 'Content-Type': 'application/json', ...(req.complete ? {} : { Connection: 'close' }) });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    void (async () => {
      const origin = req.headers.origin;
      const allowed = origin !== undefined && origins.has(origin);
      if (allowed) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Credentials', 'true');
        res.setHeader('Vary', 'Origin');
      }
      const segments = new URL(req.url ?? '/', 'http://codec').pathname.split('/').filter((p) => p !== '');
      // The token as the first path segment (the Web UI's endpoint), else in the Authorization header.
      const pathToken = segments.length > 0 && sameToken(segments[0]!, expected);
      const rest = pathToken ? segments.slice(1) : segments;
      const path = rest.length ? `/${rest.join('/')}` : '';
      const op = path.endsWith('/encode') ? 'encode' : path.endsWith('/decode') ? 'decode' : undefined;
      const send = (status: number, body: unknown) => sendTo(req, res, status, body);

      if (req.method === 'OPTIONS') {
        // The preflight carries no Authorization; the request that follows must.
        if (!allowed)
          return send(403, {
            error: `origin ${origin ?? '(none)'} is not allowed; start the codec server with --ui-origin ${origin ?? '<origin>'}`,
          });
        res.writeHead(204, {
          'Access-Control-Allow-Methods': 'POST, OPTIONS',
          'Access-Control-Allow-Headers': ALLOWED_HEADERS,
          'Access-Control-Max-Age': '600',
        });
        return res.end();
      }
      // A browser page from another origin (or a DNS-rebound host name) is refused, not just left without CORS.
      if (origin !== undefined && !allowed) return send(403, { error: `origin ${origin} is not allowed` });
      const hostHeader = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
      if (loopback && hostHeader && !isLoopback(hostHeader)) return send(403, { error: `host ${hostHeader} is not this machine` });
      // Before the body: a request without the token is refused unread, whatever its size.
      const auth = req.headers.authorization ?? '';
      if (!pathToken && !(auth.startsWith('Bearer ') && sameToken(auth.slice('Bearer '.length), expected)))
        return send(401, {
          error: 'missing or wrong token: send Authorization: Bearer <token>, or put the token first in the path (<url>/<token>/decode)',
        });
      if (req.method === 'GET' && (path === '' || path === '/health')) return send(200, { ok: true, endpoints: ['/encode', '/decode'] });
      if (!op) return send(404, { error: 'POST /encode or /decode' });
      if (req.method !== 'POST') return send(405, { error: `use POST for /${op}` });

      let body: { payloads?: unknown };
      try {
        body = JSON.parse(await readBody(req)) as { payloads?: unknown };
      } catch (err) {
        if (err instanceof HttpError) throw err;
        throw new HttpError(400, 'the body is not JSON');
      }
      if (!body || !Array.isArray(body.payloads)) throw new HttpError(400, 'expected {"payloads": [...]}');
      const payloads = (body.payloads as JsonPayload[]).map(fromJson);
      if (op === 'decode' && strict) {
        const plain = payloads.findIndex((p) => !isEncrypted(p));
        if (plain >= 0)
          throw new HttpError(
            400,
            `payloads[${plain}] is not encrypted: with a key set, this codec server decodes encrypted payloads only ` +
              '(a plaintext one was not written by a key holder), as --strict asks. Start it without --strict to pass such payloads through ' +
              '(histories written before the key was set, search attributes)',
          );
      }
      let out: Payload[];
      try {
        out = op === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
      } catch (err) {
        // Unknown key id, wrong key, altered data: say which, never answer with garbage.
        throw new HttpError(422, (err as Error).message);
      }
      send(200, { payloads: out.map(toJson) });
    })().catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      if (!res.headersSent) sendTo(req, res, status, { error: (err as Error).message ?? String(err) });
      else res.end();
    });
  });
  // A client that trickles its request does not hold a socket for ever (answers are one round trip).
  server.headersTimeout = 20_000;
  server.requestTimeout = 120_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new ServerStartError(
              `the codec server cannot listen on ${host}:${options.port ?? DEFAULT_CODEC_PORT}: the port is taken (choose another: faheem codec-server --port, faheem server --codec-port)`,
            )
          : err,
      ),
    );
    server.listen(options.port ?? DEFAULT_CODEC_PORT, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}`;
  return {
    url,
    uiEndpoint: `${url}/${token}`,
    token,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
