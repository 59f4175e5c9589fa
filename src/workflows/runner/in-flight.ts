// What is in flight in the loop (the model call, condensation or setup; the host tool call), so that
// a pause or close can reach it. The only writer of its fields: the runner's parts begin and end
// their call here, the commands' effects cancel it.
import { CancellationScope } from '@temporalio/workflow';

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

  /** A model call (or condensation, or setup) begins: its scope, which a pause or close cancels. */
  beginModel(): CancellationScope {
    this.modelScope = new CancellationScope();
    return this.modelScope;
  }
  endModel(): void {
    this.modelScope = undefined;
  }
  /** Whether the model call in flight was cancelled (whatever error it ended in). */
  get modelCancelled(): boolean {
    return this.modelScope?.consideredCancelled === true;
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

  /** The call in flight waits for a worker on the workspace host's queue (or no longer does). */
  setWaitingForHost(waiting: boolean): void {
    this.hostWait = waiting;
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

/** Whether the model call (or condensation, or setup) in flight was cancelled by a pause or close, whatever error it ended in. */
export function modelCallCancelled(run: { readonly inFlight: InFlight; readonly halted: boolean }): boolean {
  return run.inFlight.modelCancelled || run.halted;
}
