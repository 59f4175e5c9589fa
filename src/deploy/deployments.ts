// `faheem deploy`: where new conversations go (set-current, ramp), what runs where (status), and
// moving the open conversations off a version (drain). Temporal client calls only: the Worker
// Deployment API and visibility; no state of our own.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DeployError } from '../core/errors.js';
import { moveSignal } from '../conversation/workflow/messages.js';
import type { DeploySettings } from '../settings/deploy.js';

/** One version of the deployment, as `faheem deploy status --json` prints it. */
export interface VersionStatus {
  buildId: string;
  /** `current`, `ramping`, `draining`, `drained`, `inactive` (Temporal's version status, lower case). */
  status: string;
  /** Open conversations pinned to this version (visibility; a few seconds behind). */
  openConversations: number;
}

/** `faheem deploy status --json`. */
export interface DeploymentStatus {
  deployment: string;
  /** The current version's build id; null: none (new conversations go to unversioned workers). */
  current: string | null;
  /** The ramping version and its share of new conversations; null: none. */
  ramping: { buildId: string; percent: number } | null;
  versions: VersionStatus[];
}

const IDENTITY = 'faheem deploy';

/** The deployment named, or FAHEEM_DEPLOYMENT, or the server's only one. */
export async function resolveDeployment(
  client: Client,
  name: string | undefined,
  settings: Pick<DeploySettings, 'deployment'>,
): Promise<string> {
  const given = name ?? settings.deployment;
  if (given) return given;
  const res = await client.workflowService.listWorkerDeployments({ namespace: client.options.namespace, pageSize: 100 });
  const names = (res.workerDeployments ?? []).map((d) => d.name ?? '').filter(Boolean);
  if (names.length === 1) return names[0] as string;
  throw new DeployError(
    names.length === 0
      ? 'no Worker Deployment on this server yet: start a worker with `faheem worker --deployment NAME --build-id ID` first'
      : `several deployments (${names.join(', ')}): name one with --deployment or FAHEEM_DEPLOYMENT`,
  );
}

/** Temporal's message, said as ours (the server's own words carry the reason). */
async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DeployError) throw err;
    const details = (err as { details?: string }).details ?? (err as Error).message;
    throw new DeployError(`${what}: ${details}`, { cause: err });
  }
}

/** New conversations start on this build (and conversations on others move to it when woken). */
export async function setCurrentVersion(client: Client, deployment: string, buildId: string): Promise<void> {
  await call(`set-current ${buildId}`, () =>
    client.workflowService.setWorkerDeploymentCurrentVersion({
      namespace: client.options.namespace,
      deploymentName: deployment,
      buildId,
      identity: IDENTITY,
    }),
  );
}

/** `percent` % of new conversations start on this build; 0 stops the ramp. */
export async function setRampingVersion(client: Client, deployment: string, buildId: string, percent: number): Promise<void> {
  if (!Number.isFinite(percent) || percent < 0 || percent > 100) throw new DeployError(`--percent ${percent}: give a number from 0 to 100`);
  await call(`ramp ${buildId}`, () =>
    client.workflowService.setWorkerDeploymentRampingVersion({
      namespace: client.options.namespace,
      deploymentName: deployment,
      buildId,
      percentage: percent,
      identity: IDENTITY,
    }),
  );
}

/** The visibility query for the open conversations pinned to a version. */
export function openOnVersionQuery(deployment: string, buildId: string): string {
  return `WorkflowType = 'conversation' AND ExecutionStatus = 'Running' AND TemporalWorkerDeploymentVersion = '${escape(deployment)}:${escape(buildId)}'`;
}

function escape(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

const { WorkerDeploymentVersionStatus: S } = proto.temporal.api.enums.v1;
const STATUS_NAMES: Record<number, string> = {
  [S.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE]: 'inactive',
  [S.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT]: 'current',
  [S.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING]: 'ramping',
  [S.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING]: 'draining',
  [S.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED]: 'drained',
};

/** Versions, routing and open conversations per version. */
export async function deploymentStatus(client: Client, deployment: string): Promise<DeploymentStatus> {
  const res = await call(`status of ${deployment}`, () =>
    client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: deployment }),
  );
  const info = res.workerDeploymentInfo;
  const routing = info?.routingConfig;
  const current = routing?.currentDeploymentVersion?.buildId || null;
  const rampingId = routing?.rampingDeploymentVersion?.buildId || null;
  const versions = await Promise.all(
    (info?.versionSummaries ?? []).map(async (v): Promise<VersionStatus> => {
      const buildId = v.deploymentVersion?.buildId ?? '';
      const { count } = await client.workflow.count(openOnVersionQuery(deployment, buildId));
      return { buildId, status: STATUS_NAMES[v.status ?? 0] ?? 'unspecified', openConversations: count };
    }),
  );
  return {
    deployment,
    current,
    ramping: rampingId ? { buildId: rampingId, percent: routing?.rampingVersionPercentage ?? 0 } : null,
    versions,
  };
}

/** How long a drain waits for a signalled run to move before it asks it again. */
const ASK_AGAIN_MS = 5_000;

/** What a drain did. */
export interface DrainResult {
  /** Conversations that were asked to move. */
  woken: number;
  /** Open conversations still on the version when the drain stopped waiting (0: the old workers may stop). */
  remaining: number;
}

/**
 * Wakes every open conversation pinned to `buildId` (a `moveToCurrentVersion` signal each); each
 * continues as new onto the current version, keeping its status. Waits up to `waitMs` for visibility
 * to show none left. Refuses to drain the current version (there would be nowhere to move to).
 */
export async function drainVersion(
  client: Client,
  deployment: string,
  buildId: string,
  options: { waitMs?: number; onProgress?: (remaining: number) => void } = {},
): Promise<DrainResult> {
  const status = await deploymentStatus(client, deployment);
  if (status.current === buildId)
    throw new DeployError(
      `${buildId} is the current version: set another current first (\`faheem deploy set-current NEW\`), then drain ${buildId}`,
    );
  if (!status.versions.some((v) => v.buildId === buildId))
    throw new DeployError(`no version ${buildId} in deployment ${deployment} (see \`faheem deploy status\`)`);
  const query = openOnVersionQuery(deployment, buildId);
  // When each run was last asked. A run still on the version a while after its signal is asked again:
  // a workflow task that ran before the new current version reached it saw no change of target and
  // went back to sleep (seen: 8 of 40 left after 300 s), and only a new task notices the change.
  const signalled = new Map<string, number>();
  const deadline = Date.now() + (options.waitMs ?? 120_000);
  for (;;) {
    // Visibility lags a little: list again until nothing new shows.
    for await (const wf of client.workflow.list({ query })) {
      const key = `${wf.workflowId}/${wf.runId}`;
      const last = signalled.get(key);
      if (last !== undefined && Date.now() - last < ASK_AGAIN_MS) continue;
      signalled.set(key, Date.now());
      await client.workflow
        .getHandle(wf.workflowId, wf.runId)
        .signal(moveSignal)
        .catch(() => undefined); // closed meanwhile: nothing to move
    }
    const { count } = await client.workflow.count(query);
    options.onProgress?.(count);
    if (count === 0 || Date.now() > deadline) return { woken: signalled.size, remaining: count };
    await new Promise((r) => setTimeout(r, 500));
  }
}
