// The Temporal service and worker an editor's `faheem acp` needs. When something answers at the
// configured address it is used as it is (with its own workers); when nothing does, the embedded
// defaults start here: the dev server with its database under FAHEEM_HOME, and a worker in this
// process. Neither writes to stdout (ACP's channel): the server's output is dropped, logs go to stderr.
import type { Client } from '@temporalio/client';
import path from 'node:path';
import { connectClient, connectConfig } from '../connection.js';
import { ServerUnreachableError } from '../core/errors.js';
import { faheemHome } from '../home.js';
import type { Settings } from '../environment.js';
import { connectionSettings } from '../settings/connection.js';
import { startDevServer, type DevServer } from '../server/dev-server.js';
import { createWorker, type WorkerHandle } from '../worker.js';

/** A client, and what was started for it (stopped by `stop`). */
export interface AcpBackend {
  client: Client;
  /** A worker runs in this process (its environment can take the MCP servers' values). */
  embeddedWorker: boolean;
  server?: DevServer;
  worker?: WorkerHandle;
  stop(): Promise<void>;
}

/** Connects to the configured Temporal service, or starts the embedded defaults when nothing answers there. */
export async function acpBackend(log: (line: string) => void, settings: Settings): Promise<AcpBackend> {
  try {
    const client = await connectClient(settings);
    return { client, embeddedWorker: false, stop: () => client.connection.close() };
  } catch (err) {
    if (!(err instanceof ServerUnreachableError)) throw err;
  }
  const address = connectConfig(settings).connectionOptions.address;
  const m = /^(?:[a-z]+:\/\/)?\[?([^\]]*?)\]?:(\d+)$/i.exec(address);
  const host = m?.[1] ?? '';
  if (!m || !['localhost', '127.0.0.1', '::1', '0.0.0.0'].includes(host)) {
    throw new ServerUnreachableError(address, 'nothing answers there, and embedded defaults start only on this machine (localhost)');
  }
  const db = path.join(faheemHome(settings), 'temporal.db');
  log(`faheem acp: nothing answers at ${address}; starting the embedded Temporal dev server (data in ${db}) and a worker`);
  const port = Number(m[2]);
  const ip = host === 'localhost' || host === '::1' ? '127.0.0.1' : host;
  const options = {
    temporalCli: connectionSettings(settings).temporalCli,
    port,
    ip,
    db,
    accessHome: faheemHome(settings),
    stdio: 'ignore',
    log,
  } as const;
  const server = await startDevServer({ ...options, headless: false }).catch(() =>
    // The Web UI's port may be taken: the service matters, the UI does not.
    startDevServer({ ...options, headless: true }),
  );
  if (server.uiUrl) log(`faheem acp: Temporal Web UI at ${server.uiUrl}`);
  const worker = await createWorker();
  const running = worker.run().catch((err: unknown) => log(`faheem acp: the worker stopped: ${(err as Error).message}`));
  const client = await connectClient();
  return {
    client,
    embeddedWorker: true,
    server,
    worker,
    stop: async () => {
      await client.connection.close().catch(() => undefined);
      try {
        worker.shutdown();
      } catch {
        // already stopping
      }
      await running;
      await server.stop();
    },
  };
}
