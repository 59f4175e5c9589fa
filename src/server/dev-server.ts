// The embedded Temporal service: the official CLI's dev server on a SQLite file, so conversations
// survive a restart, with the Web UI and our search attributes registered.
import { ServerStartError } from '../core/errors.js';
import { Connection } from '@temporalio/client';
import type { ResultPromise } from 'execa';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { SEARCH_ATTRIBUTES } from '../client/search-attributes.js';
import { findTemporalCli } from './temporal-cli.js';
import { WORKER_COMMANDS_CONFIG } from '../client/pause-channel.js';
import { httpAccessFile, writeHttpAccess } from '../client/temporal-http.js';
import { allowedHostNames, startHostGuard, type HostGuard } from './host-guard.js';
import { devServerFailure, logTail, startDevServerLog } from './dev-server-log.js';

export interface DevServerOptions {
  /** The Temporal CLI to run (the entry point's TEMPORAL_CLI); undefined: `temporal` on PATH, else installed (findTemporalCli). */
  temporalCli: string | undefined;
  port?: number;
  uiPort?: number;
  /**
   * The frontend's HTTP API (default: `port` + 10, as a Temporal server's 7243 beside 7233). It
   * answers only to the random Host name in DevServer.httpHost (see HttpApiAccess).
   */
  httpPort?: number;
  /**
   * FAHEEM_HOME: where to leave the HTTP API's access (its URL and Host name, writeHttpAccess) for
   * the CLI's quick paths; absent: nowhere (they take the gRPC path).
   */
  accessHome?: string;
  /** SQLite file; `undefined` keeps everything in memory. */
  db?: string;
  headless?: boolean;
  ip?: string;
  /** Where the server's own output goes ('inherit' shows it); `logFile` wins over it. */
  stdio?: 'inherit' | 'ignore' | 'pipe';
  /**
   * Append the server's own output (its banner, its WARN/ERROR lines, the burst a Ctrl-C brings)
   * to this file instead (devServerLogFile); a start that fails says why from it.
   */
  logFile?: string;
  log?: (line: string) => void;
  /** A codec server (`faheem codec-server`) the Web UI decodes payloads with (`--ui-codec-endpoint`). */
  codecEndpoint?: string;
  /**
   * Worker commands (default true): the server sends an activity's cancellation straight to its
   * worker. `false` serves as an older server or a cluster without them (pauses then reach calls
   * through heartbeats).
   */
  workerCommands?: boolean;
  /**
   * Task-queue fairness (default true): backlogged tasks are dispatched in turn by fairness key
   * (a conversation's tenant), so one tenant's backlog does not hold up another's first call.
   * `false` serves as a server without it (first come, first served).
   */
  fairness?: boolean;
}

/**
 * The dynamic config that turns task-queue fairness on (server 1.32 of the CLI; it implies the new
 * matcher, `matching.useNewMatcher`).
 */
export const FAIRNESS_CONFIG = ['matching.enableFairness=true'];

export interface DevServer {
  address: string;
  /** The frontend's HTTP API, `http://ip:port` (the CLI's quick paths use it), when its port is known. */
  httpUrl?: string;
  /**
   * The one Host header the HTTP API answers (`faheem-<random>.invalid`); any other gets 403. No
   * browser can send it, so no web page (cross-origin, or DNS-rebound to this port) can call the API.
   */
  httpHost: string;
  /** Where the access was left (DevServerOptions.accessHome). */
  accessFile?: string;
  uiUrl?: string;
  process: ResultPromise;
  stop(): Promise<void>;
}

/**
 * Server settings for an agent's pace (see docs/behaviour.md). The dev server has one history
 * shard, and each shard reads its task queues at most 20 times a second by default: under steady
 * work every task (a workflow task, an activity) then waits ~40 ms before it is dispatched, which made
 * a step cost ~130 ms instead of ~20. Eager dispatch hands a model call straight back to the worker
 * that scheduled it (off by default in the server). Worker commands carry an activity's cancellation
 * (a pause) straight to its worker, so calls need not heartbeat ten times a second to hear it
 * (src/client/pause-channel.ts). Task queues have one partition, so that fairness (FAIRNESS_CONFIG) orders
 * all of a queue's waiting tasks.
 */
export const DYNAMIC_CONFIG = [
  'history.transferProcessorMaxPollRPS=1000',
  'history.timerProcessorMaxPollRPS=1000',
  'history.visibilityProcessorMaxPollRPS=1000',
  'system.enableActivityEagerExecution=true',
  // One partition per task queue: fairness orders the tasks within a partition, and with the
  // default four a scarce worker polled them at random, so a small tenant's call still waited
  // behind 3 to 19 of a large tenant's 20 (docs/benchmarks.md, bench:fairness). One process serves
  // every partition here anyway.
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
  // A list (`faheem list`, the console's) over SQLite on a busy machine can take over the default
  // 1 s, which the server logs as a warning nobody can act on; 10 s still marks a real problem.
  'system.visibilityPersistenceSlowQueryThreshold="10s"',
];

/** Whether the HTTP API at `url` answers a request with a Host it was not given with 403 (bounded: 5 s). */
async function refusesForeignHost(url: string): Promise<boolean> {
  const status = await httpApiStatus(url, 'faheem-check.invalid');
  return status === undefined || status === 403; // nothing answers there: nothing to call either
}

/** The status the HTTP face at `url` (the HTTP API, the Web UI) answers a namespace list with, for `host` (undefined: no answer in 5 s). */
function httpApiStatus(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/api/v1/namespaces`, { headers: { host }, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

/**
 * What answers gRPC at `address`: a Temporal server with faheem's search attributes (one `faheem
 * server` started), another Temporal server, or nothing that speaks Temporal (bounded: ~4 s).
 */
async function temporalAt(address: string): Promise<'faheem' | 'temporal' | 'other'> {
  const conn = Connection.lazy({ address, connectTimeout: '1 second' });
  try {
    await conn.ensureConnected();
    await conn.withDeadline(Date.now() + 2000, () => conn.workflowService.getSystemInfo({}));
  } catch {
    await conn.close().catch(() => undefined);
    return 'other';
  }
  try {
    const { customAttributes } = await conn.withDeadline(Date.now() + 2000, () =>
      conn.operatorService.listSearchAttributes({ namespace: 'default' }),
    );
    const names = Object.keys(customAttributes ?? {});
    return Object.keys(SEARCH_ATTRIBUTES).every((n) => names.includes(n)) ? 'faheem' : 'temporal';
  } catch {
    return 'temporal';
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** A port nothing listens on at 127.0.0.1 now (the system's pick). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Whether nothing listens on `port` (a listener opened and closed at once). */
function portFree(port: number, ip: string): Promise<boolean> {
  if (port > 65535) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, ip, () => probe.close(() => resolve(true)));
  });
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const { execa } = await import('execa'); // loaded when used: most CLI commands never run a program
  const cli = await findTemporalCli(options.temporalCli, options.log);
  const port = options.port ?? 7233;
  const ip = options.ip ?? '127.0.0.1';
  const address = `${ip}:${port}`;
  // A taken port is told before anything starts: otherwise the readiness check below would take
  // whatever answers there for the server it starts.
  if (!(await portFree(port, ip))) {
    const there = await temporalAt(`${ip === '0.0.0.0' ? '127.0.0.1' : ip}:${port}`);
    throw new ServerStartError(
      there === 'faheem'
        ? `a faheem server (Temporal with faheem's search attributes) already serves on ${address}; nothing started`
        : there === 'temporal'
          ? `port ${port} is taken by a Temporal server without faheem's search attributes; pass --port, or stop it`
          : `port ${port} is taken (address already in use) by something that is not a Temporal server; pass --port, or stop it`,
      { exitedAtStart: true, ...(there === 'faheem' ? { alreadyServing: true } : {}) },
    );
  }
  // port + 10 as a Temporal server has it; when something else holds it, another free one (the access
  // file names it). An access file left by an earlier server on this port goes first.
  const httpPort = options.httpPort ?? ((await portFree(port + 10, ip)) ? port + 10 : await freeLoopbackPort());
  if (options.accessHome) rmSync(httpAccessFile(options.accessHome, port), { force: true });
  if (options.db) await mkdir(path.dirname(path.resolve(options.db)), { recursive: true });
  const args = ['server', 'start-dev', '--port', String(port), '--ip', ip, '--log-level', 'warn'];
  if (httpPort !== undefined) args.push('--http-port', String(httpPort));
  // The Web UI listens on a loopback port of its own behind a guard on the public one, which
  // answers only requests addressed to this machine by name (host-guard.ts: DNS rebinding).
  const uiPort = options.uiPort ?? port + 1000;
  let guard: HostGuard | undefined;
  let innerUiUrl: string | undefined;
  if (options.headless) args.push('--headless');
  else {
    const inner = await freeLoopbackPort();
    innerUiUrl = `http://127.0.0.1:${inner}`;
    guard = await startHostGuard({ ip, port: uiPort, targetPort: inner, allowed: allowedHostNames(ip, uiPort) }).catch(
      (err: NodeJS.ErrnoException) => {
        throw new ServerStartError(
          err.code === 'EADDRINUSE'
            ? `the Web UI's port ${uiPort} is taken (address already in use); pass --ui-port`
            : `the Web UI's port ${uiPort}: ${err.message}`,
          { exitedAtStart: true },
        );
      },
    );
    args.push('--ui-port', String(inner), '--ui-ip', '127.0.0.1');
  }
  if (options.codecEndpoint && !options.headless) args.push('--ui-codec-endpoint', options.codecEndpoint);
  if (options.db) args.push('--db-filename', options.db);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  // The CLI always opens the HTTP API (on a random port when none is given): it answers only to a
  // name no browser can send, which the callers that need it are told (writeHttpAccess).
  const httpHost = `faheem-${randomBytes(16).toString('hex')}.invalid`;
  const settings = [
    ...DYNAMIC_CONFIG,
    ...(options.workerCommands === false ? [] : WORKER_COMMANDS_CONFIG),
    ...(options.fairness === false ? [] : FAIRNESS_CONFIG),
    `frontend.httpAllowedHosts=${JSON.stringify([httpHost])}`,
  ];
  for (const setting of settings) args.push('--dynamic-config-value', setting);
  // Idle workflows wait on a timer for days; the dev server's defaults are fine for that.
  if (options.logFile) startDevServerLog(options.logFile);
  const toLog = options.logFile ? { file: options.logFile, append: true } : undefined;
  const child = execa(cli, args, {
    ...(toLog ? { stdin: 'ignore', stdout: toLog, stderr: toLog } : { stdio: options.stdio ?? 'ignore' }),
    reject: false,
    cleanup: true,
  });
  let exited = false;
  void child.then(() => {
    exited = true;
    void guard?.close();
  });

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) {
      const why = options.logFile ? devServerFailure(logTail(options.logFile)) : undefined;
      throw new ServerStartError(
        why
          ? `the Temporal dev server exited at start: ${why}${/address already in use/.test(why) ? '; pass another port' : ''} (its log: ${options.logFile})`
          : `the Temporal dev server exited at start (is port ${port} taken?)`,
        { exitedAtStart: true },
      );
    }
    // Each try is bounded and its connection closed, answered or not: a port held by something that
    // is not a Temporal server must neither hang this loop nor leave a socket open.
    // A lazy connection, so there is one to close whether or not it connected.
    const conn = Connection.lazy({ address, connectTimeout: '1 second' });
    try {
      await conn.ensureConnected();
      await conn.withDeadline(Date.now() + 2000, () => conn.workflowService.getSystemInfo({}));
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new ServerStartError(`the Temporal dev server did not answer on ${address} within 60 s: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await conn.close().catch(() => undefined);
    }
  }
  const httpUrl = httpPort !== undefined ? `http://${ip === '0.0.0.0' ? '127.0.0.1' : ip}:${httpPort}` : undefined;
  // The HTTP API and the Web UI each have a gRPC client of their own, which may have dialled the
  // frontend before it listened: such a face answers 503 until its reconnect backoff ends (seconds
  // on a busy machine). Ready means every face answers.
  const faces = [
    ...(httpUrl ? [{ name: 'HTTP API', url: httpUrl, host: httpHost }] : []),
    ...(innerUiUrl ? [{ name: 'Web UI', url: innerUiUrl, host: new URL(innerUiUrl).host }] : []),
  ];
  for (const face of faces) {
    while (!exited) {
      const status = await httpApiStatus(face.url, face.host);
      if (status !== 503 && status !== undefined) break;
      if (Date.now() > deadline) {
        options.log?.(
          `warning: the Temporal dev server's ${face.name} (${face.url}) did not answer within 60 s (${status ?? 'no answer'})`,
        );
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  // A Temporal CLI of the operator's (on PATH) may be too old for httpAllowedHosts: say so.
  if (httpUrl && !(await refusesForeignHost(httpUrl))) {
    options.log?.(
      `warning: this Temporal CLI's HTTP API (${httpUrl}) answers any Host (frontend.httpAllowedHosts is not applied): a web page can call it; use the Temporal CLI faheem installs (unset TEMPORAL_CLI) or a newer one`,
    );
  }
  const accessFile =
    httpUrl && options.accessHome ? writeHttpAccess(options.accessHome, port, { url: httpUrl, host: httpHost }) : undefined;
  return {
    address,
    ...(httpUrl ? { httpUrl } : {}),
    httpHost,
    ...(accessFile ? { accessFile } : {}),
    ...(options.headless ? {} : { uiUrl: `http://${ip === '0.0.0.0' ? 'localhost' : ip}:${uiPort}` }),
    process: child,
    stop: async () => {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await child;
      clearTimeout(killer);
      await guard?.close();
      if (accessFile) rmSync(accessFile, { force: true });
    },
  };
}
