// Rewinds asked for through the rewind update: at most one at a time, and each answer kept until the
// update that asked reads it (the loop carries the rewind out, workspace-checkpoints.ts).
import { FAILURE, failure } from '../../core/failure-types.js';
import type { RewindAnswer } from './rewind-rules.js';

/** Rewinds asked for (at most one at a time) and their answers, until the asker has read them. */
export class RewindRequests {
  private next = 0;
  private pendingValue: { id: number; to: number } | undefined;
  private readonly answers = new Map<number, { answer?: RewindAnswer; error?: string }>();

  get pending(): { id: number; to: number } | undefined {
    return this.pendingValue;
  }

  request(to: number): number {
    const id = ++this.next;
    this.pendingValue = { id, to };
    return id;
  }

  answer(id: number, result: { answer?: RewindAnswer; error?: string }): void {
    this.answers.set(id, result);
    if (this.pendingValue?.id === id) this.pendingValue = undefined;
  }

  answered(id: number): boolean {
    return this.answers.has(id);
  }

  /** The answer (once): a failed rewind fails the update with its reason. */
  take(id: number): RewindAnswer {
    const result = this.answers.get(id);
    this.answers.delete(id);
    if (!result?.answer) throw failure(FAILURE.RewindFailed, result?.error ?? 'the rewind did not happen');
    return result.answer;
  }
}
