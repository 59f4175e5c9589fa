// Worker Versioning inside the loop: a conversation is pinned to the version it started on; when
// its deployment's current (target) version changes, it continues as new onto that version at the
// loop's top (after a step, or at once when woken, e.g. by `faheem deploy drain`), carrying its state.
// On an unversioned worker the target never changes and none of this does anything.
import { workflowInfo } from '@temporalio/workflow';
import { isPatched } from '../legacy/patches.js';

/**
 * Whether the run should continue as new onto a new version now. The server sets the flag on the
 * workflow task (it is in the history, so a replay sees the same); the patch marker is written only
 * when it is true, which no history from before this code recorded.
 */
export function moveToNewVersionDue(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged === true && isPatched('move-to-new-version');
}

/** Whether the target version changed (no marker: for conditions, which must not write commands). */
export function targetVersionChanged(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged === true;
}
