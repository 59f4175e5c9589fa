// A front for the Temporal Web UI that answers only requests addressed to this machine by name.
// The UI server accepts any Host header, and its CSRF token is a cookie a same-origin page may
// read: a page whose name is DNS-rebound to 127.0.0.1 is same-origin with the UI, and could start a
// conversation through it (with any workspace, model endpoint or MCP server). The guard checks the
// Host (and, when there is one, the Origin) against the names the UI is served under before a
// byte goes on, and passes everything else through unchanged.
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';

/** A running guard: where it listens, and how to stop it. */
export interface HostGuard {
  port: number;
  close(): Promise<void>;
}

/**
 * The `host:port` names a server bound to `ip` on `port` is reached under from this machine: the
 * loopback names, and the address it is bound to; bound to every address (0.0.0.0), also each of
 * this host's addresses and its hostname.
 */
export function allowedHostNames(ip: string, port: number): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '[::1]', ip.includes(':') ? `[${ip}]` : ip]);
  if (ip === '0.0.0.0' || ip === '::') {
    names.add(os.hostname().toLowerCase());
    for (const infos of Object.values(os.networkInterfaces())) {
      for (const i of infos ?? []) names.add(i.family === 'IPv6' ? `[${i.address}]` : i.address);
    }
  }
  return new Set([...names].map((n) => `${n}:${port}`));
}

/**
 * Whether a request may pass: its Host is one of `allowed` (exactly, case aside), and its Origin,
 * when it sends one, is http(s) on one of them too. No Host (HTTP/1.0) is refused.
 */
export function hostAllowed(headers: http.IncomingHttpHeaders, allowed: ReadonlySet<string>): boolean {
  const host = headers.host?.toLowerCase();
  if (!host || !allowed.has(host)) return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && allowed.has(url.host.toLowerCase());
  } catch {
    return false; // "null" (a sandboxed frame, a file:// page) and anything malformed
  }
}

/**
 * Listens on `ip:port` and passes requests (and upgrades) whose Host and Origin are allowed to the
 * server at 127.0.0.1:`targetPort`; any other gets a 403 in plain text, its body unread.
 */
export async function startHostGuard(options: {
  ip: string;
  port: number;
  targetPort: number;
  allowed: ReadonlySet<string>;
}): Promise<HostGuard> {
  const refuse = (res: http.ServerResponse) => {
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
    res.end('This server answers only requests addressed to it by its own name (the Host or Origin is not one of them).\n');
  };
  const server = http.createServer((req, res) => {
    if (!hostAllowed(req.headers, options.allowed)) {
      refuse(res);
      req.socket.destroySoon();
      return;
    }
    const upstream = http.request(
      { host: '127.0.0.1', port: options.targetPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    // A client that goes away takes its upstream request with it.
    res.on('close', () => upstream.destroy());
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end('The Web UI did not answer.\n');
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    if (!hostAllowed(req.headers, options.allowed)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\n\r\n');
      return;
    }
    const target = net.connect(options.targetPort, '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      target.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) target.write(head);
      socket.pipe(target).pipe(socket);
    });
    const close = () => {
      socket.destroy();
      target.destroy();
    };
    target.on('error', close);
    socket.on('error', close);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.ip, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
