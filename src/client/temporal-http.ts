// A few calls of Temporal's frontend HTTP API (the JSON form of the gRPC service, served by the
// frontend beside it: port 7243 next to 7233 by default). The quick CLI paths use it because a
// process that loads @temporalio/client (gRPC, protobufjs) spends ~0.2 CPU-s before its first call,
// ten times what the call costs. Plain node:http and JSON: nothing here loads the SDK.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { FaheemError } from '../core/errors.js';

/** The HTTP API of one namespace: `http://host:port` (no TLS, no API key: see quickEndpoint). */
export interface HttpApi {
  base: string;
  namespace: string;
  /** The Host header to send: the name `faheem server`'s frontend answers to (see HttpApiAccess); absent: the URL's. */
  host?: string;
}

/**
 * How to reach the HTTP API of a server `faheem server` started: its URL and the one Host name its
 * frontend answers to (Temporal's `frontend.httpAllowedHosts`). The name is random and ends in
 * `.invalid`, so no browser can send it (a page's request carries the page's idea of the host, and
 * a DNS-rebound one its own name): a web page cannot call the API. Kept in a file only the user
 * reads, under FAHEEM_HOME (which the sandbox hides).
 */
export interface HttpApiAccess {
  url: string;
  host: string;
}

/** Where the access of the server on gRPC port `port` is kept: `<FAHEEM_HOME>/server/http-api-<port>.json`. */
export function httpAccessFile(home: string, port: number): string {
  return path.join(home, 'server', `http-api-${port}.json`);
}

/** Writes the access file (its folder 0700, the file 0600, replaced whole). */
export function writeHttpAccess(home: string, port: number, access: HttpApiAccess): string {
  const file = httpAccessFile(home, port);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(access) + '\n', { mode: 0o600 });
  renameSync(temp, file);
  return file;
}

/** The access file's content, or undefined when it is missing or not what writeHttpAccess writes. */
export function readHttpAccess(home: string, port: number): HttpApiAccess | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(httpAccessFile(home, port), 'utf8'));
    if (isObject(parsed) && typeof parsed.url === 'string' && typeof parsed.host === 'string' && /^[a-z0-9.-]+$/.test(parsed.host)) {
      return { url: parsed.url, host: parsed.host };
    }
  } catch {
    // none, or unreadable: the gRPC path
  }
  return undefined;
}

/**
 * The HTTP API could not be used for this call: nothing reached a Temporal frontend (refused,
 * timed out, or the answer was not the API's). The caller goes the gRPC way instead.
 */
export class HttpApiUnavailable extends FaheemError {
  constructor(reason: string) {
    super('server_unreachable', `Temporal's HTTP API cannot be used: ${reason}`);
  }
}

/** A Temporal payload as the HTTP API writes it with `noPayloadShorthand` (base64 fields). */
export interface WirePayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** An answer of the API: the HTTP status and the JSON body (an object), or the API's error. */
export interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
}

// One kept-alive connection for the command's few calls; destroyed by `closeHttpApi`.
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** Lets the process end: closes the kept-alive connections. */
export function closeHttpApi(): void {
  agent.destroy();
}

/**
 * Calls the API. A transport failure or an answer that is not the API's JSON throws
 * HttpApiUnavailable; the API's own errors (not found, invalid argument) come back as answers.
 */
export function callHttpApi(api: HttpApi, method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number): Promise<HttpAnswer> {
  // Payloads as {metadata, data} in base64 both ways, whatever their encoding: no shorthand to guess at.
  const url = `${api.base}/api/v1/namespaces/${encodeURIComponent(api.namespace)}${path}${path.includes('?') ? '&' : '?'}noPayloadShorthand`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        timeout: timeoutMs,
        headers: {
          ...(api.host ? { host: api.host } : {}),
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new HttpApiUnavailable(err.message)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            reject(new HttpApiUnavailable(`not the Temporal HTTP API (HTTP ${res.statusCode}, no JSON)`));
            return;
          }
          if (!isObject(parsed)) {
            reject(new HttpApiUnavailable(`not the Temporal HTTP API (HTTP ${res.statusCode})`));
            return;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new HttpApiUnavailable(err.message)));
    req.end(payload);
  });
}

/** A plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as a `json/plain` payload, the SDK's default converter's form. */
export function jsonPayload(value: unknown): WirePayload {
  return {
    metadata: { encoding: Buffer.from('json/plain').toString('base64') },
    data: Buffer.from(JSON.stringify(value)).toString('base64'),
  };
}

/**
 * The value of a `json/plain` payload; `undefined` for any other encoding (encrypted, kept in
 * external storage, binary) or a malformed one, which the caller leaves to the SDK's converter.
 */
export function readJsonPayload(payload: unknown): { value: unknown } | undefined {
  if (!isObject(payload) || !isObject(payload.metadata) || typeof payload.data !== 'string') return undefined;
  const metadata = payload.metadata;
  if (typeof metadata.encoding !== 'string' || Buffer.from(metadata.encoding, 'base64').toString() !== 'json/plain') return undefined;
  // External storage keeps a reference in a json/plain payload marked as such: the SDK reads it.
  if (Object.keys(metadata).some((k) => k !== 'encoding' && k !== 'type')) return undefined;
  try {
    return { value: JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) };
  } catch {
    return undefined;
  }
}

/** The value of a `payloads` list holding one `json/plain` payload (a result, a query's answer); undefined otherwise. */
export function readOnlyPayload(payloads: unknown): { value: unknown } | undefined {
  return Array.isArray(payloads) && payloads.length === 1 ? readJsonPayload(payloads[0]) : undefined;
}
