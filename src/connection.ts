// How clients and workers reach Temporal: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TLS variables and envconfig TOML profiles (TEMPORAL_PROFILE), all through Temporal's own loader.
import { Client, Connection, isGrpcDeadlineError } from '@temporalio/client';
import { startTracing } from './telemetry/tracing.js';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnection } from '@temporalio/worker';
import net from 'node:net';
import { ServerUnreachableError } from './core/errors.js';
import { storeSettings, type StoreSettings } from './settings/store.js';
import { dataConverter } from './storage/local-payloads.js';
import { actorInterceptor } from './client/acting.js';
import { withTimeout } from './core/timeout.js';
import { readSettings, type ChildEnv, type Settings } from './environment.js';
import { connectionSettings, type ConnectionSettings } from './settings/connection.js';
import { telemetrySettings } from './settings/telemetry.js';

/**
 * A client's settings: this process's environment, checked by the environment table. The client's
 * edge (the SDK, the CLI's client commands, the console): modules below take what this gives.
 */
export function clientSettings(): Settings {
  return readSettings(process.env, 'client');
}

/** This process's object store settings (FAHEEM_OBJECT_STORE, the AWS variables, the payload keys), read once per call. */
export function clientStoreSettings(settings: Settings = clientSettings()): StoreSettings {
  return storeSettings(settings);
}

/** This process's whole environment, for a child process a client starts (git, to ship a workspace). */
export function clientChildEnv(): ChildEnv {
  return process.env;
}

/**
 * The connection settings of `given`: as they are when already built (connectionSettings), else
 * read from Settings (the shape these functions took before; still accepted).
 */
export function connectionOf(given: Settings | ConnectionSettings): ConnectionSettings {
  return 'envconfig' in given && 'taskQueue' in given ? (given as ConnectionSettings) : connectionSettings(given as Settings);
}

/** The address, namespace and TLS/API-key options Temporal's envconfig (and TEMPORAL_*) gives. */
export function connectConfig(settings: Settings | ConnectionSettings = clientSettings()) {
  const connection = connectionOf(settings);
  // Temporal's envconfig reads TEMPORAL_* and the profile file from this process itself.
  const config = loadClientConnectConfig();
  const address = config.connectionOptions.address ?? connection.address;
  return {
    connectionOptions: { ...config.connectionOptions, address },
    namespace: config.namespace ?? connection.namespace,
  };
}

export { ServerUnreachableError };

/** How long a client or worker tries to reach the server before saying it cannot. */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A plain gRPC connection to the configured server (for clients, the CLI and the worker's setup).
 * A refused connection or an unknown host is reported at once; otherwise it gives up after
 * CONNECT_TIMEOUT_MS. Either way the error is a ServerUnreachableError.
 */
export async function connectConnection(
  settings: Settings | ConnectionSettings = clientSettings(),
): Promise<{ connection: Connection; namespace: string; address: string }> {
  const { connectionOptions, namespace } = connectConfig(settings);
  const address = connectionOptions.address;
  const startedAt = Date.now();
  const attempt = Connection.connect({ ...connectionOptions, connectTimeout: CONNECT_TIMEOUT_MS } as Parameters<
    typeof Connection.connect
  >[0]);
  // Settled either way below; this keeps an abandoned attempt from being an unhandled rejection.
  attempt.catch(() => undefined);
  const refused = await refusedAt(address, connectionOptions);
  if (refused) {
    void attempt.then((c) => c.close()).catch(() => undefined);
    throw new ServerUnreachableError(address, refused);
  }
  try {
    return { connection: await attempt, namespace, address };
  } catch (err) {
    throw new ServerUnreachableError(address, reasonOf(err, startedAt), { cause: err });
  }
}

/**
 * A Temporal client for the configured server, with faheem's data converter (encryption when a key
 * is set, large payloads kept aside) and the actor interceptor (see actingAs). Throws ServerUnreachableError when the server does not answer.
 */
export async function connectClient(settings: Settings = clientSettings()): Promise<Client> {
  const converter = dataConverter(storeSettings(settings)); // a malformed encryption key fails here, with its own message
  const { connection, namespace } = await connectConnection(settings);
  // With an OTLP endpoint configured, starts, signals and updates carry the trace (nothing loaded otherwise).
  const tracing = await startTracing(telemetrySettings(settings));
  // Inside actingAs (the team API), starts, signals and updates carry who made them (src/client/acting.ts).
  const traced = tracing?.clientInterceptors.workflow;
  const workflow = [...(Array.isArray(traced) ? traced : []), actorInterceptor];
  return new Client({ connection, namespace, dataConverter: converter, interceptors: { ...tracing?.clientInterceptors, workflow } });
}

/** The native connection a worker polls with; ServerUnreachableError when the server does not answer. */
export async function connectWorker(
  settings: Settings | ConnectionSettings = readSettings(process.env, 'worker'),
): Promise<{ connection: NativeConnection; namespace: string }> {
  const { connectionOptions, namespace } = connectConfig(settings);
  const address = connectionOptions.address;
  const refused = await refusedAt(address, connectionOptions);
  if (refused) throw new ServerUnreachableError(address, refused);
  // Loaded here, not at the top: the worker package (its native bridge, rxjs, webpack) costs every
  // CLI command a few hundred ms of start-up and only a worker needs it.
  const { NativeConnection } = await import('@temporalio/worker');
  const startedAt = Date.now();
  const attempt = NativeConnection.connect(connectionOptions);
  attempt.catch(() => undefined);
  try {
    return {
      connection: await withTimeout(attempt, CONNECT_TIMEOUT_MS, () => new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)),
      namespace,
    };
  } catch (err) {
    void attempt.then((c) => c.close()).catch(() => undefined);
    throw new ServerUnreachableError(address, reasonOf(err, startedAt), { cause: err });
  }
}

/**
 * A short reason for a failed connection. A refused one was found by refusedAt already; an attempt
 * that ran into its deadline (ours, or gRPC's) had no answer; anything else is told as it was said.
 */
function reasonOf(err: unknown, startedAt: number): string {
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  if (Date.now() - startedAt >= CONNECT_TIMEOUT_MS || isGrpcDeadlineError(err) || isGrpcDeadlineError(cause)) {
    return `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
  }
  const message = (err as Error)?.message ?? String(err);
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/**
 * A quick TCP look at the address: a refused connection or an unknown host is certain at once, where
 * gRPC would keep retrying until its deadline. Anything else (it connects, or is slow) says nothing;
 * with a proxy configured the look is skipped, as the proxy is what gRPC connects to.
 */
async function refusedAt(address: string, options: object): Promise<string | undefined> {
  const proxyEnv = ['grpc_proxy', 'https_proxy', 'http_proxy', 'GRPC_PROXY', 'HTTPS_PROXY', 'HTTP_PROXY'];
  if ('proxy' in options && (options as { proxy?: unknown }).proxy) return undefined;
  // gRPC reads its proxy from this process's environment itself.
  if (proxyEnv.some((v) => process.env[v])) return undefined;
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address.replace(/^[a-z]+:\/\//i, ''));
  if (!m) return undefined;
  const [, host, port] = m;
  return new Promise((resolve) => {
    const socket = net.connect({ host: host!, port: Number(port) });
    const done = (reason: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(undefined), 2_000);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') done('connection refused');
      else if (err.code === 'ENOTFOUND') done(`unknown host ${host}`);
      else done(undefined);
    });
  });
}

/** The task queue of workflows and model calls: FAHEEM_TASK_QUEUE, default `faheem`. */
export function taskQueue(env: Settings | ConnectionSettings = clientSettings()): string {
  return connectionOf(env).taskQueue;
}

/** Tools run on the host that has the workspace; by default this host (FAHEEM_HOST_ID, else the hostname). */
export function toolTaskQueue(env: Settings | ConnectionSettings = clientSettings()): string {
  return connectionOf(env).toolTaskQueue;
}
