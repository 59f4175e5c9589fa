// The conversation's setup, made once on the workspace host: the tools it has for this
// conversation (built-ins, yours, MCP servers') and the repository's instructions (AGENTS.md).
import { PREPARE_TOOLS } from '../activity-options.js';
import { failureMessage } from '../reply.js';
import type { ConversationActivities } from './activity-proxies.js';
import type { ConversationRun } from './conversation-run.js';
import { PHASE_COMMANDS, type Applies } from './phase-commands.js';
import { isPatched } from '../legacy/patches.js';
import { NotStarted, onHost, type HostCallRun } from './host-call.js';

const { processesStopAsked, record, setSetup } = PHASE_COMMANDS.setup;

/** What the setup reads and writes of the run. */
export type SetupRun = Pick<ConversationRun, 'halted' | 'id' | 'inFlight' | 'options' | 'stepCheckpoints'> & HostCallRun & Applies<'setup'>;

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

/**
 * Stops what the conversation started on its workspace host (its command left running, MCP servers,
 * kept network: the releaseTools activity), best effort and bounded.
 */
async function releaseTools(run: Pick<ConversationRun, 'id' | 'options'>, acts: ConversationActivities, why: string): Promise<void> {
  await acts.tool.releaseTools
    .executeWithOptions(
      {
        scheduleToCloseTimeout: '1 minute',
        taskQueue: run.options.toolTaskQueue,
        retry: { maximumAttempts: 3 },
        summary: `${why}: stop its processes on the workspace host (commands, MCP servers, network)`,
      },
      [run.id],
    )
    .catch(() => undefined);
}

/** Whether a pooled conversation holds no host: hibernated or released, its release stopped everything there. */
function holdsNoPoolHost(run: Pick<ConversationRun, 'options'>): boolean {
  return run.options.pool !== undefined && !run.options.poolHost;
}

/**
 * The conversation ends (closed, idle, a sub-agent done): nothing it started on its workspace host
 * outlives it. Before the patch `stop-processes-at-end` only a conversation with MCP servers asked.
 */
export async function releaseToolsAtEnd(run: Pick<ConversationRun, 'id' | 'options'>, acts: ConversationActivities): Promise<void> {
  const { options } = run;
  if (options.mcpServers && Object.keys(options.mcpServers).length > 0) {
    const released = options.pool !== undefined && !options.poolHost && isPatched('pooled-mcp-stop-on-release');
    if (!released) await releaseTools(run, acts, 'the conversation ends');
    return;
  }
  if (!holdsNoPoolHost(run) && isPatched('stop-processes-at-end')) await releaseTools(run, acts, 'the conversation ends');
}

/**
 * After a `pause --now`: what the call in flight does not hold stops too (a command left running past
 * its soft timeout, MCP servers, the kept network). Asked once a pause, when a host has set the
 * conversation up and it still holds one.
 */
export async function stopProcessesAfterPause(
  run: Pick<ConversationRun, 'id' | 'options' | 'setup'> & Applies<'setup'>,
  acts: ConversationActivities,
): Promise<void> {
  run.apply(processesStopAsked);
  if (!run.setup || holdsNoPoolHost(run) || !isPatched('stop-processes-on-pause-now')) return;
  await releaseTools(run, acts, 'pause --now');
}
