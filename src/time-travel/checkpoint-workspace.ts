// Activity: on the workspace host, record the workspace as the checkpoint after a step (retried safely).
import { asActivity, checkpointInputs, parseInput } from './activity-support.js';
import type { CheckpointStore } from './shadow-repo.js';
import type { CheckpointInfo, CheckpointWorkspaceInput } from './types.js';
import { withHeartbeat } from '../conversation/heartbeat.js';

/** Builds `checkpointWorkspace(input)`: a snapshot of `input.workspace` as step `input.step` of the conversation. */
export function createCheckpointWorkspace(store: CheckpointStore) {
  return async function checkpointWorkspace(input: CheckpointWorkspaceInput): Promise<CheckpointInfo> {
    const { conversationId, workspace, step } = parseInput(checkpointInputs.checkpoint, input, 'checkpointWorkspace');
    return withHeartbeat(() => asActivity(async () => (await store.open(workspace)).snapshot(conversationId, step)));
  };
}
