// A lever for #58, measured and not built: a warm sandbox per conversation. Today every command
// starts its own sandbox (nsenter into the kept network, bwrap's namespaces and mounts, then the
// terminal's bash). A warm sandbox would start bwrap once per conversation with a small server
// inside and run each command as one `bash -c` there. This measures, in turns, in one process:
//   today      our terminal's command, sandboxed as the worker runs it (bench/sandboxed-command.ts)
//   unboxed    the same terminal call with no sandbox (its wrapper, the spawn helper, state capture)
//   warm       `bash -c <command>` run by a bash already inside a sandbox of the same plan, through a pipe
//   bare       `bash -c <command>` with no sandbox, through the spawn helper as the terminal's spawns
// and estimates a warm-sandbox terminal as unboxed + (warm − bare): what the sandbox would still
// cost a command once its start is paid per conversation.
// Run: `npx tsx bench/levers/warm-sandbox.ts [commands per side per round]` (BENCH_ROUNDS, default 5).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { commandBaseEnv } from '../../src/security/env-policy.js';
import { hiddenDirs, resolveSandbox, sandboxedCommand, sandboxFromEnv } from '../../src/sandbox/sandbox.js';
import { leaseNetwork, stopKeptNetworks } from '../../src/sandbox/kept-network.js';
import { setUpSpawner, spawnCommand } from '../../src/sandbox/spawner.js';
import { runTerminal } from '../../src/tools/terminal.js';
import type { TerminalState } from '../../src/core/types.js';
import { pct } from '../step.js';

const PER_ROUND = Number(process.argv[2] ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DONE = '__faheem_warm_done';

const median = (xs: number[]) => pct(xs, 50);

async function main(): Promise<void> {
  const env = process.env;
  setUpSpawner({ helper: true, env });
  const { sandbox } = await resolveSandbox(sandboxFromEnv(env), env);
  if (!sandbox) throw new Error('no working bwrap here: nothing to measure');
  const workspace = await mkdtemp(path.join(tmpdir(), 'faheem-warm-'));
  const stateDir = await mkdtemp(path.join(tmpdir(), 'faheem-warm-state-'));
  const session = `warm-sandbox-${process.pid}`;
  const base = { workspace, baseEnv: commandBaseEnv(env) };
  let boxedState: TerminalState = { cwd: workspace, env: {} };
  let unboxedState: TerminalState = { cwd: workspace, env: {} };

  // The warm sandbox: the same plan as a command's (the kept network, the workspace, a state folder).
  const lease = await leaseNetwork(sandbox, session, true);
  const server = `while IFS= read -r line; do bash --norc --noprofile -c "$line" </dev/null; echo "${DONE} $?"; done`;
  const shell = sandboxedCommand(
    sandbox,
    { workspace, hide: hiddenDirs(env), binds: [{ path: stateDir }], ...(lease ? { keptNetwork: lease.network } : {}) },
    'bash',
    ['--norc', '--noprofile', '-c', server],
    commandBaseEnv(env),
  );
  const warm = spawn(shell.file, shell.args, { cwd: workspace, env: shell.env, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let waiting: (() => void) | undefined;
  warm.stdout.setEncoding('utf8');
  warm.stdout.on('data', (d: string) => {
    out += d;
    if (out.includes(DONE) && out.endsWith('\n')) waiting?.();
  });
  const warmRun = (command: string) =>
    new Promise<string>((resolve) => {
      out = '';
      waiting = () => resolve(out);
      warm.stdin.write(`${command}\n`);
    });
  const first = await warmRun('echo ready; hostname; ls / | wc -l');
  if (!first.startsWith('ready')) throw new Error(`the warm sandbox did not answer: ${first}`);

  const sides = {
    today: async (i: number) => {
      const r = await runTerminal({ command: `echo step ${i}` }, boxedState, {
        ...base,
        session,
        sandbox,
        sandboxHide: hiddenDirs(env),
      });
      if (r.isError || !r.content.includes(`step ${i}`)) throw new Error(`today's command failed: ${r.content}`);
      boxedState = r.terminal;
    },
    unboxed: async (i: number) => {
      const r = await runTerminal({ command: `echo step ${i}` }, unboxedState, { ...base, session: `${session}-unboxed` });
      if (r.isError || !r.content.includes(`step ${i}`)) throw new Error(`the unsandboxed command failed: ${r.content}`);
      unboxedState = r.terminal;
    },
    warm: async (i: number) => {
      const o = await warmRun(`echo step ${i}`);
      if (!o.startsWith(`step ${i}\n${DONE} 0`)) throw new Error(`the warm command failed: ${o}`);
    },
    // Through the spawn helper, as the terminal's own spawns are: (warm − bare) is then the spawn a
    // warm sandbox saves, measured the way the terminal pays it.
    bare: async (i: number) => {
      const p = await spawnCommand(
        'bash',
        ['--norc', '--noprofile', '-c', `echo step ${i}`],
        { cwd: workspace, env: commandBaseEnv(env), detached: true },
        true,
      );
      p.output.resume();
      const { code } = await p.exited;
      if (code !== 0) throw new Error(`bare bash exited ${code}`);
    },
  };
  type Side = keyof typeof sides;
  const names = Object.keys(sides) as Side[];
  // A warm-up of each side (first spawns, the helper, the kept network).
  for (const name of names) for (let i = 0; i < 3; i++) await sides[name](i);
  const perRound: Record<Side, number[]> = { today: [], unboxed: [], warm: [], bare: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // In turns, the order rotating each round: every side sees the same machine.
    const order = names.map((_, k) => names[(k + round) % names.length]!);
    const times: Record<Side, number[]> = { today: [], unboxed: [], warm: [], bare: [] };
    for (let i = 0; i < PER_ROUND; i++) {
      for (const name of order) {
        const t = performance.now();
        await sides[name](i);
        times[name].push(performance.now() - t);
      }
    }
    for (const name of names) perRound[name].push(median(times[name]));
  }
  const m = Object.fromEntries(names.map((n) => [n, median(perRound[n])])) as Record<Side, number>;
  const estimate = m.unboxed + (m.warm - m.bare);
  console.log(
    `# sandbox: bwrap, network ${sandbox.network}; ${ROUNDS} rounds × ${PER_ROUND} commands a side, in turns; medians of round medians`,
  );
  console.log(
    `# sanity: today's sandboxed command ${m.today.toFixed(1)} ms ≥ the unsandboxed terminal ${m.unboxed.toFixed(1)} ms ≥ a bare bash ${m.bare.toFixed(1)} ms`,
  );
  for (const name of names)
    console.log(`${name.padEnd(8)} ${m[name].toFixed(1)} ms  (rounds: ${perRound[name].map((x) => x.toFixed(1)).join(', ')})`);
  console.log(
    `the sandbox today costs a command ${(m.today - m.unboxed).toFixed(1)} ms; warm, it would cost ${(m.warm - m.bare).toFixed(1)} ms`,
  );
  console.log(
    `a warm-sandbox terminal, estimated: ${estimate.toFixed(1)} ms a command, ${(m.today - estimate).toFixed(1)} ms less than today`,
  );

  warm.stdin.end();
  warm.kill('SIGKILL');
  lease?.release();
  stopKeptNetworks(sandbox);
  await rm(workspace, { recursive: true, force: true });
  await rm(stateDir, { recursive: true, force: true });
  process.exit(0);
}

await main();
