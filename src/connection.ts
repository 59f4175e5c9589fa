// How clients and workers reach Temporal: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TLS variables and envconfig TOML profiles (TEMPORAL_PROFILE), all through Temporal's own loader.
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection } from '@temporalio/worker';
import os from 'node:os';
import { dataConverter } from './storage/local-payloads.js';
import { DEFAULTS } from './types.js';

export function connectConfig() {
  const config = loadClientConnectConfig();
  const address = config.connectionOptions.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
  return {
    connectionOptions: { ...config.connectionOptions, address },
    namespace: config.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
  };
}

export class ServerUnreachableError extends Error {}

export async function connectClient(): Promise<Client> {
  const { connectionOptions, namespace } = connectConfig();
  try {
    const connection = await Connection.connect({ ...connectionOptions, connectTimeout: '5 seconds' } as Parameters<typeof Connection.connect>[0]);
    return new Client({ connection, namespace, dataConverter: dataConverter() });
  } catch (err) {
    throw new ServerUnreachableError(
      `cannot reach Temporal at ${connectionOptions.address} (${(err as Error).message}). ` +
        'Start one with `npx faheem server`, or set TEMPORAL_ADDRESS.',
    );
  }
}

export async function connectWorker(): Promise<{ connection: NativeConnection; namespace: string }> {
  const { connectionOptions, namespace } = connectConfig();
  const connection = await NativeConnection.connect(connectionOptions);
  return { connection, namespace };
}

export function taskQueue(env: NodeJS.ProcessEnv = process.env): string {
  return env.FAHEEM_TASK_QUEUE || DEFAULTS.taskQueue;
}

/** Tools run on the host that has the workspace; by default this host. */
export function toolTaskQueue(env: NodeJS.ProcessEnv = process.env): string {
  return env.FAHEEM_TOOL_TASK_QUEUE || `${taskQueue(env)}-tools@${os.hostname()}`;
}
