// `faheem api`: the team API served over HTTP (or HTTPS with a certificate) on Node, by
// @hono/node-server. Loopback unless told otherwise; the CLI warns when it is not.
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createApiApp, type ApiOptions } from './app.js';

export { DEFAULT_API_PORT } from './defaults.js';

/** A running API: its base URL and how to stop it. */
export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/** Serves the team API on `host:port` (0: a free port); with `tls`, over HTTPS. */
export async function startApi(
  options: ApiOptions & { host: string; port: number; tls?: { certFile: string; keyFile: string } },
): Promise<RunningApi> {
  const app = createApiApp(options);
  const tls = options.tls ? { cert: await readFile(options.tls.certFile), key: await readFile(options.tls.keyFile) } : undefined;
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve(
      {
        fetch: app.fetch,
        port: options.port,
        hostname: options.host,
        ...(tls ? { createServer: createHttpsServer, serverOptions: tls } : {}),
      },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${tls ? 'https' : 'http'}://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
