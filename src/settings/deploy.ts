// The deployment area of the settings: the Worker Deployment a worker belongs to and the workflow
// code it runs (FAHEEM_DEPLOYMENT, FAHEEM_BUILD_ID, FAHEEM_WORKFLOW_BUNDLE), as `faheem deploy` and
// the worker read them. Built once at an entry point and passed down.
import type { Settings } from '../environment.js';

/** The deployment settings. */
export interface DeploySettings {
  /** FAHEEM_DEPLOYMENT (trimmed): the Worker Deployment; undefined when unset. */
  readonly deployment: string | undefined;
  /** FAHEEM_BUILD_ID (trimmed): this build's id in its deployment; undefined when unset. */
  readonly buildId: string | undefined;
  /** FAHEEM_WORKFLOW_BUNDLE: a workflow bundle file to run (and replay against); undefined: the package's. */
  readonly workflowBundle: string | undefined;
}

/**
 * The deployment settings `settings` gives, trimmed. Not checked here: a worker's readSettings
 * checks the deployment and build id (and its config that both or neither are set); `faheem deploy`
 * only names a deployment to look up.
 */
export function deploySettings(settings: Settings): DeploySettings {
  return {
    deployment: settings.FAHEEM_DEPLOYMENT?.trim() || undefined,
    buildId: settings.FAHEEM_BUILD_ID?.trim() || undefined,
    workflowBundle: settings.FAHEEM_WORKFLOW_BUNDLE || undefined,
  };
}
