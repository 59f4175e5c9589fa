// Activity: run one terminal command on the workspace's host.
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import path from 'node:path';
import { secretValues } from '../security/redact.js';
import { onRetry } from '../tools/schemas.js';
import { CommandInterrupted, commandBaseEnv, namedSecrets, runTerminal as run } from '../tools/terminal.js';
import type { TerminalCallInput, TerminalResult } from '../types.js';
import type { StartLog } from './start-log.js';

export function createRunTerminal(env: NodeJS.ProcessEnv, home: string, starts: StartLog) {
  const secrets = secretValues(env);
  const baseEnv = commandBaseEnv(env);
  const secretEnv = namedSecrets(env);

  return async function runTerminal(input: TerminalCallInput): Promise<TerminalResult> {
    const ctx = Context.current();
    // An earlier attempt that may have begun was cut off (its worker died), perhaps after effects.
    // Running the command again could do them twice, so report instead and let the model decide.
    if (onRetry('terminal', input.arguments) === 'report' && (await starts.claim(ctx.info))) {
      return {
        content:
          'This command may have run, but the worker running it stopped before it reported a result. ' +
          'Its effects are unknown: check the state (files, processes) before running it again.',
        isError: true,
        exitCode: -1,
        terminal: input.terminal,
      };
    }
    const beat = setInterval(() => ctx.heartbeat(), 500);
    try {
      return await run(input.arguments, input.terminal, {
        workspace: input.workspace,
        session: input.conversationId,
        signal: ctx.cancellationSignal,
        outputDir: path.join(home, 'outputs', input.conversationId),
        secrets,
        baseEnv,
        secretEnv,
      });
    } catch (err) {
      // Interrupted by `pause --now`: the partial output travels in the cancellation's details.
      if (err instanceof CommandInterrupted) throw new CancelledFailure('interrupted by a pause', [err.partialOutput]);
      throw err;
    } finally {
      clearInterval(beat);
    }
  };
}
