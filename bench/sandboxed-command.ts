// The sandboxed command alone, as the worker's terminal tool runs it: `echo` under the sandbox this
// host's worker would choose (resolved as the worker resolves it: bwrap with its internet network
// where that works), in the conversation's kept network, from the durable shell state. What a step
// of ours pays for its command, without Temporal or a model around it (bench:peers, bench:step-parts).
import { commandBaseEnv } from '../src/security/env-policy.js';
import { hiddenDirs, resolveSandbox, sandboxFromEnv, type Sandbox } from '../src/sandbox/sandbox.js';
import { stopKeptNetworks } from '../src/sandbox/kept-network.js';
import { setUpSpawner } from '../src/sandbox/spawner.js';
import { runTerminal } from '../src/tools/terminal.js';
import type { TerminalState } from '../src/core/types.js';

/** A terminal of its own in `workspace`: `times(n)` runs `echo` n times and gives each call's ms. */
export async function sandboxedCommands(workspace: string): Promise<{
  sandbox: Sandbox | undefined;
  times(n: number): Promise<number[]>;
  close(): void;
}> {
  const env = process.env;
  // Started as the worker starts them: through the spawn helper (this process forks none of them).
  setUpSpawner({ helper: true, env });
  const { sandbox } = await resolveSandbox(sandboxFromEnv(env), env);
  let terminal: TerminalState = { cwd: workspace, env: {} };
  return {
    sandbox,
    async times(n) {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        const r = await runTerminal({ command: `echo step ${i}` }, terminal, {
          workspace,
          session: `sandboxed-commands-${workspace}`,
          baseEnv: commandBaseEnv(env),
          ...(sandbox ? { sandbox, sandboxHide: hiddenDirs(env) } : {}),
        });
        if (r.isError) throw new Error(`the sandboxed echo failed: ${r.content}`);
        times.push(performance.now() - t);
        terminal = r.terminal;
      }
      return times;
    },
    close() {
      if (sandbox) stopKeptNetworks(sandbox);
    },
  };
}

/** One line naming the sandbox the command ran under. */
export function sandboxName(sandbox: Sandbox | undefined): string {
  return sandbox ? `bwrap, network ${sandbox.network}` : 'none (no working bwrap here)';
}
