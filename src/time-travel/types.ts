// Plain data in and out of the checkpoint store and its activities: no secrets, JSON-safe.

/**
 * Why a checkpoint was taken: after a step, just before a rewind (so the rewind can be undone), or
 * in the middle of a step, when a pooled conversation hibernates in a wait or an approval (the
 * workspace shipped as it is then; never listed, never the step's own checkpoint).
 */
export type CheckpointKind = 'step' | 'before-rewind' | 'mid-step';

/** One checkpoint of a conversation's workspace: a commit in the host's shadow repository. */
export interface CheckpointInfo {
  /** The shadow commit's id (40 hex): what a step's event records and what restore/fork take. */
  commit: string;
  /** The commit's tree: equal trees mean equal workspaces (as far as checkpoints see them). */
  tree: string;
  /** The step it was taken after (0: before the first step; for 'before-rewind', the step the conversation was at). */
  step: number;
  kind: CheckpointKind;
  /** When it was taken, ms since the epoch (the commit's time, to the second). */
  time: number;
  /** Files added, changed and deleted since the previous checkpoint of the conversation (all files are "added" in the first). */
  added: number;
  changed: number;
  deleted: number;
  /** Files over the size cap, left out of the checkpoint (workspace-relative, at most 100 listed). */
  skipped: string[];
  /** The previous checkpoint of the conversation (undefined for the first). */
  parent?: string;
}

/** Input of the `checkpointWorkspace` activity. */
export interface CheckpointWorkspaceInput {
  conversationId: string;
  /** The workspace directory on this host (absolute). */
  workspace: string;
  /** The step just finished (0 before the first). A retry of the same step returns the same checkpoint. */
  step: number;
}

/** Input of the `restoreWorkspace` activity. */
export interface RestoreWorkspaceInput {
  conversationId: string;
  workspace: string;
  /** The checkpoint to put the workspace back to. */
  commit: string;
  /**
   * Names this rewind, unique within the conversation (e.g. the event index of the rewind request):
   * a retried restore with the same id reuses its "before" checkpoint and finishes the same work.
   */
  rewindId: string;
}

/** What a restore did. */
export interface RestoreResult {
  /** The workspace as it was just before (kind 'before-rewind'): restore it to undo the rewind. */
  before: CheckpointInfo;
  /** The checkpoint the workspace now matches. */
  restored: string;
  /** Its step, when it is a checkpoint of this conversation. */
  step?: number;
  /** Files written back (added or changed relative to before) and files removed. */
  written: number;
  removed: number;
  /**
   * Paths the checkpoint holds that were left as they are because the workspace has them outside
   * what checkpoints track (ignored, or over the size cap): never overwritten.
   */
  kept: string[];
}

/** Input of the `forkWorkspace` activity. */
export interface ForkWorkspaceInput {
  /** The workspace whose shadow repository holds the checkpoint. */
  workspace: string;
  /** The conversation forked from: its checkpoints up to `commit`'s step go with the fork. */
  conversationId: string;
  commit: string;
  /** The new conversation: its checkpoints in the new workspace start with those carried over. */
  newConversationId: string;
  /** The new workspace directory (must not exist or be empty); default defaultForkDir(workspace, newConversationId). */
  target?: string;
}

/** What a fork wrote. */
export interface ForkResult {
  /** The new workspace directory (absolute). */
  target: string;
  /** Files written into it. */
  files: number;
  /** Step checkpoints carried over to the new conversation (0 without carrying). */
  steps: number;
}

/** Input of the `listCheckpoints` activity. */
export interface ListCheckpointsInput {
  conversationId: string;
  workspace: string;
}
