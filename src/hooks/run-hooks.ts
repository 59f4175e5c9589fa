// Activity: run the hooks of one conversation event on the workspace's host (tool task queue) and
// say what they decided. One activity an event, so each shows in the Web UI with its outcomes.
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { FAILURE, failure } from '../core/failure-types.js';
import { safeParseHooks } from './config.js';
import type { RunHooksInput, RunHooksResult } from './event.js';
import { executeHooks, type HookRunnerDeps } from './run-hook.js';
import { withHeartbeat } from '../conversation/heartbeat.js';

/**
 * Makes the `runHooks` activity: `runHooks(input: RunHooksInput): Promise<RunHooksResult>`. It runs
 * `input.hooks` (the command hooks matchingHooks picked) and then the worker's TypeScript hooks for
 * `input.event.hook_event_name`, heartbeating all the while; a cancellation stops every hook process.
 * A hook's failure is never the activity's: it is in the decision (`errors`, or a block with
 * `onFailure: "block"`). Invalid input fails without retries.
 *
 * Schedule it on the conversation's tool task queue (the workspace's host) with a short
 * heartbeatTimeout (it beats every 50 ms) and a startToCloseTimeout from hooksActivityTimeoutSeconds.
 * A retry after the worker died runs the hooks again: hooks should be safe to repeat (Claude Code
 * makes no promise either).
 */
export function createRunHooks(deps: HookRunnerDeps) {
  return async function runHooks(input: RunHooksInput): Promise<RunHooksResult> {
    const name = input?.event?.hook_event_name;
    const checked = safeParseHooks({ hooks: { [String(name)]: [{ hooks: input?.hooks ?? [] }] } });
    if (!checked.ok) throw failure(FAILURE.InvalidHooks, `runHooks: ${checked.error}`);
    const ctx = Context.current();
    try {
      return await withHeartbeat(
        () => executeHooks({ ...input, hooks: checked.config.hooks[name]![0]!.hooks }, deps, ctx.cancellationSignal),
        { context: ctx },
      );
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('the hooks were interrupted');
      throw err;
    }
  };
}
