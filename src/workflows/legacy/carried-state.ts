// Carried state (the input a run gets when its predecessor continued as new) of every older shape,
// migrated to the current one in one place. Pure.
import type { CarriedState, TerminalState } from '../../types.js';

/** The shape `toCarried()` writes now. Version 1 (no number) wrote `terminal` and `tasks` beside `toolState`. */
export const CARRIED_STATE_VERSION = 2;

/**
 * The carried state in the current shape: each tool's durable state by tool name (older runs
 * carried the terminal's state and the task list in fields of their own).
 */
export function migrateCarried(carried: CarriedState, workspace: string): CarriedState & { toolState: Record<string, unknown> } {
  if (carried.toolState) return { ...carried, toolState: carried.toolState };
  const terminal: TerminalState = carried.terminal ?? { cwd: workspace, env: {} };
  return {
    ...carried,
    toolState: { terminal, ...(carried.tasks ? { task_tracker: carried.tasks } : {}) },
  };
}
