// `faheem console`: serves the web console for people until Ctrl-C (see src/console-server/server.ts).
import { Command, InvalidArgumentError } from 'commander';
import pc from 'picocolors';
import { connectClient } from '../connection.js';
import { UsageError } from '../core/errors.js';
import { DEFAULT_CONSOLE_PORT, startConsole } from '../console-server/server.js';
import { exposureWarning } from '../server/exposure.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0 picks a free one)');
  return n;
}

/** The `console` command: prints the URL to open (with its token) and serves until Ctrl-C. */
export function consoleCommand(): Command {
  return new Command('console')
    .description('a web page to watch and control conversations; prints the URL to open (it carries a token)')
    .option('--port <port>', 'port to listen on (0: a free one)', port, DEFAULT_CONSOLE_PORT)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--ip <ip>', 'the same as --host (the name `server` and `codec-server` use)')
    .action(async (opts: { port: number; host: string; ip?: string }) => {
      const o = { ...opts, host: opts.ip ?? opts.host };
      const flag = opts.ip !== undefined ? '--ip' : '--host';
      const client = await connectClient();
      const server = await startConsole({ client, host: o.host, port: o.port }).catch(async (err: NodeJS.ErrnoException) => {
        await client.connection.close();
        if (err.code === 'EADDRINUSE')
          throw new UsageError(`port ${o.port} on ${o.host} is in use: pass another --port (0 picks a free one)`);
        if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') throw new UsageError(`cannot listen on ${o.host}: ${err.message}`);
        throw err;
      });
      console.log(server.url);
      console.error(
        pc.dim(
          `faheem console on ${server.origin} (namespace ${client.options.namespace}); open the URL above, it carries the token. Ctrl-C stops it.`,
        ),
      );
      const exposed = exposureWarning('console', o.host, flag);
      if (exposed) console.error(pc.yellow(`faheem console: ${exposed}`));
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await server.close();
      await client.connection.close();
    });
}
