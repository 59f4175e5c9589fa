// The conversation's webhook deliveries: a held part of the run, like the step checkpoints. Each
// stop queues one delivery; they go one after the other (a receiver sees the stops in order), while
// the loop goes on. A delivery is a deliverWebhook activity on the webhook worker's queue (the
// process that holds the secret), retried there with back-off; its end, delivered or failed, is a
// `webhook` event. Nothing here can fail the workflow: every failure becomes that event.
import type { WebhookDeliveryInput, WebhookFailureDetails } from '../../core/types.js';
import type { WebhookOutcome } from '../../conversation/workflow/runner/commands.js';

/** Sends one delivery and says how it ended (never rejects): the effects port's deliverWebhook. */
export type SendWebhook = (taskQueue: string, request: WebhookDeliveryInput) => Promise<Omit<WebhookOutcome, 'eventIndex' | 'status'>>;

/** The deliveries queued or in flight, oldest first. */
export class WebhookDeliveries {
  private chain: Promise<void> | undefined;
  private waiting: WebhookDeliveryInput[] = [];

  /**
   * Queues `request` behind the deliveries before it; `send` delivers it (started at once when
   * nothing is ahead, so the activity is scheduled in the same workflow task as the stop).
   */
  queue(request: WebhookDeliveryInput, send: (request: WebhookDeliveryInput) => Promise<void>): void {
    this.waiting.push(request);
    const run = (): Promise<void> =>
      send(request)
        .catch(() => undefined)
        .then(() => {
          this.waiting = this.waiting.filter((r) => r !== request);
        });
    const started = this.chain ? this.chain.then(run) : run();
    const tracked: Promise<void> = started.then(() => {
      if (this.chain === tracked) this.chain = undefined;
    });
    this.chain = tracked;
  }

  /** A delivery is queued or in flight. */
  get pending(): boolean {
    return this.chain !== undefined;
  }

  /** Resolves once every queued delivery is over (and recorded). */
  async settled(): Promise<void> {
    while (this.chain) await this.chain;
  }

  /** What is not delivered yet: carried to the next run when this one continues as new. */
  get unfinished(): readonly WebhookDeliveryInput[] {
    return this.waiting;
  }
}

/** The delivery id of a stop (`<conversation id>/<event index>`): a receiver drops a repeat by it. */
export function deliveryId(conversationId: string, eventIndex: number): string {
  return `${conversationId}/${eventIndex}`;
}

/**
 * How a failed delivery ended, read from the activity's failure by shape (no Temporal classes):
 * its last attempt's ApplicationFailure (message, status code, attempts), or a timeout with none
 * (no webhook worker took it in time).
 */
export function failedDelivery(err: unknown, taskQueue: string): Omit<WebhookOutcome, 'eventIndex' | 'status'> {
  let timedOut = false;
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const failure = e as { name?: unknown; type?: unknown; message?: unknown; details?: unknown };
    if (failure.name === 'TimeoutFailure') timedOut = true;
    if (typeof failure.type === 'string' && failure.type.startsWith('Webhook')) {
      const detail = (Array.isArray(failure.details) ? failure.details[0] : undefined) as Partial<WebhookFailureDetails> | undefined;
      const message = typeof failure.message === 'string' ? failure.message : failure.type;
      return {
        delivered: false,
        attempts: typeof detail?.attempts === 'number' ? detail.attempts : 1,
        ...(typeof detail?.statusCode === 'number' ? { statusCode: detail.statusCode } : {}),
        reason: timedOut ? `gave up after 10 minutes of retries; last: ${message}` : message,
      };
    }
  }
  return {
    delivered: false,
    attempts: 0,
    reason: timedOut
      ? `no webhook worker on task queue ${taskQueue} took the delivery within 10 minutes (is \`faheem api\` running?)`
      : `the delivery failed: ${err instanceof Error ? err.message : String(err)}`,
  };
}
