// Where webhook secrets are kept: never in the conversation (its options, input and history hold
// only the URL), but beside whoever created it — the `faheem api` process — whose webhook worker
// signs each delivery. One object per conversation: a file (mode 0600 in a 0700 folder) under a
// folder of the API's, or an object in the shared store (FAHEEM_OBJECT_STORE) so that several API
// processes read each other's.
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkConversationId } from '../conversation/conversation-id.js';
import { InvalidRequestError } from '../core/errors.js';
import { ObjectStoreError, type ObjectStore } from '../storage/object-store.js';

/** The longest webhook secret taken. */
export const MAX_WEBHOOK_SECRET_LENGTH = 1024;

/** Keeps each conversation's webhook secret for its deliveries. */
export interface WebhookSecrets {
  /** Stores (or replaces) the secret of conversation `id`. */
  put(id: string, secret: string): Promise<void>;
  /** The secret of conversation `id`, or undefined when none was stored. */
  get(id: string): Promise<string | undefined>;
}

/** A webhook secret as it is taken: 1 to 1024 characters, no line breaks; an InvalidRequestError otherwise. */
export function checkWebhookSecret(secret: unknown): string {
  if (typeof secret !== 'string' || secret.length === 0) throw new InvalidRequestError('webhook.secret must be a non-empty string');
  if (secret.length > MAX_WEBHOOK_SECRET_LENGTH)
    throw new InvalidRequestError(`webhook.secret is longer than ${MAX_WEBHOOK_SECRET_LENGTH} characters`);
  if (/[\r\n\0]/.test(secret)) throw new InvalidRequestError('webhook.secret may not hold line breaks or NUL');
  return secret;
}

/** A conversation id as one path segment or key part (`:` is not a safe key character). */
function nameOf(id: string): string {
  return `${encodeURIComponent(checkConversationId(id))}.secret`;
}

/** One file per conversation under `dir` (created 0700; files 0600, written whole). */
export class FileWebhookSecrets implements WebhookSecrets {
  constructor(readonly dir: string) {}

  async put(id: string, secret: string): Promise<void> {
    const file = path.join(this.dir, nameOf(id));
    checkWebhookSecret(secret);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      await writeFile(tmp, secret, { mode: 0o600, flag: 'wx' });
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async get(id: string): Promise<string | undefined> {
    try {
      return await readFile(path.join(this.dir, nameOf(id)), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Forgets the secret of conversation `id` (nothing when there is none). */
  async delete(id: string): Promise<void> {
    await rm(path.join(this.dir, nameOf(id)), { force: true });
  }
}

/** One object per conversation under `webhooks/secrets/` in the shared object store. */
export class StoreWebhookSecrets implements WebhookSecrets {
  constructor(readonly store: ObjectStore) {}

  private key(id: string): string {
    return `webhooks/secrets/${nameOf(id)}`;
  }

  async put(id: string, secret: string): Promise<void> {
    await this.store.put(this.key(id), new TextEncoder().encode(checkWebhookSecret(secret)));
  }

  async get(id: string): Promise<string | undefined> {
    try {
      return new TextDecoder().decode(await this.store.getBytes(this.key(id)));
    } catch (err) {
      if (err instanceof ObjectStoreError && err.reason === 'not_found') return undefined;
      throw err;
    }
  }
}

/**
 * The secrets store for an API process: the object store when one is set (several API processes
 * share it), else files under `dir` (e.g. `<FAHEEM_HOME>/api/webhooks`).
 */
export function webhookSecrets(options: { dir: string; store?: ObjectStore | undefined }): WebhookSecrets {
  return options.store ? new StoreWebhookSecrets(options.store) : new FileWebhookSecrets(options.dir);
}
