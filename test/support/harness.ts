// Real parts for tests: a Temporal dev server (the official CLI), worker processes, a scripted
// OpenAI-compatible model, a temporary workspace. Nothing here mocks Temporal.
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { execa, type ResultPromise } from 'execa';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevServer, type DevServer, type DevServerOptions } from '../../src/server/dev-server.js';
import { ServerStartError } from '../../src/core/errors.js';
import { findTemporalCli } from '../../src/server/temporal-cli.js';
import { startScriptedModel, type Script, type ScriptedModel } from '../../src/testing/scripted-model.js';
import { startScriptedAnthropic, type ScriptedAnthropicOptions } from '../../src/testing/scripted-anthropic.js';
import { startScriptedResponses, type ScriptedResponsesOptions } from '../../src/testing/scripted-responses.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import { testNamespace } from './namespace.js';
import { LIVE_DIVISION } from '../../src/live/stream-id.js';
import { listQueryText, type ListFilter } from '../../src/conversation/list-query.js';
import { storeSettings } from '../../src/settings/store.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FAKE_KEY = 'sk-faheem-test-secret-4f1c9a7e2b';
/** The Temporal CLI the tests' servers run (TEMPORAL_CLI); unset: found or installed by findTemporalCli. */
export const TEMPORAL_CLI = process.env.TEMPORAL_CLI;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * A dev server of this test's own on free ports. A port found free can be taken before the server
 * binds it (files run side by side, and outgoing connections draw from the same range), so a server
 * that exits at start is tried again on new ports, three times in all. `pickPort` finds a port
 * (a test gives one that is taken).
 */
export async function startDevServerOnFreePorts(
  options: Omit<DevServerOptions, 'port' | 'uiPort' | 'httpPort' | 'temporalCli'> = {},
  pickPort: () => Promise<number> = freePort,
): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort();
    const uiPort = options.headless ? undefined : await pickPort();
    const httpPort = await freePort();
    try {
      return await startDevServer({ ...options, temporalCli: TEMPORAL_CLI, port, httpPort, ...(uiPort ? { uiPort } : {}) });
    } catch (err) {
      const portTaken = err instanceof ServerStartError && err.exitedAtStart;
      if (!portTaken || attempt >= 3) throw err;
    }
  }
}

let staleWarned = false;
/**
 * The workflow bundle `npm run build` made (dist/workflow-bundle.js), so no test webpacks. Worker
 * processes run dist/ too (bin/faheem.js), so a dist/ older than src/ is only warned about.
 */
export async function workflowBundle(): Promise<string> {
  const file = path.join(ROOT, 'dist', 'workflow-bundle.js');
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` (\`npm test\` does) before the tests`);
  if (!staleWarned && newestMtime(path.join(ROOT, 'src')) > statSync(file).mtimeMs) {
    staleWarned = true;
    console.warn('warning: src/ changed after the last build; worker processes run dist/. Run `npm run build` (npm test does).');
  }
  return file;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** The Temporal server a harness uses: its own dev server, or the run's shared one (no process then). */
export interface HarnessServer {
  address: string;
  /** The frontend's HTTP API (the CLI's quick paths), when known. */
  httpUrl?: string;
  /** The one Host name the HTTP API answers to (DevServer.httpHost). */
  httpHost?: string;
  uiUrl?: string;
  process?: DevServer['process'];
  stop(): Promise<void>;
}

export interface Harness {
  server: HarnessServer;
  /** Its own namespace on the run's shared dev server; `default` on a dev server of its own. */
  namespace: string;
  client: Client;
  model: ScriptedModel;
  home: string;
  /** The environment a worker or CLI process gets. */
  env: Record<string, string>;
  startWorker(extraEnv?: Record<string, string>, args?: string[]): Promise<WorkerProcess>;
  /** Kills the Temporal server with SIGKILL and starts it again on the same port and SQLite file. */
  restartServer(): Promise<void>;
  workspace(): Promise<string>;
  /** Runs `faheem <args>` with the harness's environment (plus `opts.env`). */
  cli(
    args: string[],
    opts?: { reject?: boolean; env?: Record<string, string> },
  ): Promise<{ stdout: string; stderr: string; exitCode: number }>;
  close(): Promise<void>;
}

export interface WorkerProcess {
  process: ResultPromise;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * With FAHEEM_RECORD_HISTORIES=1, every conversation a test file ran, and its live stream, is saved under test/histories/
 * so that test/workflow/replay.test.ts can prove later workflow code still replays it. The file's earlier
 * recordings are replaced; with FAHEEM_HISTORY_TAG=<tag> they are kept and the new ones added as
 * `<name>-<tag>--<id>.json` (histories of the code as it is now, beside those of older code). Each
 * earlier run of a conversation that continued as new is kept as `<name>--<id>@<run id>.json`.
 */
async function recordHistories(client: Client, address: string, name: string): Promise<void> {
  const cli = await findTemporalCli(TEMPORAL_CLI);
  const dir = path.join(ROOT, 'test', 'histories');
  await mkdir(dir, { recursive: true });
  for (const old of await readdir(dir)) if (old.startsWith(`${name}--`)) await rm(path.join(dir, old));
  // Every run of a conversation: the latest as `<name>--<id>.json`, each earlier run (continued as
  // new) as `<name>--<id>@<run id>.json`, so a run that started from carried state is kept too.
  const seen = new Set<string>();
  // Stream workflows are listed only by a query that names their division (live/stream-id.ts).
  const query = `(TemporalNamespaceDivision = '${LIVE_DIVISION}' OR TemporalNamespaceDivision IS NULL) AND WorkflowType IN ('conversation', 'liveStream')`;
  for await (const wf of client.workflow.list({ query })) {
    // The CLI writes the standard proto JSON that historyFromJSON reads back.
    const { stdout } = await execa(cli, ['workflow', 'show', '--address', address, '-w', wf.workflowId, '-r', wf.runId, '-o', 'json']);
    const file = seen.has(wf.workflowId) ? `${name}--${wf.workflowId}@${wf.runId}.json` : `${name}--${wf.workflowId}.json`;
    seen.add(wf.workflowId);
    await writeFile(path.join(dir, file), stdout);
  }
}

/**
 * The client's gRPC retries, counted while in backoff. Temporal's retry interceptor starts the next
 * attempt from a timer, which throws "Channel has been shut down" out of the timer (an uncaught
 * exception) when the connection closed meanwhile; a query refused with RESOURCE_EXHAUSTED (the
 * workflow's query buffer is full while a task runs) waits a second or more there. `close()` waits
 * for those attempts to have started before it closes the connection, and from then on no call is
 * tried again (one cut off by the close would otherwise start its retry on the closed channel).
 */
export function countedRetries(): { interceptor: ReturnType<typeof makeGrpcRetryInterceptor>; inBackoff(): number; close(): void } {
  const options = defaultGrpcRetryOptions();
  let waiting = 0;
  let closing = false;
  const interceptor = makeGrpcRetryInterceptor({
    // Closing: a call cut off by the close (a poll left under way) fails instead of trying again.
    retryableDecider: (attempt, status) => !closing && options.retryableDecider(attempt, status),
    delayFunction(attempt, status) {
      const ms = options.delayFunction(attempt, status);
      waiting++;
      // Set after the interceptor's own timer of the same delay, so it fires after the attempt began.
      setTimeout(() => waiting--, ms);
      return ms;
    },
  });
  return { interceptor, inBackoff: () => waiting, close: () => (closing = true) };
}

export async function startHarness(options: {
  name: string;
  script: Script;
  db?: string;
  port?: number;
  record?: boolean;
  ui?: boolean;
  /** The Web UI's port (with `ui`); default a free one. */
  uiPort?: number;
  /** Extra environment for workers, the CLI and the harness's own client (e.g. FAHEEM_ENCRYPTION_KEY). */
  env?: Record<string, string>;
  /** The Web UI decodes payloads through this codec server (`--ui-codec-endpoint`). */
  codecEndpoint?: string;
  /**
   * Which scripted model server: the OpenAI-compatible one (default, `openai/gpt-4o-mini`) or the
   * Anthropic Messages one (`anthropic/claude-sonnet-4-6` through ANTHROPIC_BASE_URL), same scripts.
   */
  api?: 'openai' | 'anthropic' | 'responses';
  /** Options of the scripted Anthropic server (with `api: 'anthropic'`). */
  anthropic?: ScriptedAnthropicOptions;
  /** Options of the scripted Responses server (with `api: 'responses'`: `openai/gpt-5.5`, LLM_WIRE_API=responses). */
  responses?: ScriptedResponsesOptions;
  /** `false`: a server of the file's own without worker commands (as an older server is). */
  workerCommands?: false;
  /** `false`: a server of the file's own without task-queue fairness (first come, first served). */
  fairness?: false;
}): Promise<Harness> {
  // The run's shared dev server (test/support/run-tests.ts) unless this file needs one of its own:
  // to kill or restart it (a SQLite file, a port), to show the Web UI, or to record histories.
  const shared = process.env.FAHEEM_TEST_TEMPORAL_ADDRESS;
  const own =
    !shared ||
    options.db !== undefined ||
    options.port !== undefined ||
    options.ui ||
    options.codecEndpoint !== undefined ||
    options.workerCommands === false ||
    options.fairness === false ||
    process.env.FAHEEM_RECORD_HISTORIES === '1';
  const serverOptions = {
    temporalCli: TEMPORAL_CLI,
    headless: !options.ui,
    ...(options.db ? { db: options.db } : {}),
    ...(options.codecEndpoint ? { codecEndpoint: options.codecEndpoint } : {}),
    ...(options.workerCommands === false ? { workerCommands: false } : {}),
    ...(options.fairness === false ? { fairness: false } : {}),
  };
  const ownServer = async (): Promise<DevServer> => {
    if (options.port === undefined && options.uiPort === undefined) return startDevServerOnFreePorts(serverOptions);
    const port = options.port ?? (await freePort());
    const uiPort = options.ui ? (options.uiPort ?? (await freePort())) : undefined;
    return startDevServer({ ...serverOptions, port, httpPort: await freePort(), ...(uiPort ? { uiPort } : {}) });
  };
  // Everything that started is stopped when another part fails: a scripted model left listening
  // would keep the test file's process alive after its tests, and the run would never end.
  const started = await Promise.allSettled([
    own
      ? ownServer()
      : Promise.resolve<HarnessServer>({
          address: shared,
          ...(process.env.FAHEEM_TEST_TEMPORAL_HTTP ? { httpUrl: process.env.FAHEEM_TEST_TEMPORAL_HTTP } : {}),
          ...(process.env.FAHEEM_TEST_TEMPORAL_HTTP_HOST ? { httpHost: process.env.FAHEEM_TEST_TEMPORAL_HTTP_HOST } : {}),
          stop: async () => {},
        }),
    options.api === 'anthropic'
      ? startScriptedAnthropic(options.script, options.anthropic)
      : options.api === 'responses'
        ? startScriptedResponses(options.script, options.responses)
        : startScriptedModel(options.script),
    workflowBundle(),
  ]);
  const [s, m, b] = started;
  if (s.status !== 'fulfilled' || m.status !== 'fulfilled' || b.status !== 'fulfilled') {
    await Promise.allSettled([
      s.status === 'fulfilled' ? s.value.stop() : undefined,
      m.status === 'fulfilled' ? m.value.close() : undefined,
    ]);
    const failed = [s, m, b].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    throw failed?.reason;
  }
  const [server, model, bundle] = [s.value, m.value, b.value];
  // The ports the server has, for a restart on the same ones.
  const port = Number(server.address.split(':').pop());
  const uiPort = server.uiUrl ? Number(new URL(server.uiUrl).port) : undefined;
  const httpPort = server.httpUrl ? Number(new URL(server.httpUrl).port) : undefined;
  const retries = countedRetries();
  const connection = await Connection.connect({ address: server.address, interceptors: [retries.interceptor] });
  const namespace = own ? 'default' : await testNamespace(connection, options.name);
  const home = await mkdtemp(path.join(tmpdir(), 'faheem-home-'));
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: namespace,
    // The CLI's quick paths (status, pause) use the server's HTTP API; unknown, the gRPC path.
    FAHEEM_TEMPORAL_HTTP: server.httpUrl ?? 'off',
    ...(server.httpHost ? { FAHEEM_TEMPORAL_HTTP_HOST: server.httpHost } : {}),
    LLM_MODEL:
      options.api === 'anthropic' ? 'anthropic/claude-sonnet-4-6' : options.api === 'responses' ? 'openai/gpt-5.5' : 'openai/gpt-4o-mini',
    ...(options.api === 'responses' ? { LLM_WIRE_API: 'responses' } : {}),
    LLM_API_KEY: FAKE_KEY,
    LLM_BASE_URL: model.baseUrl,
    ...(options.api === 'anthropic' ? { ANTHROPIC_BASE_URL: model.baseUrl } : {}),
    FAHEEM_HOME: home,
    FAHEEM_WORKFLOW_BUNDLE: bundle,
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    ...options.env,
  };
  const client = new Client({ connection, namespace, dataConverter: dataConverter(storeSettings(env)) });
  const workers: WorkerProcess[] = [];
  const workspaces: string[] = [];

  const harness: Harness = {
    server,
    namespace,
    async restartServer() {
      if (!options.db || !harness.server.process) throw new Error('restartServer needs a db file');
      harness.server.process.kill('SIGKILL');
      await harness.server.process;
      harness.server = await startDevServer({
        temporalCli: TEMPORAL_CLI,
        port,
        headless: !options.ui,
        ...(uiPort ? { uiPort } : {}),
        ...(httpPort ? { httpPort } : {}),
        db: options.db,
        ...(options.codecEndpoint ? { codecEndpoint: options.codecEndpoint } : {}),
        ...(options.workerCommands === false ? { workerCommands: false } : {}),
        ...(options.fairness === false ? { fairness: false } : {}),
      });
    },
    client,
    model,
    home,
    env,
    async startWorker(extraEnv = {}, args = []) {
      let out = '';
      const child = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'worker', ...args], {
        cwd: ROOT,
        env: { ...env, ...extraEnv },
        all: true,
        reject: false,
      });
      child.all?.on('data', (d: Buffer) => (out += d.toString()));
      const w: WorkerProcess = {
        process: child,
        output: () => out,
        kill: async (signal = 'SIGTERM') => {
          child.kill(signal);
          await child;
        },
      };
      workers.push(w);
      // Ready when it has polled: wait for its banner line.
      const deadline = Date.now() + 60_000;
      while (!out.includes('faheem worker: task queues')) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return w;
    },
    async workspace() {
      const dir = await mkdtemp(path.join(tmpdir(), 'faheem-ws-'));
      workspaces.push(dir);
      return dir;
    },
    async cli(args, opts = {}) {
      const r = await execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], {
        cwd: ROOT,
        env: { ...env, ...opts.env },
        reject: false,
      });
      if (opts.reject !== false && r.exitCode !== 0) throw new Error(`faheem ${args.join(' ')} failed (${r.exitCode}): ${r.stderr}`);
      return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode ?? -1 };
    },
    async close() {
      if (process.env.FAHEEM_RECORD_HISTORIES === '1' && options.record !== false) {
        const tag = process.env.FAHEEM_HISTORY_TAG;
        await recordHistories(client, server.address, tag ? `${options.name}-${tag}` : options.name);
      }
      await Promise.all(workers.map((w) => (w.process.exitCode === null ? w.kill('SIGKILL') : undefined)));
      retries.close();
      await waitFor('the retries in backoff to start', () => retries.inBackoff() === 0, 30_000, 20);
      await connection.close();
      await model.close();
      await harness.server.stop();
      // The file's temporary folders go with it (force: a test may have removed one itself).
      await Promise.all([home, ...workspaces].map((d) => rm(d, { recursive: true, force: true }).catch(() => undefined)));
    },
  };
  return harness;
}

/**
 * Waits until the visibility store lists conversation `id` under `filter` (the query `faheem list`
 * and the console run; `closed`: and its workflow closed), with the harness's client: a wait for the store to catch up that costs no
 * CLI process (~1.5 CPU-s each) per poll. A test then asks the CLI once, and asserts what it prints.
 */
export async function waitUntilListed(
  h: Pick<Harness, 'client'>,
  filter: ListFilter,
  id: string,
  options: { closed?: boolean; timeoutMs?: number } = {},
): Promise<void> {
  let query = `${listQueryText(filter)} AND WorkflowId = '${id.replace(/'/g, "''")}'`;
  if (options.closed) query += ` AND ExecutionStatus != 'Running'`;
  await waitFor(
    `${id} to be listed with ${JSON.stringify(filter)}`,
    async () => {
      for await (const found of h.client.workflow.list({ query, pageSize: 1 })) if (found.workflowId === id) return true;
      return false;
    },
    options.timeoutMs ?? 60_000,
  );
}

/**
 * Polls `check` until it returns a truthy value or the deadline passes (then fails with `what`).
 * The first checks come quickly (20 ms apart), then further apart, up to `everyMs`: most checks are
 * a query, which costs ~7 ms of CPU between the worker, the server and this process, and files run
 * side by side on two cores, so polling a long wait at a fixed 50 ms cost the other files a tenth
 * of a core each.
 */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000, everyMs = 200): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let interval = Math.min(20, everyMs);
  for (;;) {
    try {
      const v = await check();
      if (v) return v as Truthy<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, interval));
    interval = Math.min(everyMs, Math.ceil(interval * 1.5));
  }
}
type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Every string in a fetched history, payloads decoded (they are bytes, which JSON.stringify would
 * print as numbers and so hide from a search).
 */
export function historyText(history: unknown): string {
  const parts: string[] = [];
  const walk = (v: unknown): void => {
    if (v instanceof Uint8Array) parts.push(Buffer.from(v).toString('utf8'));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'string') parts.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(history);
  return parts.join('\n');
}
