// Activity: on the workspace host, put the workspace back as a checkpoint (a rewind); the state
// just before is kept as a checkpoint, and a retry after a crash finishes the same restore.
import { asActivity, checkpointInputs, parseInput } from './activity-support.js';
import type { CheckpointStore } from './shadow-repo.js';
import type { RestoreResult, RestoreWorkspaceInput } from './types.js';
import { withHeartbeat } from '../conversation/heartbeat.js';

/** Builds `restoreWorkspace(input)`: the workspace as checkpoint `input.commit`. */
export function createRestoreWorkspace(store: CheckpointStore) {
  return async function restoreWorkspace(input: RestoreWorkspaceInput): Promise<RestoreResult> {
    const { conversationId, workspace, commit, rewindId } = parseInput(checkpointInputs.restore, input, 'restoreWorkspace');
    return withHeartbeat(() => asActivity(async () => (await store.open(workspace)).restore(conversationId, commit, rewindId)));
  };
}
