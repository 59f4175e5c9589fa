// `faheem acp`: the Agent Client Protocol agent for editors, on stdin/stdout (see src/acp/). Nothing
// but ACP goes to stdout: every log line of this process (ours, Temporal's, a library's console.log)
// goes to stderr, which editors show as the agent's log.
import { Command, InvalidArgumentError, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import { UsageError } from '../core/errors.js';
import { readSettings } from '../environment.js';
import { parseHooksFile, type HooksConfig } from '../hooks/config.js';
import { secretKeeper } from '../acp/prompt.js';
import { flushCompileCache } from '../worker/compile-cache.js';
import type { ConfirmationPolicy } from '../core/types.js';
import { codecSettings } from '../settings/codec.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** Sends everything written through `console` to stderr: stdout is the protocol's. */
function consoleToStderr(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.dir = (item: unknown) => console.error(item);
}

async function packageVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The `acp` command: serves ACP on stdin/stdout until the editor closes it. */
export function acpCommand(): Command {
  return new Command('acp')
    .description(
      'an Agent Client Protocol agent on stdin/stdout, for editors (Zed, JetBrains, Neovim, Emacs): each session is a durable conversation',
    )
    .addOption(
      new Option('--confirm <policy>', 'the mode new sessions start in (when to ask before an action)')
        .choices(['never', 'risky', 'always'])
        .default('never'),
    )
    .option('--model <model>', "the model of new sessions (default: the worker's LLM_MODEL)")
    .option('--hooks <file>', "hooks for new sessions, in Claude Code's format (a JSON file, as `faheem start --hooks`)")
    .option('--max-iterations <n>', 'model calls per prompt turn before it stops (max_turn_requests)', positiveInt)
    .action(async (o: { confirm: ConfirmationPolicy; model?: string; maxIterations?: number; hooks?: string }) => {
      consoleToStderr();
      let hooks: HooksConfig | undefined;
      if (o.hooks) {
        const text = await readFile(o.hooks, 'utf8').catch((err: Error) => {
          throw new UsageError(`--hooks: cannot read ${o.hooks}: ${err.message}`);
        });
        try {
          hooks = parseHooksFile(text);
        } catch (err) {
          throw new UsageError(`--hooks ${o.hooks}: ${(err as Error).message}`);
        }
      }
      const log = (line: string) => process.stderr.write(`${line}\n`);
      // Loaded when the command runs (the embedded worker and ACP's SDK are heavy for the CLI's other commands).
      const [{ acpBackend }, { startAcpAgent }] = await Promise.all([import('../acp/embedded.js'), import('../acp/agent.js')]);
      // `faheem acp`'s edge: this process's environment, read once. The embedded worker shares it,
      // so the MCP values secretKeeper puts in it reach that worker.
      const env = process.env;
      const settings = readSettings(env, 'acp');
      const backend = await acpBackend(log, settings);
      const encrypted = codecSettings(settings).encrypts;
      // An MCP server's env and header values would be written into the conversation's history:
      // with the worker in this process they go into its environment instead (as FAHEEM_SECRET_*,
      // which MCP configs may name); with encryption the history is encrypted; otherwise they are refused.
      const keepSecret = secretKeeper({ embedded: Boolean(backend.embeddedWorker), encrypted, env });
      const { connection, sessions } = startAcpAgent({
        client: backend.client,
        defaultMode: o.confirm,
        ...(o.model ? { model: o.model } : {}),
        ...(o.maxIterations ? { maxIterations: o.maxIterations } : {}),
        ...(hooks ? { hooks } : {}),
        keepSecret,
        log,
        version: await packageVersion(),
      });
      log(
        `faheem acp: ready (protocol version 1; ${backend.embeddedWorker ? 'embedded server and worker' : 'Temporal at the configured address'})`,
      );
      flushCompileCache(); // an editor may kill the agent rather than close it: keep what its start compiled
      const stop = () => connection.close();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      await connection.closed;
      await sessions.close();
      await backend.stop();
      log('faheem acp: the client went away; the conversations go on on the worker');
    });
}
