// Activity: on the workspace host, the checkpoints of a conversation (for `faheem checkpoints`).
import { asActivity, checkpointInputs, parseInput } from '../checkpoints/activity-support.js';
import type { CheckpointStore } from '../checkpoints/shadow-repo.js';
import type { CheckpointInfo, ListCheckpointsInput } from '../checkpoints/types.js';

/** Builds `listCheckpoints(input)`: by step, then the "before rewind" ones. */
export function createListCheckpoints(store: CheckpointStore) {
  return async function listCheckpoints(input: ListCheckpointsInput): Promise<CheckpointInfo[]> {
    const { conversationId, workspace } = parseInput(checkpointInputs.list, input, 'listCheckpoints');
    return asActivity(async () => (await store.open(workspace)).list(conversationId));
  };
}
