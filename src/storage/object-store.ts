// The object store: what must outlive a host (large payloads, the shipped checkpoints of pooled
// conversations). One interface, two places: a shared folder (`file:///path`) or any S3-compatible
// store (`s3://bucket/prefix`, over the AWS SDK v3 client). FAHEEM_OBJECT_STORE unset: no store, and
// everything stays on one host as before.
// The AWS SDK loads when an S3 store is first used: every client and CLI start imports this module,
// and most of them never touch S3 (the SDK costs ~0.15 s of CPU to load).
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { FaheemError } from '../core/errors.js';
import type { S3Settings, StoreSettings } from '../settings/store.js';

/**
 * Why the object store failed. `refused`: an object is there, but not one this conversation wrote
 * there (in clear or unbound with a key set, bound to another key, or outside the conversation's chain).
 */
export type ObjectStoreFailure = 'config' | 'not_found' | 'too_large' | 'denied' | 'unreachable' | 'fenced' | 'refused';

/** The object store (FAHEEM_OBJECT_STORE) cannot do what was asked; `reason` says which kind. */
export class ObjectStoreError extends FaheemError {
  /** The kind of failure. */
  readonly reason: ObjectStoreFailure;

  constructor(reason: ObjectStoreFailure, message: string, options?: { cause?: unknown }) {
    super('object_store', message, options);
    this.reason = reason;
  }
}

/** An object larger than this is refused (FAHEEM_OBJECT_MAX_BYTES changes it). */
export const DEFAULT_MAX_OBJECT_BYTES = 1024 * 1024 * 1024;

/** What `head` knows of a stored object. */
export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
}

/**
 * A flat store of immutable-by-convention objects under `/`-separated keys. Keys are relative
 * (`conversations/c1/bundles/3.bundle`); the store adds its own prefix.
 */
export interface ObjectStore {
  /** Where it is, without credentials (for messages and `doctor`). */
  readonly location: string;
  /** The largest object `put` accepts, in bytes. */
  readonly maxBytes: number;
  /** Writes an object whole: a reader sees the old one or the new one, never half. */
  put(key: string, body: Uint8Array | Readable): Promise<void>;
  /** The object's bytes as a stream; `ObjectStoreError` (`not_found`) when there is none. */
  get(key: string): Promise<Readable>;
  /** The object's bytes; `ObjectStoreError` (`not_found`) when there is none. */
  getBytes(key: string): Promise<Uint8Array>;
  /** The object's size, or undefined when there is none. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Every key that starts with `prefix`, in key order. */
  list(prefix: string): Promise<string[]>;
}

// S3's safe characters (and `=%+@`): Temporal's S3 driver percent-encodes its key segments with
// encodeURIComponent, which leaves `!*'()` as they are.
const KEY = /^[A-Za-z0-9._\-=%+@!*'()]+(\/[A-Za-z0-9._\-=%+@!*'()]+)*$/;

/** Refuses a key that could leave the store's prefix or that S3 and a folder would read differently. */
export function checkKey(key: string): string {
  if (!KEY.test(key) || key.split('/').some((part) => part === '.' || part === '..') || key.length > 900) {
    throw new ObjectStoreError('config', `not a valid object key: ${JSON.stringify(key.slice(0, 200))}`);
  }
  return key;
}

function tooLarge(key: string, maxBytes: number): ObjectStoreError {
  return new ObjectStoreError(
    'too_large',
    `object ${key} is larger than the store's cap of ${maxBytes} bytes (FAHEEM_OBJECT_MAX_BYTES); a workspace this large cannot be shipped`,
  );
}

/** Counts the bytes going through and fails past the cap, so a stream never writes more than it. */
function capped(key: string, maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > maxBytes) done(tooLarge(key, maxBytes));
      else done(null, chunk);
    },
  });
}

async function collect(stream: Readable): Promise<Uint8Array> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return new Uint8Array(Buffer.concat(parts));
}

/** A shared folder as the store (`file:///path`): every host must see the same folder. */
export class FileObjectStore implements ObjectStore {
  readonly location: string;

  constructor(
    private readonly root: string,
    readonly maxBytes: number = DEFAULT_MAX_OBJECT_BYTES,
  ) {
    this.location = `file://${root}`;
  }

  private file(key: string): string {
    return path.join(this.root, ...checkKey(key).split('/'));
  }

  async put(key: string, body: Uint8Array | Readable): Promise<void> {
    const file = this.file(key);
    if (body instanceof Uint8Array && body.length > this.maxBytes) throw tooLarge(key, this.maxBytes);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      // Bytes in hand are written at once (a stream pipeline costs a small object ~1 ms of CPU).
      if (body instanceof Uint8Array) await writeFile(tmp, body, { flag: 'wx' });
      else await pipeline(body, capped(key, this.maxBytes), createWriteStream(tmp));
      await rename(tmp, file); // atomic: a reader never sees half an object
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Readable> {
    const file = this.file(key);
    if (!(await this.head(key))) throw new ObjectStoreError('not_found', `no object ${key} in ${this.location}`);
    return createReadStream(file);
  }

  async getBytes(key: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(await readFile(this.file(key)));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') throw new ObjectStoreError('not_found', `no object ${key} in ${this.location}`);
      throw err;
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const info = await stat(this.file(key)).catch(() => undefined);
    return info?.isFile() ? { key, size: info.size } : undefined;
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const key = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(path.join(dir, e.name), key);
        } else if (e.isFile() && !e.name.endsWith('.tmp') && key.startsWith(prefix)) out.push(key);
      }
    };
    await walk(this.root, '');
    return out.sort();
  }
}

/** The client configuration of an S3-compatible store, from the standard AWS variables (its settings). */
export function s3ClientConfig(s3: S3Settings): S3ClientConfig {
  const endpoint = s3.endpoint;
  const keyId = s3.accessKeyId;
  const secret = s3.secretAccessKey;
  return {
    region: s3.region,
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}), // path-style: SeaweedFS, MinIO and most self-hosted stores
    ...(keyId && secret
      ? {
          credentials: {
            accessKeyId: keyId,
            secretAccessKey: secret,
            ...(s3.sessionToken ? { sessionToken: s3.sessionToken } : {}),
          },
        }
      : {}),
    maxAttempts: 4,
    // A step's shipment is one small PUT: resolving the middleware stack once per command class
    // and leaving out the optional CRC32 cut a PUT's CPU by a third and its garbage by 60 KB.
    // Integrity is kept: SigV4 signs the body's SHA-256, a restore checks each pack's SHA-1
    // trailer and git each object's id, and with a key the codec authenticates every byte.
    // S3-compatible stores that reject the checksum headers work as well.
    cacheMiddleware: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

function unreachable(what: string, location: string, err: unknown): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  if (status === 401 || status === 403) {
    return new ObjectStoreError(
      'denied',
      `${what} in ${location} was refused (${e?.name ?? status}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
      { cause: err },
    );
  }
  return new ObjectStoreError('unreachable', `${what} in ${location} failed: ${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`, {
    cause: err,
  });
}

/** Upload's default part size: a body up to it goes in one PUT either way. */
const SINGLE_PUT_BYTES = 5 * 1024 * 1024;

/** Any S3-compatible store (`s3://bucket/prefix`). */
export class S3ObjectStore implements ObjectStore {
  readonly location: string;
  private readonly prefix: string;

  private client?: Promise<{ client: S3Client; sdk: typeof import('@aws-sdk/client-s3') }>;

  constructor(
    private readonly config: S3ClientConfig,
    readonly bucket: string,
    prefix: string,
    readonly maxBytes: number = DEFAULT_MAX_OBJECT_BYTES,
  ) {
    this.prefix = prefix.replace(/^\/+|\/+$/g, '');
    this.location = `s3://${bucket}${this.prefix ? `/${this.prefix}` : ''}`;
  }

  /** The SDK and one client for this store, loaded at the first call. */
  private s3(): Promise<{ client: S3Client; sdk: typeof import('@aws-sdk/client-s3') }> {
    this.client ??= import('@aws-sdk/client-s3').then((sdk) => ({ client: new sdk.S3Client(this.config), sdk }));
    return this.client;
  }

  private key(key: string): string {
    checkKey(key);
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(key: string, body: Uint8Array | Readable): Promise<void> {
    if (body instanceof Uint8Array && body.length > this.maxBytes) throw tooLarge(key, this.maxBytes);
    const Body = body instanceof Uint8Array ? body : body.pipe(capped(key, this.maxBytes));
    try {
      // Bytes up to a part's size go in one PUT (Upload's machinery costs a step's object ~0.3 ms of
      // CPU more); a larger body or a stream goes through Upload, in parts.
      if (Body instanceof Uint8Array && Body.length <= SINGLE_PUT_BYTES) {
        // Type and length given: the SDK does not work them out (20 KB less garbage a PUT).
        const typed = { ContentType: 'application/octet-stream', ContentLength: Body.length };
        const { client, sdk } = await this.s3();
        await client.send(new sdk.PutObjectCommand({ Bucket: this.bucket, Key: this.key(key), Body, ...typed }));
      } else {
        const [{ client }, { Upload }] = await Promise.all([this.s3(), import('@aws-sdk/lib-storage')]);
        await new Upload({ client, params: { Bucket: this.bucket, Key: this.key(key), Body } }).done();
      }
    } catch (err) {
      throw unreachable(`writing ${key}`, this.location, err);
    }
  }

  async get(key: string): Promise<Readable> {
    try {
      const { client, sdk } = await this.s3();
      const out = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return out.Body as Readable;
    } catch (err) {
      if (isMissing(err)) throw new ObjectStoreError('not_found', `no object ${key} in ${this.location}`);
      throw unreachable(`reading ${key}`, this.location, err);
    }
  }

  async getBytes(key: string): Promise<Uint8Array> {
    return collect(await this.get(key));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const { client, sdk } = await this.s3();
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return { key, size: out.ContentLength ?? 0 };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw unreachable(`looking up ${key}`, this.location, err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const full = this.prefix ? `${this.prefix}/${prefix}` : prefix;
    const out: string[] = [];
    let token: string | undefined;
    try {
      const { client, sdk } = await this.s3();
      do {
        const page = await client.send(new sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: full, ContinuationToken: token }));
        for (const o of page.Contents ?? []) if (o.Key) out.push(this.prefix ? o.Key.slice(this.prefix.length + 1) : o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw unreachable(`listing ${prefix}`, this.location, err);
    }
    return out.sort();
  }
}

/** What FAHEEM_OBJECT_STORE names. */
export type ObjectStoreUrl = { kind: 'file'; root: string } | { kind: 's3'; bucket: string; prefix: string };

/** Reads FAHEEM_OBJECT_STORE's value; a clear error for anything else. */
export function parseObjectStoreUrl(value: string): ObjectStoreUrl {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ObjectStoreError('config', `FAHEEM_OBJECT_STORE must be s3://bucket/prefix or file:///path, not ${JSON.stringify(value)}`);
  }
  if (url.protocol === 'file:') {
    if (url.host) throw new ObjectStoreError('config', `FAHEEM_OBJECT_STORE ${value}: a file URL has no host (file:///path)`);
    return { kind: 'file', root: fileURLToPath(url) };
  }
  if (url.protocol === 's3:') {
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(url.hostname)) {
      throw new ObjectStoreError('config', `FAHEEM_OBJECT_STORE ${value}: ${JSON.stringify(url.hostname)} is not a valid bucket name`);
    }
    if (url.username || url.password)
      throw new ObjectStoreError('config', 'FAHEEM_OBJECT_STORE holds no credentials: use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    return { kind: 's3', bucket: url.hostname, prefix: decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '') };
  }
  throw new ObjectStoreError('config', `FAHEEM_OBJECT_STORE must be s3://bucket/prefix or file:///path, not ${JSON.stringify(value)}`);
}

function maxBytesFrom(raw: string | undefined): number {
  if (!raw) return DEFAULT_MAX_OBJECT_BYTES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new ObjectStoreError('config', `FAHEEM_OBJECT_MAX_BYTES must be a positive whole number of bytes, not ${JSON.stringify(raw)}`);
  return n;
}

const stores = new Map<string, ObjectStore>();

/**
 * The object store FAHEEM_OBJECT_STORE names, or undefined when it is unset (one host, as before).
 * One instance per settings in a process: the S3 client keeps its connections. Throws
 * ObjectStoreError (`config`) on a malformed FAHEEM_OBJECT_STORE or FAHEEM_OBJECT_MAX_BYTES.
 */
export function objectStore(settings: Pick<StoreSettings, 'url' | 'maxBytes' | 's3'>): ObjectStore | undefined {
  const value = settings.url;
  if (!value) return undefined;
  const parsed = parseObjectStoreUrl(value);
  const maxBytes = maxBytesFrom(settings.maxBytes);
  const config = parsed.kind === 's3' ? s3ClientConfig(settings.s3) : undefined;
  const cacheKey = JSON.stringify([value, maxBytes, config?.endpoint, config?.region, settings.s3.accessKeyId ?? '']);
  let store = stores.get(cacheKey);
  if (!store) {
    store =
      parsed.kind === 'file'
        ? new FileObjectStore(parsed.root, maxBytes)
        : new S3ObjectStore(config!, parsed.bucket, parsed.prefix, maxBytes);
    stores.set(cacheKey, store);
  }
  return store;
}
