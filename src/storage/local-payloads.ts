// Large payloads (a long conversation's carried state when it continues as new, a huge query answer)
// go to files instead of Temporal history, through Temporal's own external-storage hook. Files are
// named by content hash, so storing the same payload twice is harmless. Every process that reads
// such a conversation (workers, clients, the CLI) must see the same folder: on one host that is
// ~/.faheem/payloads. Across hosts, FAHEEM_OBJECT_STORE names an object store (S3 or a shared
// folder) and payloads go there through Temporal's own S3 driver (@temporalio/external-storage-s3),
// its client being our object store; the folder's driver stays registered to read older claims.
import { ExternalStorage, StorageDriverClaim, type DataConverter, type StorageDriver } from '@temporalio/common';
import proto from '@temporalio/proto';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { encryptionCodec } from '../security/codec.js';
import { objectStore, type ObjectStore } from './object-store.js';
import { S3StorageDriver, type S3StorageDriverClient } from '@temporalio/external-storage-s3';
import type { StoreSettings } from '../settings/store.js';

const Payload = proto.temporal.api.common.v1.Payload;

/** Payloads above this size are stored outside history (Temporal's hard limit is 2 MB). */
export const PAYLOAD_SIZE_THRESHOLD = 512 * 1024;

export class LocalFilePayloadDriver implements StorageDriver {
  readonly name = 'faheem-local-files';
  readonly type = 'faheem.local-files';
  constructor(private readonly dir: string) {}

  async store(_context: unknown, payloads: Parameters<StorageDriver['store']>[1]): Promise<StorageDriverClaim[]> {
    await mkdir(this.dir, { recursive: true });
    return Promise.all(
      payloads.map(async (p) => {
        const bytes = Payload.encode(Payload.fromObject(p)).finish();
        const hash = createHash('sha256').update(bytes).digest('hex');
        const file = path.join(this.dir, `${hash}.bin`);
        const tmp = `${file}.${process.pid}.tmp`;
        await writeFile(tmp, bytes);
        await rename(tmp, file); // atomic: a reader never sees half a payload
        return new StorageDriverClaim({ sha256: hash });
      }),
    );
  }

  async retrieve(_context: unknown, claims: StorageDriverClaim[]): ReturnType<StorageDriver['retrieve']> {
    return Promise.all(
      claims.map(async (c) => {
        const hash = c.claimData.sha256 ?? '';
        if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`bad payload claim ${JSON.stringify(c.claimData)}`);
        const bytes = await readFile(path.join(this.dir, `${hash}.bin`)).catch(() => {
          throw new Error(`payload ${hash} is not in ${this.dir}; set FAHEEM_PAYLOAD_DIR to the folder the worker uses`);
        });
        return Payload.decode(bytes);
      }),
    );
  }
}

/** Where payloads go inside the object store. */
export const PAYLOADS_PREFIX = 'payloads';

/**
 * Temporal's S3 driver talks to this client; it puts the driver's keys under the store's own prefix
 * (a file store or an S3 bucket alike). The bucket the driver names is the store's, so it is not used.
 */
export class ObjectStorePayloadClient implements S3StorageDriverClient {
  constructor(private readonly store: ObjectStore) {}
  async putObject(_bucket: string, key: string, data: Uint8Array): Promise<void> {
    await this.store.put(`${PAYLOADS_PREFIX}/${key}`, data);
  }
  async objectExists(_bucket: string, key: string): Promise<boolean> {
    return (await this.store.head(`${PAYLOADS_PREFIX}/${key}`)) !== undefined;
  }
  async getObject(_bucket: string, key: string): Promise<Uint8Array> {
    return this.store.getBytes(`${PAYLOADS_PREFIX}/${key}`);
  }
  describe(): Record<string, string> {
    return { store: this.store.location };
  }
}

/**
 * Where large payloads go: the object store when FAHEEM_OBJECT_STORE is set (Temporal's S3 driver,
 * capped at the store's size), else the payload folder. Payloads are encoded (encrypted, with a key)
 * before they get here, so the store holds ciphertext.
 */
export function externalStorage(settings: Pick<StoreSettings, 'payloadDir' | 'url' | 'maxBytes' | 's3'>): ExternalStorage {
  const local = new LocalFilePayloadDriver(settings.payloadDir);
  const store = objectStore(settings);
  if (!store) return new ExternalStorage({ drivers: [local], payloadSizeThreshold: PAYLOAD_SIZE_THRESHOLD });
  const shared = new S3StorageDriver({ client: new ObjectStorePayloadClient(store), bucket: 'faheem', maxPayloadSize: store.maxBytes });
  return new ExternalStorage({ drivers: [shared, local], driverSelector: () => shared, payloadSizeThreshold: PAYLOAD_SIZE_THRESHOLD });
}

/**
 * The data converter of every client, worker and CLI command. With an encryption key
 * (FAHEEM_ENCRYPTION_KEY or FAHEEM_ENCRYPTION_KEYS) payloads are encrypted by the codec, and error
 * messages and stack traces move into the failure's encoded attributes so they are encrypted too.
 * The SDK runs the codecs before external storage on the way out (and after it on the way in), so a
 * payload stored as a file is already ciphertext. Throws on a malformed key.
 */
export function dataConverter(settings: StoreSettings): DataConverter {
  const codec = encryptionCodec(settings.codec);
  return {
    externalStorage: externalStorage(settings),
    ...(codec ? { payloadCodecs: [codec], failureConverterPath: encryptedFailureConverterPath() } : {}),
  };
}

/** The module (loaded by path with require()) of the failure converter used with encryption. */
export function encryptedFailureConverterPath(): string {
  const fromSources = import.meta.url.endsWith('.ts');
  return fileURLToPath(new URL(fromSources ? '../security/failure-converter.cts' : '../security/failure-converter.cjs', import.meta.url));
}
