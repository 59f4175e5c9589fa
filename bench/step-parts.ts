// A step taken apart, every side in one run on one dev server, in turns (`npm run bench:step-parts [steps]`,
// default 200): issue #58's "a step ≤ Temporal's floor + the sandboxed command + 5 ms".
//   - ours: one conversation of N steps (a model call asking for one `echo`, then the command) with
//     the worker's defaults (the bwrap sandbox with its internet network, a checkpoint per step),
//     after an unmeasured one that warms the worker;
//   - the floor: Temporal's smallest loop of two no-op activities per step (bench/floor), warmed too,
//     and the same with its model call a local activity (what that lever could save at most);
//   - the sandboxed command alone: the terminal tool's own call (`echo`, under the sandbox the
//     worker would choose here, in a kept network), N times in this process;
//   - the model call alone: the same scripted model over HTTP with the openai client, N times.
// CPU a step of each process (server, worker, this one: the model server and the floor's workers),
// history events and bytes a step of each workflow, and what is left for our own code:
// ours − floor − command − model call. The sides take turns, BENCH_ROUNDS times (default 5), and
// each figure is the median of the rounds, so a load that comes and goes falls on every side.
// BENCH_LEVER_NODE_OPTIONS starts a second worker with those NODE_OPTIONS whose conversations take
// turns with the first one's: a lever tried against the defaults in the same run. A sanity line
// checks that every workflow ran every step.
import OpenAI from 'openai';
import os from 'node:os';
import { startHarness } from '../test/support/harness.js';
import { cpuMs, selfCpuMs } from './cpu.js';
import { withFloor } from './floor/floor.js';
import { addHistoryGaps } from './history-gaps.js';
import { sandboxName, sandboxedCommands } from './sandboxed-command.js';
import { pct, startBenchConversation, stepScript } from './step.js';

const steps = Number(process.argv[2] ?? 200);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
if (!Number.isInteger(steps) || steps < 10) throw new Error(`steps must be an integer ≥ 10, got ${process.argv[2]}`);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a positive integer, got ${process.env.BENCH_ROUNDS}`);
// A lever to try against the defaults in the same run: a second worker (its own task queues) started
// with these NODE_OPTIONS, its conversations in turns with the first one's.
const lever = process.env.BENCH_LEVER_NODE_OPTIONS;
const fmt = (n: number) => n.toFixed(1);
const median = (xs: number[]) => pct(xs, 50);

const h = await startHarness({ name: 'step-parts', script: stepScript(steps), record: false });
const worker = await h.startWorker();
const leverWorker = lever
  ? await h.startWorker({ NODE_OPTIONS: lever, FAHEEM_TASK_QUEUE: 'faheem-lever', FAHEEM_TOOL_TASK_QUEUE: 'faheem-tools@lever-host' })
  : undefined;
const serverPid = h.server.process?.pid;
console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}; ${rounds} rounds of ${steps} steps a side, in turns`,
);

interface Measured<T> {
  value: T;
  ms: number;
  server: number;
  worker: number;
  self: number;
}
/** Wall and CPU ms (the server, a worker, this process) while `fn` runs. */
async function measured<T>(workerPid: number | undefined, fn: () => Promise<T>): Promise<Measured<T>> {
  const before = { server: cpuMs(serverPid), worker: cpuMs(workerPid), self: selfCpuMs() };
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  return { value, ms, server: cpuMs(serverPid) - before.server, worker: cpuMs(workerPid) - before.worker, self: selfCpuMs() - before.self };
}

async function ourConversation(n: number, taskQueue?: string) {
  h.model.setScript(stepScript(n));
  const conversation = await startBenchConversation(h, {
    continueAsNewEverySteps: 10_000,
    ...(taskQueue ? { taskQueue, toolTaskQueue: 'faheem-tools@lever-host' } : {}),
  });
  const done = await conversation.waitUntilStopped({ timeoutMs: 600_000 });
  const description = await h.client.workflow.getHandle(conversation.id).describe();
  return {
    id: conversation.id,
    iterations: done.iterations,
    status: done.status,
    events: description.historyLength,
    bytes: description.historySize ?? NaN,
  };
}

// The command as the worker's terminal tool runs it (the sandbox resolved as the worker resolves it).
const commands = await sandboxedCommands(await h.workspace());
const sandbox = commands.sandbox;
const commandTimes = (n: number) => commands.times(n);

// The model call alone: the same server and client library as the worker's, streamed as it streams.
const openai = new OpenAI({ apiKey: 'x', baseURL: h.model.baseUrl, maxRetries: 0 });
async function modelTimes(n: number): Promise<number[]> {
  h.model.setScript(() => ({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo step' } }] }));
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const stream = await openai.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }] });
    for await (const chunk of stream) void chunk;
    times.push(performance.now() - t);
  }
  return times;
}

const calls = steps + 1; // N tool calls and a last model call that answers
type Round = { ours: number; lever?: number; floor: number; floorLocal: number; command: number; model: number };
const perRound: Round[] = [];
const oursRuns: Measured<Awaited<ReturnType<typeof ourConversation>>>[] = [];
const leverRuns: typeof oursRuns = [];
const floorRuns: Measured<{ id: string; ran: number; events: number; bytes: number }>[] = [];
// Warm-ups: the workers' first steps load code the later ones reuse; the floor warms itself.
await ourConversation(5);
if (leverWorker) await ourConversation(5, 'faheem-lever');
await withFloor(h.server.address, async (client) => {
  for (let r = 0; r < rounds; r++) {
    const ours = await measured(worker.process.pid, () => ourConversation(steps));
    oursRuns.push(ours);
    const leverRun = leverWorker ? await measured(leverWorker.process.pid, () => ourConversation(steps, 'faheem-lever')) : undefined;
    if (leverRun) leverRuns.push(leverRun);
    const floor = await measured(undefined, async () => {
      const handle = await client.workflow.start('floor', { taskQueue: 'floor', workflowId: `floor-${Date.now()}-${r}`, args: [steps] });
      const ran = (await handle.result()) as number;
      const description = await handle.describe();
      return { id: handle.workflowId, ran, events: description.historyLength, bytes: description.historySize ?? NaN };
    });
    floorRuns.push(floor);
    const t = performance.now();
    await client.workflow.execute('floorLocalModel', { taskQueue: 'floor', workflowId: `floor-local-${Date.now()}-${r}`, args: [steps] });
    const floorLocal = (performance.now() - t) / steps;
    perRound.push({
      ours: ours.ms / calls,
      ...(leverRun ? { lever: leverRun.ms / calls } : {}),
      floor: floor.ms / steps,
      floorLocal,
      command: median(await commandTimes(steps)),
      model: median(await modelTimes(steps)),
    });
  }
});
commands.close();
// Each workflow's own timeline (its history's timestamps): where the step's time went on each side.
async function gapsOf(ids: string[]): Promise<Map<string, number[]>> {
  const gaps = new Map<string, number[]>();
  for (const id of ids) addHistoryGaps((await h.client.workflow.getHandle(id).fetchHistory()).events ?? [], gaps);
  return gaps;
}
const ourGaps = await gapsOf(oursRuns.map((o) => o.value.id));
const floorGaps = await gapsOf(floorRuns.map((f) => f.value.id));
await h.close();

const own = (r: Round, side: number) => side - r.floor - r.command - r.model;
const m = (f: (r: Round) => number) => median(perRound.map(f));
const sane =
  oursRuns.every((o) => o.value.status === 'finished' && o.value.iterations === calls) &&
  leverRuns.every((o) => o.value.status === 'finished' && o.value.iterations === calls) &&
  floorRuns.every((f) => f.value.ran === steps);
console.log(
  `sanity: every conversation finished after ${calls} model calls, every floor workflow ran ${steps} steps, sandbox ${sandboxName(sandbox)}: ${sane ? 'ok' : 'UNUSABLE'}`,
);
console.log(
  `a step (ms, median of ${rounds} rounds): ours ${fmt(m((r) => r.ours))}${leverWorker ? `; with ${lever} ${fmt(m((r) => r.lever!))}` : ''}; floor ${fmt(m((r) => r.floor))} (with its model call a local activity ${fmt(m((r) => r.floorLocal))}); sandboxed command alone ${fmt(m((r) => r.command))}; model call alone ${fmt(m((r) => r.model))}`,
);
console.log(
  `our own code a step (ours − floor − command − model call, each round): ${perRound.map((r) => fmt(own(r, r.ours))).join(', ')} ms; median ${fmt(m((r) => own(r, r.ours)))}${leverWorker ? `; with the lever ${fmt(m((r) => own(r, r.lever!)))}` : ''}; goal ≤ 5 ms`,
);
const cpu = (runs: Measured<unknown>[], key: 'server' | 'worker' | 'self', per: number) => median(runs.map((x) => x[key] / per));
console.log(
  `CPU a step (ms, medians): server ${fmt(cpu(oursRuns, 'server', calls))} against the floor's ${fmt(cpu(floorRuns, 'server', steps))} (${fmt(cpu(oursRuns, 'server', calls) / cpu(floorRuns, 'server', steps))}×; goal ≤ 1.3×); worker ${fmt(cpu(oursRuns, 'worker', calls))}${leverWorker ? ` (with the lever ${fmt(cpu(leverRuns, 'worker', calls))})` : ''}, the floor's in-process workers ${fmt(cpu(floorRuns, 'self', steps))}; this process in ours (model server, client) ${fmt(cpu(oursRuns, 'self', calls))}`,
);
const last = oursRuns[oursRuns.length - 1]!.value;
const lastFloor = floorRuns[floorRuns.length - 1]!.value;
console.log(
  `history a step: ours ${fmt(last.events / calls)} events, ${fmt(last.bytes / calls)} B; floor ${fmt(lastFloor.events / steps)} events, ${fmt(lastFloor.bytes / steps)} B`,
);
const p50 = (gaps: Map<string, number[]>, key: string) => fmt(median(gaps.get(key) ?? []));
console.log(
  `from the histories (p50 of every round): a workflow task in the worker ${p50(ourGaps, 'workflow task: started → completed')} against the floor's ${p50(floorGaps, 'workflow task: started → completed')} (two a step), waiting for a worker ${p50(ourGaps, 'workflow task: scheduled → started')} / ${p50(floorGaps, 'workflow task: scheduled → started')}; ` +
    `the model activity ${p50(ourGaps, 'callModel: scheduled → completed')} (the floor's ${p50(floorGaps, 'model: scheduled → completed')}), the tool activity ${p50(ourGaps, 'runTool: scheduled → completed')} (the floor's ${p50(floorGaps, 'tool: scheduled → completed')}), of which waiting for the host ${p50(ourGaps, 'runTool: scheduled → started')} / ${p50(floorGaps, 'tool: scheduled → started')}`,
);
process.exit(0);
