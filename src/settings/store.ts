// The object store's area of the settings: where what must outlive a host goes (FAHEEM_OBJECT_STORE
// and the AWS variables of an S3 store), where large payloads go without one, the pool a worker
// hosts, and the payload keys the store's objects are sealed with. Built once at an entry point and
// passed down to src/storage/, src/images/ and src/pool/. The store's URL and size cap are checked
// (and a bad one named) by src/storage/object-store.ts when the store is opened, as before. Secrets
// (the AWS keys, the payload keys): this object is never printed. No zod here (the quick paths load it).
import os from 'node:os';
import path from 'node:path';
import type { Settings } from '../environment.js';
import { codecSettings, type CodecSettings } from './codec.js';
import { faheemHome } from './home.js';

/** An S3-compatible store's settings: the standard AWS variables. */
export interface S3Settings {
  /** AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL; undefined: AWS's own (path-style requests when set). */
  readonly endpoint: string | undefined;
  /** AWS_REGION, else AWS_DEFAULT_REGION, else `us-east-1`. */
  readonly region: string;
  /** AWS_ACCESS_KEY_ID; undefined: the AWS SDK's default chain. */
  readonly accessKeyId: string | undefined;
  /** AWS_SECRET_ACCESS_KEY (secret); used only with an access key id. */
  readonly secretAccessKey: string | undefined;
  /** AWS_SESSION_TOKEN (secret): a temporary session token. */
  readonly sessionToken: string | undefined;
}

/** This host's part in a pool of hosts. */
export interface PoolHostSettings {
  /** FAHEEM_POOL: the pool this worker hosts workspaces of; undefined: none. */
  readonly name: string | undefined;
  /** FAHEEM_HOST_ID, else the hostname. */
  readonly hostId: string;
  /** FAHEEM_WORKSPACES_DIR (resolved), else `~/.faheem/workspaces`: where pooled workspaces are materialised. */
  readonly workspacesDir: string;
}

/** The object store's settings, and what rides on it. */
export interface StoreSettings {
  /** FAHEEM_OBJECT_STORE (trimmed): `s3://bucket/prefix` or `file:///path`; undefined: no store (one host). */
  readonly url: string | undefined;
  /** FAHEEM_OBJECT_MAX_BYTES as given (checked when the store is opened); undefined: 1 GiB. */
  readonly maxBytes: string | undefined;
  /** The AWS variables an `s3://` store reads. */
  readonly s3: S3Settings;
  /** FAHEEM_PAYLOAD_DIR, else `<FAHEEM_HOME>/payloads`: large payloads without a store. */
  readonly payloadDir: string;
  /** FAHEEM_HOME (default `~/.faheem`): images go to its `objects/` without a store. */
  readonly home: string;
  /** The payload keys (FAHEEM_ENCRYPTION_KEY(S)): payloads and the store's objects are sealed with them. */
  readonly codec: CodecSettings;
  /** FAHEEM_POOL, FAHEEM_HOST_ID and FAHEEM_WORKSPACES_DIR. */
  readonly pool: PoolHostSettings;
}

/** The AWS settings `settings` gives (an empty value is unset), defaults applied. */
export function s3Settings(settings: Settings): S3Settings {
  return {
    endpoint: settings.AWS_ENDPOINT_URL_S3 || settings.AWS_ENDPOINT_URL || undefined,
    region: settings.AWS_REGION || settings.AWS_DEFAULT_REGION || 'us-east-1',
    accessKeyId: settings.AWS_ACCESS_KEY_ID || undefined,
    secretAccessKey: settings.AWS_SECRET_ACCESS_KEY || undefined,
    sessionToken: settings.AWS_SESSION_TOKEN || undefined,
  };
}

/** The object store's settings `settings` gives, defaults applied. Nothing is checked here. */
export function storeSettings(settings: Settings): StoreSettings {
  const home = faheemHome(settings);
  return {
    url: settings.FAHEEM_OBJECT_STORE?.trim() || undefined,
    maxBytes: settings.FAHEEM_OBJECT_MAX_BYTES || undefined,
    s3: s3Settings(settings),
    payloadDir: settings.FAHEEM_PAYLOAD_DIR || path.join(home, 'payloads'),
    home,
    codec: codecSettings(settings),
    pool: {
      name: settings.FAHEEM_POOL || undefined,
      hostId: settings.FAHEEM_HOST_ID || os.hostname(),
      workspacesDir: path.resolve(settings.FAHEEM_WORKSPACES_DIR || path.join(os.homedir(), '.faheem', 'workspaces')),
    },
  };
}
