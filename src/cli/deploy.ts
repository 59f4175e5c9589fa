// `faheem deploy …`: new builds under live conversations (Temporal Worker Versioning). The order of a
// deploy: check, start the new workers, set-current, drain the old version, stop the old workers.
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { deploymentStatus, drainVersion, resolveDeployment, setCurrentVersion, setRampingVersion } from '../deploy/deployments.js';
import { DeployError } from '../core/errors.js';
import type { Settings } from '../environment.js';
import { deploySettings } from '../settings/deploy.js';
import { storeSettings } from '../settings/store.js';
import { dataConverter } from '../storage/local-payloads.js';

/** What the deploy commands borrow from the CLI's entry point. */
export interface DeployCommandDeps {
  withClient<T>(fn: (client: Client) => Promise<T>): Promise<T>;
  /** The CLI's settings (FAHEEM_DEPLOYMENT, FAHEEM_BUILD_ID, FAHEEM_WORKFLOW_BUNDLE). */
  settings: Settings;
  positiveInt(value: string): number;
}

function percent(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 100) throw new DeployError(`--percent ${value}: give a number from 0 to 100`);
  return n;
}

/** The `deploy` command group. */
export function deployCommand(deps: DeployCommandDeps): Command {
  const deploy = new Command('deploy').description(
    'move new builds under live conversations: check, start new workers, set-current, drain the old version, stop its workers',
  );
  const settings = deploySettings(deps.settings);
  const deploymentOption = ['--deployment <name>', 'the Worker Deployment (default: FAHEEM_DEPLOYMENT, else the only one)'] as const;

  deploy
    .command('set-current')
    .description('new conversations start on this build; conversations on others move to it when woken (drain)')
    .argument('<build-id>', 'the build id its workers run with (--build-id)')
    .option(...deploymentOption)
    .action(async (buildId: string, o: { deployment?: string }) =>
      deps.withClient(async (client) => {
        const name = await resolveDeployment(client, o.deployment, settings);
        await setCurrentVersion(client, name, buildId);
        console.error(`faheem deploy: ${name} current version is ${buildId}`);
      }),
    );

  deploy
    .command('ramp')
    .description('send a share of new conversations to this build (0 ends the ramp)')
    .argument('<build-id>', 'the build id')
    .requiredOption('--percent <n>', 'share of new conversations, 0–100', percent)
    .option(...deploymentOption)
    .action(async (buildId: string, o: { percent: number; deployment?: string }) =>
      deps.withClient(async (client) => {
        const name = await resolveDeployment(client, o.deployment, settings);
        await setRampingVersion(client, name, buildId, o.percent);
        console.error(`faheem deploy: ${name} ramps ${o.percent} % of new conversations to ${buildId}`);
      }),
    );

  deploy
    .command('status')
    .description('current and ramping versions, and the open conversations on each version')
    .option('--json', 'one JSON object')
    .option(...deploymentOption)
    .action(async (o: { json?: boolean; deployment?: string }) =>
      deps.withClient(async (client) => {
        const status = await deploymentStatus(client, await resolveDeployment(client, o.deployment, settings));
        if (o.json) {
          console.log(JSON.stringify(status));
          return;
        }
        console.log(`deployment ${status.deployment}`);
        console.log(`current    ${status.current ?? '(none)'}`);
        console.log(`ramping    ${status.ramping ? `${status.ramping.buildId} at ${status.ramping.percent} %` : '(none)'}`);
        for (const v of status.versions) console.log(`  ${v.buildId.padEnd(24)} ${v.status.padEnd(9)} ${v.openConversations} open`);
      }),
    );

  deploy
    .command('drain')
    .description('move every open conversation on this version to the current one, keeping its status, so its workers can stop')
    .argument('<build-id>', 'the old build id')
    .option('--timeout <seconds>', 'how long to wait for none to be left (default 120)', deps.positiveInt)
    .option(...deploymentOption)
    .action(async (buildId: string, o: { timeout?: number; deployment?: string }) =>
      deps.withClient(async (client) => {
        const name = await resolveDeployment(client, o.deployment, settings);
        const result = await drainVersion(client, name, buildId, { waitMs: (o.timeout ?? 120) * 1000 });
        if (result.remaining > 0) {
          throw new DeployError(
            `${result.remaining} conversation(s) still on ${buildId} after ${o.timeout ?? 120} s (a step still running?): run drain again, or wait, before stopping its workers`,
          );
        }
        console.error(`faheem deploy: ${result.woken} conversation(s) moved off ${buildId}; its workers may stop`);
      }),
    );

  deploy
    .command('check')
    .description(
      "replay the server's recent conversations (open ones first) against this build's workflow code; non-zero exit if any would break",
    )
    .option('--limit <n>', 'how many conversations (default 100)', deps.positiveInt)
    .option('--histories <dir>', 'replay the recorded histories in this folder instead (e.g. test/histories)')
    .action(async (o: { limit?: number; histories?: string }) => {
      // Loaded here: replaying needs the Temporal worker package, which the CLI's other commands do without.
      const { checkHistories, folderHistories, recentConversationIds, serverHistories } = await import('../deploy/check.js');
      const replay = { workflowBundle: settings.workflowBundle, dataConverter: dataConverter(storeSettings(deps.settings)) };
      const result = o.histories
        ? await checkHistories(await folderHistories(o.histories), replay)
        : await deps.withClient(async (client) =>
            checkHistories(serverHistories(client, await recentConversationIds(client, o.limit ?? 100)), replay),
          );
      for (const f of result.failures) console.log(`${f.workflowId} (${f.source}): ${f.reason}`);
      if (result.failures.length > 0) {
        throw new DeployError(
          `${result.failures.length} of ${result.checked} histories would break on this build: guard the change with isPatched()`,
        );
      }
      console.error(`faheem deploy check: ${result.checked} histories replay on this build`);
    });

  return deploy;
}
