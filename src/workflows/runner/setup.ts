// The conversation's setup, made once on the workspace host: the tools it has for this
// conversation (built-ins, yours, MCP servers') and the repository's instructions (AGENTS.md).
import { PREPARE_TOOLS } from '../activity-options.js';
import { failureMessage } from '../reply.js';
import type { ConversationActivities } from './activity-proxies.js';
import type { ConversationRun } from './conversation-run.js';
import { record, setSetup } from './commands.js';
import { NotStarted, onHost, type HostCallRun } from './host-call.js';

/** What the setup reads and writes of the run. */
export type SetupRun = Pick<ConversationRun, 'apply' | 'halted' | 'id' | 'inFlight' | 'options' | 'stepCheckpoints'> & HostCallRun;

/** Made, or why not: cancelled (a pause or close) or failed (the conversation's error). */
export type SetupOutcome = { kind: 'ready' } | { kind: 'cancelled' } | { kind: 'failed'; message: string };

/**
 * Asks the workspace host which tools it has for this conversation (and reads AGENTS.md there);
 * `withCheckpoint`: it also takes the checkpoint before the first step (firstCheckpointWithSetup).
 */
export async function prepareTools(run: SetupRun, acts: ConversationActivities, withCheckpoint: boolean): Promise<SetupOutcome> {
  const { options } = run;
  const made = await run.inFlight.modelCall(
    () =>
      onHost(run, (extra) =>
        acts.tool.prepareTools.executeWithOptions(
          {
            ...PREPARE_TOOLS,
            taskQueue: options.toolTaskQueue,
            summary: 'prepare tools (and MCP servers, AGENTS.md) on the workspace host',
            ...extra,
          },
          [
            {
              conversationId: run.id,
              workspace: options.workspace,
              tools: options.agent.tools,
              hostTools: options.agent.hostTools === true,
              ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
              ...(withCheckpoint ? { checkpoint: { step: 0 } } : {}),
            },
          ],
        ),
      ),
    () => run.halted,
  );
  if (made.kind === 'cancelled' || (made.kind === 'failed' && made.error instanceof NotStarted)) return { kind: 'cancelled' };
  if (made.kind === 'failed')
    return { kind: 'failed', message: `could not prepare the tools on ${options.toolTaskQueue}: ${failureMessage(made.error)}` };
  const result = made.value;
  run.apply(setSetup, {
    tools: result.tools,
    ...(result.instructions ? { instructions: result.instructions } : {}),
    ...(result.skills?.length ? { skills: result.skills } : {}),
    ...(result.hookEvents?.length ? { hookEvents: result.hookEvents } : {}),
    ...(result.workerModel ? { workerModel: result.workerModel } : {}),
  });
  if (result.instructions) run.apply(record, { kind: 'instructions', source: 'environment', ...result.instructions });
  if (result.skills?.length || result.warnings?.length) {
    const skills = (result.skills ?? []).map(({ name, description, path }) => ({ name, description, path }));
    run.apply(record, { kind: 'skills', source: 'environment', skills, warnings: result.warnings ?? [] });
  }
  for (const message of result.errors) run.apply(record, { kind: 'error', source: 'environment', message });
  if (withCheckpoint && result.checkpoint) run.stepCheckpoints.noteFolded(0, result.checkpoint);
  return { kind: 'ready' };
}

/** Stops the conversation's MCP servers on the workspace host when it ends (best effort, bounded). */
export async function releaseTools(run: Pick<ConversationRun, 'id' | 'options'>, acts: ConversationActivities): Promise<void> {
  await acts.tool.releaseTools
    .executeWithOptions(
      {
        scheduleToCloseTimeout: '1 minute',
        taskQueue: run.options.toolTaskQueue,
        retry: { maximumAttempts: 3 },
        summary: 'stop MCP servers',
      },
      [run.id],
    )
    .catch(() => undefined);
}
