// Activity: on the workspace host, the checkpoints of a conversation (for `faheem checkpoints`).
import { asActivity, checkpointInputs, parseInput } from './activity-support.js';
import type { CheckpointStore } from './shadow-repo.js';
import type { CheckpointInfo, ListCheckpointsInput } from './types.js';

/** Builds `listCheckpoints(input)`: by step, then the "before rewind" ones. */
export function createListCheckpoints(store: CheckpointStore) {
  return async function listCheckpoints(input: ListCheckpointsInput): Promise<CheckpointInfo[]> {
    const { conversationId, workspace } = parseInput(checkpointInputs.list, input, 'listCheckpoints');
    return asActivity(async () => (await store.open(workspace)).list(conversationId));
  };
}
