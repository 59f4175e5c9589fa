// The team API's keys file: who may call it, as which tenant, with which scope, and each tenant's
// limits. Keys are random and long, so a SHA-256 hash is enough to keep (no slow hash needed): the
// file never holds a key in the clear, and a key is shown once, when it is made.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, link, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { TENANT_NAME } from '../client/tenants.js';
import { actorProblem } from '../client/actors.js';

/** What a key may do: `read` (GET only), `write` (also change conversations), `admin` (also operator presets). */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Whether a key of scope `have` may make a call that needs `need`. */
export function scopeAllows(have: Scope, need: Scope): boolean {
  return SCOPES.indexOf(have) >= SCOPES.indexOf(need);
}

/** A tenant's limits; a person may edit them in the keys file. */
export const TenantLimits = z.strictObject({
  /** The most unfinished (running, paused, waiting) conversations at once; more get 429. */
  maxRunning: z.number().int().positive().optional(),
  /** Requests a second (a bucket of this size refilled at this rate); more get 429. */
  requestsPerSecond: z.number().positive().optional(),
});
export type TenantLimits = z.infer<typeof TenantLimits>;

const StoredKey = z.strictObject({
  id: z.string().regex(/^[a-f0-9]{12}$/),
  name: z.string().max(100).optional(),
  tenant: z.string().regex(TENANT_NAME),
  scope: z.enum(SCOPES),
  /** Hex SHA-256 of the whole key. */
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  created: z.string(),
});
export type StoredKey = z.infer<typeof StoredKey>;

const KeysFile = z.strictObject({
  keys: z.array(StoredKey).default([]),
  tenants: z.record(z.string().regex(TENANT_NAME), TenantLimits).default({}),
});
export type KeysFile = z.infer<typeof KeysFile>;

/** The limits a tenant gets when the keys file names none. */
export const DEFAULT_LIMITS: Required<TenantLimits> = { maxRunning: 20, requestsPerSecond: 20 };

/** The keys file's default place: `FAHEEM_HOME/api/keys.json`. */
export function defaultKeysPath(home: string): string {
  return path.join(home, 'api', 'keys.json');
}

// `fk_<id>_<secret>`: the id finds the entry, the secret is 32 random bytes.
const KEY_SHAPE = /^fk_([a-f0-9]{12})_([A-Za-z0-9_-]{43})$/;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Reads the keys file (an empty one when it does not exist); a malformed file is a UsageError naming what is wrong. */
export async function readKeysFile(file: string): Promise<KeysFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { keys: [], tenants: {} };
    throw new UsageError(`cannot read the keys file ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError(`the keys file ${file} is not JSON`);
  }
  const parsed = KeysFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`the keys file ${file}: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Writes the keys file whole (a reader sees the old file or the new one), readable by its owner only. */
export async function writeKeysFile(file: string, keys: KeysFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

/** Makes a key for `tenant` with `scope`, stores its hash, and answers the key (shown once) and its entry. */
export async function createKey(
  file: string,
  request: { tenant: string; scope: Scope; name?: string },
): Promise<{ key: string; entry: StoredKey }> {
  if (!TENANT_NAME.test(request.tenant) || request.tenant.includes('..'))
    throw new UsageError(`tenant ${JSON.stringify(request.tenant)}: 1 to 63 lowercase letters, digits, '.', '_' or '-'`);
  if (request.name !== undefined && actorProblem({ tenant: request.tenant, key: request.name }) !== undefined)
    throw new UsageError('a key name is 1 to 100 printable characters, no backquotes (events show it)');
  return withKeysLock(file, async () => {
    const keys = await readKeysFile(file);
    if (request.name !== undefined && keys.keys.some((k) => k.name === request.name && k.tenant === request.tenant))
      throw new UsageError(`tenant ${request.tenant} already has a key named ${JSON.stringify(request.name)}`);
    const id = randomBytes(6).toString('hex');
    const key = `fk_${id}_${randomBytes(32).toString('base64url')}`;
    const entry: StoredKey = {
      id,
      ...(request.name !== undefined ? { name: request.name } : {}),
      tenant: request.tenant,
      scope: request.scope,
      sha256: sha256(key),
      created: new Date().toISOString(),
    };
    keys.keys.push(entry);
    if (!(request.tenant in keys.tenants)) keys.tenants[request.tenant] = {};
    await writeKeysFile(file, keys);
    return { key, entry };
  });
}

/** Removes the key with this id (or name); a UsageError when there is none. */
export async function revokeKey(file: string, idOrName: string): Promise<StoredKey> {
  return withKeysLock(file, async () => {
    const keys = await readKeysFile(file);
    const matches = keys.keys.filter((k) => k.id === idOrName || k.name === idOrName);
    if (matches.length === 0) throw new UsageError(`no key ${JSON.stringify(idOrName)} in ${file} (see \`faheem api-key list\`)`);
    if (matches.length > 1) throw new UsageError(`${matches.length} keys are named ${JSON.stringify(idOrName)}: revoke one by its id`);
    keys.keys = keys.keys.filter((k) => k !== matches[0]);
    await writeKeysFile(file, keys);
    return matches[0]!;
  });
}

/** A lock held longer than this was left by a process that died: it is taken over. */
const STALE_LOCK_MS = 30_000;

/**
 * Runs a read-change-write of the keys file under its lock (`<file>.lock`, made exclusively), so
 * two `api-key` commands at once neither lose a key nor bring a revoked one back.
 */
export async function withKeysLock<T>(file: string, change: () => Promise<T>): Promise<T> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const lock = `${file}.lock`;
  for (let waited = 0; ; waited += 50) {
    try {
      await writeFile(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (held > STALE_LOCK_MS) await rm(lock, { force: true });
      else if (waited > 2 * STALE_LOCK_MS)
        throw new UsageError(`the keys file ${file} stays locked (${lock}); remove the lock if no faheem api-key runs`);
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await change();
  } finally {
    await rm(lock, { force: true });
  }
}

/** The entry a presented key belongs to, or undefined (unknown, revoked or malformed). Constant time in the hash. */
export function findKey(keys: KeysFile, presented: string): StoredKey | undefined {
  const m = KEY_SHAPE.exec(presented);
  if (!m) return undefined;
  const entry = keys.keys.find((k) => k.id === m[1]);
  if (!entry) return undefined;
  const want = Buffer.from(entry.sha256, 'hex');
  const got = Buffer.from(sha256(presented), 'hex');
  return timingSafeEqual(want, got) ? entry : undefined;
}

/** A tenant's limits: the file's, else the defaults. */
export function limitsOf(keys: KeysFile, tenant: string): Required<TenantLimits> {
  return { ...DEFAULT_LIMITS, ...keys.tenants[tenant] };
}

/**
 * The keys file as a running API sees it: read again when it changes on disk (a key made or revoked
 * with `faheem api-key`, a limit edited), so a revoked key stops working without a restart.
 */
export class KeyRing {
  private cached: { version: string; keys: KeysFile } | undefined;

  constructor(readonly file: string) {}

  /** The current keys (a stat per call; the file is read again only when it changed). */
  async current(): Promise<KeysFile> {
    let version: string;
    try {
      // A rewrite (a new inode by rename, or an edit in place) changes one of these.
      const info = await stat(this.file);
      version = `${info.ino}:${info.mtimeMs}:${info.ctimeMs}:${info.size}`;
    } catch {
      return { keys: [], tenants: {} };
    }
    if (this.cached?.version !== version) {
      try {
        this.cached = { version, keys: await readKeysFile(this.file) };
      } catch (err) {
        // A person's edit that broke the file: keep the keys last read (none at first), and say so once.
        console.error(`faheem api: ${(err as Error).message}; keeping the keys read before`);
        this.cached = { version, keys: this.cached?.keys ?? { keys: [], tenants: {} } };
      }
    }
    return this.cached.keys;
  }
}

/**
 * A 32-byte secret of this API kept in `file` (made, readable by its owner only, on first use):
 * what signs its list cursors, so they outlive a restart and work on every API process sharing it.
 */
export async function apiSecret(file: string): Promise<Buffer> {
  try {
    const existing = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64url');
    if (existing.length === 32) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const secret = randomBytes(32);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written whole under another name, then linked in place: a second process starting at the same
  // moment either wins or reads the winner's, never half a file.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${secret.toString('base64url')}\n`, { mode: 0o600 });
  try {
    await link(tmp, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'base64url');
  } finally {
    await rm(tmp, { force: true });
  }
}
