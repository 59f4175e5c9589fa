// What is in flight in the loop (the model call, condensation or setup; the host tool call), so that
// a pause or close can reach it. The only writer of its fields: the runner's parts begin and end
// their call here, the commands' effects cancel it.
import { CancellationScope, isCancellation } from '@temporalio/workflow';

/** What came of work in flight: its value, or the error it ended in, told apart by whether a pause or close cancelled it. */
export type Flight<T> = { kind: 'done'; value: T } | { kind: 'cancelled'; error: unknown } | { kind: 'failed'; error: unknown };

/** The cancellation scopes of what is in flight. */
export class InFlight {
  private modelScope: CancellationScope | undefined;
  private toolScope: CancellationScope | undefined;
  private interrupt = false;
  private hostWait = false;

  /** The model call, condensation or setup in flight. */
  get model(): CancellationScope | undefined {
    return this.modelScope;
  }
  /** The host tool call in flight. */
  get tool(): CancellationScope | undefined {
    return this.toolScope;
  }
  /** A `pause --now` asked to interrupt the tool call in flight. */
  get interruptRequested(): boolean {
    return this.interrupt;
  }
  /** No worker on the workspace host's queue has picked up the call in flight for a while. */
  get waitingForHost(): boolean {
    return this.hostWait;
  }

  /**
   * Runs a model call (or condensation, or setup) in a scope a pause or close cancels, and says
   * what came of it: cancelled when the scope was (whatever error the call ended in: a call whose
   * worker died before acknowledging ends in a timeout) or `halted()` says the run stopped.
   */
  async modelCall<T>(work: () => Promise<T>, halted: () => boolean): Promise<Flight<T>> {
    const scope = new CancellationScope();
    this.modelScope = scope;
    try {
      return { kind: 'done', value: await scope.run(work) };
    } catch (error) {
      return isCancellation(error) || scope.consideredCancelled || halted() ? { kind: 'cancelled', error } : { kind: 'failed', error };
    } finally {
      this.modelScope = undefined;
    }
  }

  /** While `work` runs, the call in flight waits for a worker on the workspace host's queue. */
  async waitingForHostWhile<T>(work: () => Promise<T>): Promise<T> {
    this.hostWait = true;
    try {
      return await work();
    } finally {
      this.hostWait = false;
    }
  }

  /** A host tool call begins: its scope, which a `pause --now` (or a pause while waiting for the host) cancels. */
  beginTool(): CancellationScope {
    this.toolScope = new CancellationScope();
    return this.toolScope;
  }
  endTool(): void {
    this.toolScope = undefined;
    this.interrupt = false;
  }

  cancelModel(): void {
    this.modelScope?.cancel();
  }
  /** `interrupt`: a `pause --now`, so the command's result says it was interrupted. */
  cancelTool(interrupt: boolean): void {
    if (interrupt) this.interrupt = true;
    this.toolScope?.cancel();
  }
}
