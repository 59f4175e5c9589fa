// The dev server a test starts for itself: a port taken before the server binds it is tried again
// on new ports (files run side by side, so a port found free can be gone a moment later).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';
import { ServerStartError } from '../../../src/core/errors.js';
import { freePort, startDevServerOnFreePorts } from '../../support/harness.js';

/** Listens on a free port (holding it) and says which; a connection to it is dropped at once. */
async function holdPort(): Promise<{ server: Server; port: number }> {
  // Dropped, so that the dev server's readiness check fails fast and keeps no socket open here.
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return { server, port: (server.address() as { port: number }).port };
}

test('a dev server whose port is taken at start is started again on another port', async () => {
  const held = await holdPort();
  const picked: number[] = [];
  try {
    // The first port handed out is taken, as when another file's process got it in between.
    const server = await startDevServerOnFreePorts({ headless: true }, async () => {
      const port = picked.length === 0 ? held.port : await freePort();
      picked.push(port);
      return port;
    });
    try {
      assert.equal(picked.length, 2, 'a second port was tried');
      assert.equal(server.address, `127.0.0.1:${picked[1]}`);
    } finally {
      await server.stop();
    }
  } finally {
    held.server.close();
  }
});

test('a port that stays taken ends in a ServerStartError that says so, after three tries', async () => {
  const held = await holdPort();
  let tries = 0;
  try {
    await assert.rejects(
      startDevServerOnFreePorts({ headless: true }, async () => {
        tries++;
        return held.port;
      }),
      (err: unknown) =>
        err instanceof ServerStartError && err.exitedAtStart && /port \d+ is taken \(address already in use\)/.test(err.message),
    );
    assert.equal(tries, 3);
  } finally {
    held.server.close();
  }
});
