// The main job in one command (`npm run demo`): the embedded Temporal dev server, a worker and the
// seed's pause-and-resume conversation. With no model configured it uses the OFFLINE SCRIPTED MODEL,
// a stand-in that replays a fixed script, and says so.
import { Connection } from '@temporalio/client';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import pc from 'picocolors';
import { connectClient } from '../src/connection.js';
import { startDevServer, type DevServer } from '../src/server/dev-server.js';
import { PROJECT_ROOT } from '../src/server/temporal-cli.js';
import { faheemHome } from '../src/home.js';
import { SCRIPTED_DEMO } from '../src/models/worker-model.js';
import { createWorker } from '../src/worker.js';
import { pauseAndResume } from './pause-and-resume.js';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
process.env.TEMPORAL_ADDRESS = address;

async function reachable(): Promise<boolean> {
  try {
    const c = await Connection.connect({ address, connectTimeout: '1 second' });
    await c.close();
    return true;
  } catch {
    return false;
  }
}

let server: DevServer | undefined;
// Where `npx faheem server` keeps its database too: outside the project, so a conversation whose
// workspace is the project never holds every conversation's history.
const home = faheemHome(process.env);
const db = path.join(home, 'temporal.db');
if (!(await reachable())) {
  const port = Number(address.split(':').pop());
  console.log(pc.dim(`Starting the embedded Temporal dev server on ${address} (data in ${db}) …`));
  server = await startDevServer({
    temporalCli: process.env.TEMPORAL_CLI,
    port,
    db,
    accessHome: home,
    log: (l) => console.log(pc.dim(l)),
  });
} else {
  console.log(pc.dim(`Using the Temporal server already running at ${address}.`));
}

// The worker serves the offline scripted model itself for LLM_MODEL=scripted/demo (and says so).
const scripted = !process.env.LLM_API_KEY && !process.env.LLM_BASE_URL;
if (scripted) {
  process.env.LLM_MODEL = SCRIPTED_DEMO;
  console.log(
    pc.yellow(
      `No model configured (LLM_API_KEY / LLM_BASE_URL unset): using the OFFLINE SCRIPTED MODEL (LLM_MODEL=${SCRIPTED_DEMO}), a stand-in that replays a fixed script.\n` +
        'For a real agent set LLM_MODEL (e.g. anthropic/claude-sonnet-4-6), LLM_API_KEY and, for other endpoints, LLM_BASE_URL.',
    ),
  );
}

const worker = await createWorker();
const workerDone = worker.run();
const client = await connectClient();

const workspace = path.join(PROJECT_ROOT, '.faheem', 'demo-workspace');
await rm(workspace, { recursive: true, force: true });
await mkdir(workspace, { recursive: true });
console.log(pc.dim(`Workspace: ${workspace}\n`));

const conversation = await pauseAndResume(client, workspace);

for (const file of ['countdown.txt', 'hello.txt']) {
  const text = await readFile(path.join(workspace, file), 'utf8').catch(() => undefined);
  console.log(
    pc.dim(
      `\n${file}: ${text === undefined ? '(not created)' : `${text.split('\n').filter(Boolean).length} line(s), starts ${JSON.stringify(text.slice(0, 20))}`}`,
    ),
  );
}
const ui = server?.uiUrl ?? 'http://localhost:8233';
console.log(`\nSee every model call and command: ${ui}/namespaces/default/workflows/${conversation.id}`);
console.log(`Or: npx faheem events ${conversation.id}`);
console.log('Watch and control conversations in a browser: npx faheem console');

// The link above needs the server (and, for the UI's queries, the worker): when the demo started the
// server, keep everything up until Ctrl-C. FAHEEM_DEMO_EXIT=1 (for scripts) stops at once.
if (server && process.env.FAHEEM_DEMO_EXIT !== '1') {
  console.log(pc.bold(`\nThe Web UI stays up at ${ui} — press Ctrl-C to stop.`));
  console.log(
    pc.dim(
      'The server, the worker' +
        (scripted ? ' and the scripted model' : '') +
        ` keep running until then. The conversations stay in ${db}: ` +
        '`npx faheem server` (with `npx faheem worker`) opens them again later.',
    ),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  console.log(pc.dim('\nStopping the worker and the server …'));
}

await client.connection.close();
try {
  worker.shutdown();
} catch {
  // Already stopping: the Temporal runtime shuts workers down on SIGINT by itself.
}
await workerDone;
if (server && process.env.FAHEEM_DEMO_KEEP_SERVER !== '1') await server.stop();
process.exit(0);
