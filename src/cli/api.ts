// `faheem api` (the team API until Ctrl-C) and `faheem api-key` (its keys file).
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import pc from 'picocolors';
import { DEFAULT_API_PORT, DEFAULT_SCOPE_CLAIM, DEFAULT_TENANT_CLAIM } from '../api/defaults.js';
import { KeyRing, apiSecret, SCOPES, createKey, defaultKeysPath, readKeysFile, revokeKey, type Scope } from '../api/keys.js';
import { connectClient, connectWorker } from '../connection.js';
import { connectionSettings } from '../settings/connection.js';
import { webhookSettings } from '../settings/webhooks.js';
import { storeSettings } from '../settings/store.js';
import { objectStore } from '../storage/object-store.js';
import { dataConverter } from '../storage/local-payloads.js';
import type { Settings } from '../environment.js';
import { UsageError } from '../core/errors.js';
import { faheemHome } from '../home.js';
import { exposureWarning } from '../server/exposure.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0 picks a free one)');
  return n;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The `api` command. */
export function apiCommand(settings: Settings): Command {
  return new Command('api')
    .description('the team API over HTTP: every tenant in the keys file, each with its own conversations; prints the URL')
    .option('--port <port>', 'port to listen on (0: a free one)', port, DEFAULT_API_PORT)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--keys <file>', 'the keys file (default FAHEEM_HOME/api/keys.json)')
    .option('--workspaces <dir>', "the folder of tenants' workspaces: <dir>/<tenant>/<name> (default FAHEEM_HOME/api/workspaces)")
    .option('--allow-model <model>', "a model callers may name (repeatable; default: only the worker's)", collect, [])
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM)')
    .option('--tls-key <file>', "the certificate's private key (PEM)")
    .option('--jwks-url <url>', "also accept JWTs of an OpenID provider: its signing keys' URL (https; http only on loopback)")
    .option('--jwt-issuer <iss>', 'the issuer (`iss`) a token must name, exactly')
    .option('--jwt-audience <aud>', 'the audience (`aud`) a token must include')
    .option('--jwt-tenant-claim <name>', `the claim naming the tenant (default "${DEFAULT_TENANT_CLAIM}")`)
    .option('--jwt-scope-claim <name>', `the claim listing read, write or admin (default "${DEFAULT_SCOPE_CLAIM}")`)
    .action(
      async (o: {
        port: number;
        host: string;
        keys?: string;
        workspaces?: string;
        allowModel: string[];
        tlsCert?: string;
        tlsKey?: string;
        jwksUrl?: string;
        jwtIssuer?: string;
        jwtAudience?: string;
        jwtTenantClaim?: string;
        jwtScopeClaim?: string;
      }) => {
        if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
        // The server, the token checks and the webhook worker load here: the rest of the CLI never needs them.
        const [{ startApi }, { jwtSettings, probeJwks }, { createWebhookWorker, prepareWebhook, webhookSecrets, webhookTaskQueue }] =
          await Promise.all([import('../api/server.js'), import('../api/auth.js'), import('../webhooks/index.js')]);
        const jwt = jwtSettings(o);
        const home = faheemHome(settings);
        const keysFile = path.resolve(o.keys ?? defaultKeysPath(home));
        const workspacesDir = path.resolve(o.workspaces ?? path.join(home, 'api', 'workspaces'));
        const keys = new KeyRing(keysFile);
        const known = await readKeysFile(keysFile);
        const client = await connectClient(settings);
        // The webhook worker: deliveries of this API's conversations, signed with the secrets it keeps.
        const { allow } = webhookSettings(settings);
        const secrets = webhookSecrets({ dir: path.join(home, 'api', 'webhooks'), store: objectStore(storeSettings(settings)) });
        const { connection, namespace } = await connectWorker(settings);
        const webhookWorker = await createWebhookWorker({
          connection,
          namespace,
          taskQueue: webhookTaskQueue(connectionSettings(settings).taskQueue),
          secrets,
          allow,
          dataConverter: dataConverter(storeSettings(settings)),
        });
        const delivering = webhookWorker.run();
        const api = await startApi({
          client,
          keys,
          workspacesDir,
          ...(jwt ? { jwt } : {}),
          allowedModels: o.allowModel,
          cursorKey: await apiSecret(path.join(home, 'api', 'cursor.key')),
          prepareWebhook: (id, webhook) => prepareWebhook(id, webhook, { secrets, allow }),
          host: o.host,
          port: o.port,
          ...(o.tlsCert && o.tlsKey ? { tls: { certFile: o.tlsCert, keyFile: o.tlsKey } } : {}),
        }).catch(async (err: NodeJS.ErrnoException) => {
          await client.connection.close();
          if (err.code === 'EADDRINUSE')
            throw new UsageError(`port ${o.port} on ${o.host} is in use: pass another --port (0 picks a free one)`);
          if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') throw new UsageError(`cannot listen on ${o.host}: ${err.message}`);
          throw err;
        });
        console.log(api.url);
        const tenants = new Set(known.keys.map((k) => k.tenant));
        console.error(
          pc.dim(
            `faheem api on ${api.url} (namespace ${client.options.namespace}); ${known.keys.length} key(s) of ${tenants.size} tenant(s) in ${keysFile}; workspaces under ${workspacesDir}. Ctrl-C stops it.`,
          ),
        );
        if (jwt) {
          // The provider may come up later: a key set that cannot be read now is a warning, not a stop.
          const problem = await probeJwks(jwt);
          console.error(
            problem
              ? pc.yellow(`faheem api: the OpenID provider ${jwt.issuer}: ${problem}; its tokens are refused until that is fixed`)
              : pc.dim(
                  `faheem api: accepting tokens of ${jwt.issuer} for ${jwt.audience} (tenant from \`${jwt.tenantClaim}\`, scope from \`${jwt.scopeClaim}\`)`,
                ),
          );
        }
        if (known.keys.length === 0 && !jwt)
          console.error(pc.yellow('faheem api: no keys yet: make one with `faheem api-key create --tenant T --scope write`'));
        const exposed = exposureWarning('api', o.host, '--host');
        if (exposed)
          console.error(pc.yellow(`faheem api: ${exposed}${o.tlsCert ? '' : ' Without --tls-cert, keys cross the network in the clear.'}`));
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
        await api.close();
        webhookWorker.shutdown();
        await delivering.catch(() => undefined);
        await connection.close();
        await client.connection.close();
      },
    );
}

/** The `api-key` command: create, list, revoke. */
export function apiKeyCommand(settings: Settings): Command {
  const keysFile = (file: string | undefined) => path.resolve(file ?? defaultKeysPath(faheemHome(settings)));
  const command = new Command('api-key').description("the team API's keys (the keys file keeps only their hashes)");
  command
    .command('create')
    .description('make a key; prints it once (only its hash is kept)')
    .requiredOption('--tenant <tenant>', 'the tenant it acts for')
    .addOption(new Option('--scope <scope>', 'read (GET only), write, or admin').choices([...SCOPES]).makeOptionMandatory())
    .option('--name <name>', 'a name events show for changes made with it')
    .option('--keys <file>', 'the keys file (default FAHEEM_HOME/api/keys.json)')
    .action(async (o: { tenant: string; scope: Scope; name?: string; keys?: string }) => {
      const file = keysFile(o.keys);
      const { key, entry } = await createKey(file, { tenant: o.tenant, scope: o.scope, ...(o.name !== undefined ? { name: o.name } : {}) });
      console.log(key);
      console.error(
        pc.dim(
          `key ${entry.id}${entry.name ? ` (${entry.name})` : ''} for tenant ${entry.tenant}, scope ${entry.scope}, in ${file}: shown once, keep it now`,
        ),
      );
    });
  command
    .command('list')
    .description('the keys: id, name, tenant, scope, when made (never the keys)')
    .option('--keys <file>', 'the keys file (default FAHEEM_HOME/api/keys.json)')
    .option('--json', 'one JSON object a line')
    .action(async (o: { keys?: string; json?: boolean }) => {
      const file = keysFile(o.keys);
      const { keys } = await readKeysFile(file);
      for (const k of keys) {
        const row = { id: k.id, name: k.name ?? null, tenant: k.tenant, scope: k.scope, created: k.created };
        console.log(
          o.json ? JSON.stringify(row) : `${k.id}  ${k.tenant}  ${k.scope.padEnd(5)}  ${k.name ?? pc.dim('-')}  ${pc.dim(k.created)}`,
        );
      }
      if (keys.length === 0 && !o.json) console.error(pc.dim(`no keys in ${file}`));
    });
  command
    .command('revoke')
    .description('remove a key (by id or name); a running API refuses it from its next request')
    .argument('<id>', "the key's id or name")
    .option('--keys <file>', 'the keys file (default FAHEEM_HOME/api/keys.json)')
    .action(async (id: string, o: { keys?: string }) => {
      const removed = await revokeKey(keysFile(o.keys), id);
      console.error(`revoked key ${removed.id}${removed.name ? ` (${removed.name})` : ''} of tenant ${removed.tenant}`);
    });
  return command;
}
