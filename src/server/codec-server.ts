// Temporal's codec server protocol over node:http, so the Web UI (and `temporal … --codec-endpoint`)
// can show encrypted conversations to whoever runs this with the key: `POST /encode` and
// `POST /decode` with `{ "payloads": [{ "metadata": { key: base64 }, "data": base64 }] }`, answered
// in the same shape. The browser calls it directly, so it answers CORS (with the preflight) for the
// Web UI's origins only; with a token, every request needs `Authorization: Bearer <token>`.
import { HttpError, InvalidRequestError, ServerStartError } from '../errors.js';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';

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
  /** Required as `Authorization: Bearer <token>` when set. */
  token?: string;
  /** Origins allowed to call from a browser (CORS); default the dev server's Web UI. */
  uiOrigins?: readonly string[];
}

export interface CodecServer {
  /** e.g. http://127.0.0.1:8081 — what `--ui-codec-endpoint` takes. */
  url: string;
  port: number;
  close(): Promise<void>;
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

/** Starts the codec server; resolves once it listens. */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const origins = new Set((options.uiOrigins ?? DEFAULT_UI_ORIGINS).map(normalizeOrigin));
  const expected = options.token ? digest(`Bearer ${options.token}`) : undefined;
  const host = options.host ?? '127.0.0.1';
  const loopback = ['127.0.0.1', '::1', 'localhost'].includes(host);
  // Anyone who can reach it could decrypt: off this machine only with a token.
  if (!loopback && !options.token)
    throw new InvalidRequestError(
      `the codec server listens on ${host} only with a token (--token or FAHEEM_CODEC_TOKEN): it decrypts for whoever asks`,
    );

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
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
      const path = new URL(req.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
      const op = path.endsWith('/encode') ? 'encode' : path.endsWith('/decode') ? 'decode' : undefined;

      if (req.method === 'OPTIONS') {
        // The preflight carries no Authorization; the request that follows must.
        if (!allowed)
          return send(res, 403, {
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
      if (origin !== undefined && !allowed) return send(res, 403, { error: `origin ${origin} is not allowed` });
      const hostHeader = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
      if (loopback && hostHeader && !['127.0.0.1', '::1', 'localhost'].includes(hostHeader))
        return send(res, 403, { error: `host ${hostHeader} is not this machine` });
      if (expected) {
        const got = digest(req.headers.authorization ?? '');
        if (!timingSafeEqual(got, expected)) return send(res, 401, { error: 'missing or wrong Authorization: Bearer <token>' });
      }
      if (req.method === 'GET' && (path === '' || path === '/health'))
        return send(res, 200, { ok: true, endpoints: ['/encode', '/decode'] });
      if (!op) return send(res, 404, { error: 'POST /encode or /decode' });
      if (req.method !== 'POST') return send(res, 405, { error: `use POST for /${op}` });

      let body: { payloads?: unknown };
      try {
        body = JSON.parse(await readBody(req)) as { payloads?: unknown };
      } catch (err) {
        if (err instanceof HttpError) throw err;
        throw new HttpError(400, 'the body is not JSON');
      }
      if (!body || !Array.isArray(body.payloads)) throw new HttpError(400, 'expected {"payloads": [...]}');
      const payloads = (body.payloads as JsonPayload[]).map(fromJson);
      let out: Payload[];
      try {
        out = op === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
      } catch (err) {
        // Unknown key id, wrong key, altered data: say which, never answer with garbage.
        throw new HttpError(422, (err as Error).message);
      }
      send(res, 200, { payloads: out.map(toJson) });
    })().catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      if (!res.headersSent) send(res, status, { error: (err as Error).message ?? String(err) });
      else res.end();
    });
  });

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
  return {
    url: `http://${shownHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
