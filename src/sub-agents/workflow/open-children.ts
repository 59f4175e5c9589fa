// Handles to a conversation's open sub-agents, so that a pause, resume or close reaches them (what
// the parent knows of each is in the run's state; a delegate call is ./sub-agents.ts).
import type { ChildWorkflowHandle, Workflow } from '@temporalio/workflow';

/** The open sub-agents of one conversation (what the parent knows of each is in the run's state). */
export class OpenChildren {
  private readonly open = new Map<string, ChildWorkflowHandle<Workflow>>();

  /** Pause, resume and close reach every open sub-agent at once. */
  tell(fn: (handle: ChildWorkflowHandle<Workflow>) => Promise<void>): void {
    for (const handle of this.open.values()) fn(handle).catch(() => undefined);
  }

  /** A sub-agent started: pause, resume and close reach it until it ends. */
  opened(id: string, handle: ChildWorkflowHandle<Workflow>): void {
    this.open.set(id, handle);
  }

  /** It ended (or never started). */
  closed(id: string): void {
    this.open.delete(id);
  }
}
