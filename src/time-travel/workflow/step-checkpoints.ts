// The step checkpoints being taken (one after the other) while the loop goes on, and the one that
// came back with a step's last host call. A held part of the run, like what is in flight: no run
// state here (the checkpoints themselves are recorded by the recordCheckpoint command).
import type { CheckpointInfo } from '../types.js';

/** The queue of step checkpoints in flight, and a folded one kept until its turn records it. */
export class StepCheckpoints {
  private checkpointing: Promise<unknown> | undefined;
  private folded: { step: number; info: CheckpointInfo } | undefined;

  /**
   * Queues a step's checkpoint behind the one in flight, if any (a step that reuses the previous
   * commit must see it). It runs while the next model call does; `settled` is awaited before
   * anything that needs it (the next reply's events, a rewind, the end of the run).
   */
  queue(work: () => Promise<unknown>): void {
    const started = this.checkpointing ? this.checkpointing.then(work) : work();
    const tracked: Promise<void> = started.then(() => {
      if (this.checkpointing === tracked) this.checkpointing = undefined;
    });
    this.checkpointing = tracked;
  }

  /** A checkpoint is still being taken. */
  get pending(): boolean {
    return this.checkpointing !== undefined;
  }

  /** Resolves once every queued checkpoint is recorded. */
  async settled(): Promise<void> {
    while (this.checkpointing) await this.checkpointing;
  }

  /** A step's checkpoint that came back with its last host call (see workspace-checkpoints.ts): kept until the turn records it. */
  noteFolded(step: number, info: CheckpointInfo): void {
    this.folded = { step, info };
  }

  /** The checkpoint that came with step `step`'s last host call, if any (taken: asked once). */
  takeFolded(step: number): CheckpointInfo | undefined {
    const folded = this.folded;
    this.folded = undefined;
    return folded?.step === step ? folded.info : undefined;
  }
}
