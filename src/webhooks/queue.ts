// The webhook worker's task queue, named from the conversations' own (no Temporal worker here: the
// client imports it).

/** The task queue of the webhook worker that serves conversations started on `taskQueue`. */
export function webhookTaskQueue(taskQueue: string): string {
  return `${taskQueue}-webhooks`;
}
