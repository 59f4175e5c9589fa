// `faheem schedule …`: conversations on a Temporal Schedule (create, list, trigger, pause, unpause, delete).
import type { Client } from '@temporalio/client';
import { Command, Option } from 'commander';
import path from 'node:path';
import pc from 'picocolors';
import { Agent, LLM } from '../client/client.js';
import { changeSchedule, createSchedule, listSchedules, type ScheduleOverlap } from '../client/schedules.js';
import type { ConfirmationPolicy, McpServersSpec } from '../core/types.js';
import { DEFAULTS } from '../core/types.js';

/** What the schedule commands borrow from the CLI's entry point. */
export interface ScheduleCommandDeps {
  withClient<T>(fn: (client: Client) => Promise<T>): Promise<T>;
  positiveInt(value: string): number;
  positiveNumber(value: string): number;
  readMcpConfig(file: string): Promise<McpServersSpec>;
}

/** Collects a repeated option's values. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The `schedule` command group. */
export function scheduleCommand(deps: ScheduleCommandDeps): Command {
  const schedule = new Command('schedule').description('conversations on a schedule (Temporal Schedules): each run starts a conversation');
  schedule
    .command('create')
    .description('create a schedule whose every run starts a conversation with this message')
    .argument('<name>', 'the schedule name (its conversations are <name>-<time>)')
    .argument('<message>', 'the first user message of every run')
    // Not variadic: `--cron "EXPR" "<message>"` (the CONTRACT's order) must leave the message alone; repeat --cron for more.
    .requiredOption('--cron <expr>', 'when to run, a cron expression (UTC unless --time-zone), e.g. "0 3 * * *"; repeat for more', collect)
    .option('--time-zone <tz>', 'IANA time zone for the cron expressions, e.g. Europe/Berlin')
    .addOption(
      new Option('--overlap <policy>', 'a run while the previous one is still going')
        .choices(['skip', 'buffer_one', 'allow_all'])
        .default('skip'),
    )
    .option('--paused', 'create it paused')
    .option('--workspace <dir>', 'working directory of the agent', process.cwd())
    .option('--model <model>', "e.g. openai/gpt-4o (default: the worker's LLM_MODEL)")
    .option('--fallback <model>', 'a model to move to when the one before it is unavailable; repeatable', (v: string, p: string[] = []) => [
      ...p,
      v,
    ])
    .addOption(new Option('--confirm <policy>', 'when to ask before an action').choices(['never', 'always', 'risky']).default('never'))
    .option('--max-iterations <n>', 'model calls per run before it stops with an error', deps.positiveInt, DEFAULTS.maxIterations)
    .option('--budget <usd>', 'pause a run once it has cost this much (USD)', deps.positiveNumber)
    .option('--delegate', 'give the agent the delegate tool')
    .option('--mcp-config <file>', 'MCP servers for the agent: a JSON file {"mcpServers": {…}}')
    .action(
      async (
        name: string,
        message: string,
        o: {
          cron: string[];
          timeZone?: string;
          overlap: ScheduleOverlap;
          paused?: boolean;
          workspace: string;
          model?: string;
          fallback?: string[];
          confirm: ConfirmationPolicy;
          maxIterations: number;
          budget?: number;
          delegate?: boolean;
          mcpConfig?: string;
        },
      ) => {
        const mcpServers = o.mcpConfig ? await deps.readMcpConfig(o.mcpConfig) : undefined;
        const agent = new Agent({
          llm: new LLM({
            usageId: 'agent',
            ...(o.model ? { model: o.model } : {}),
            ...(o.fallback?.length ? { fallbacks: o.fallback } : {}),
          }),
          tools: ['terminal', 'file_editor', 'task_tracker', 'wait', ...(o.delegate ? ['delegate'] : [])],
          hostTools: true,
        });
        await deps.withClient((client) =>
          createSchedule(client, name, {
            cron: o.cron,
            message,
            agent,
            workspace: path.resolve(o.workspace),
            overlap: o.overlap,
            maxIterations: o.maxIterations,
            confirmationPolicy: o.confirm,
            ...(o.timeZone ? { timeZone: o.timeZone } : {}),
            ...(o.paused ? { paused: true } : {}),
            ...(o.budget !== undefined ? { maxBudgetPerRunUsd: o.budget } : {}),
            ...(mcpServers ? { mcpServers } : {}),
          }),
        );
        console.log(name);
      },
    );
  schedule
    .command('list')
    .description('the schedules that start conversations')
    .option('--json', 'one JSON object a line')
    .action(async (o: { json?: boolean }) => {
      const all = await deps.withClient((client) => listSchedules(client));
      for (const s of all) {
        if (o.json) console.log(JSON.stringify(s));
        else {
          const state = s.paused ? pc.yellow('paused') : pc.green('active');
          const next = s.nextRuns[0] ? `next ${s.nextRuns[0]}` : 'no next run';
          console.log(`${s.name}  ${state}  ${s.cron.join(' | ')}  ${pc.dim(next)}  ${JSON.stringify(s.message.slice(0, 60))}`);
        }
      }
    });
  for (const [verb, what] of [
    ['trigger', 'run it now (a new conversation)'],
    ['pause', 'stop starting runs until unpaused'],
    ['unpause', 'start runs again'],
    ['delete', 'delete the schedule (its conversations stay)'],
  ] as const) {
    schedule
      .command(verb)
      .description(what)
      .argument('<name>')
      .action(async (name: string) => {
        await deps.withClient((client) => changeSchedule(client, name, verb));
      });
  }
  return schedule;
}
