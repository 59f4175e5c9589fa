// Activity: on the workspace host, write a checkpoint into a new workspace for a forked
// conversation (the original untouched), carrying the checkpoints up to it over to the fork.
import { asActivity, checkpointInputs, parseInput } from './activity-support.js';
import { defaultForkDir, type CheckpointStore } from './shadow-repo.js';
import type { ForkResult, ForkWorkspaceInput } from './types.js';
import { withHeartbeat } from '../conversation/heartbeat.js';

/** Builds `forkWorkspace(input)`. The target must be empty (CheckpointInvalid otherwise), except for a retry of the same fork. */
export function createForkWorkspace(store: CheckpointStore) {
  return async function forkWorkspace(input: ForkWorkspaceInput): Promise<ForkResult> {
    const { workspace, conversationId, commit, newConversationId, target } = parseInput(checkpointInputs.fork, input, 'forkWorkspace');
    const dir = target ?? defaultForkDir(workspace, newConversationId);
    return withHeartbeat(() =>
      asActivity(async () =>
        (await store.open(workspace)).materialize(commit, dir, { from: conversationId, to: newConversationId, store }),
      ),
    );
  };
}
