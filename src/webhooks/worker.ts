// The webhook worker: a Temporal worker the `faheem api` process runs beside its HTTP server, on
// its own task queue, with the deliverWebhook activity only. It is the one holder of the webhook
// secrets; conversation workers never see them, and no workflow history does.
import { Worker, type NativeConnection } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import type { WebhookAllowList } from './addresses.js';
import { createWebhookActivities, type WebhookActivityOptions } from './deliver.js';
import type { WebhookSecrets } from './secrets.js';

/** What createWebhookWorker needs. */
export interface WebhookWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  /** The queue it polls: `webhookTaskQueue(<the conversations' task queue>)`, the one conversationStart writes into `webhook.taskQueue`. */
  taskQueue: string;
  secrets: WebhookSecrets;
  /** FAHEEM_WEBHOOK_ALLOW, parsed (parseAllowList); default nothing beyond the public internet. */
  allow?: WebhookAllowList;
  /** The clients' data converter (`dataConverter(settings)`), so encrypted inputs decode. */
  dataConverter?: DataConverter;
  /** One attempt's time limit, and host resolution (tests). */
  timeoutMs?: WebhookActivityOptions['timeoutMs'];
  lookup?: WebhookActivityOptions['lookup'];
  /** Deliveries at once (default 20). */
  maxConcurrentDeliveries?: number;
}

/** A Temporal worker that delivers webhooks: `run()` it, `shutdown()` it with its process. */
export async function createWebhookWorker(options: WebhookWorkerOptions): Promise<Worker> {
  const activities = createWebhookActivities({
    secrets: options.secrets,
    ...(options.allow ? { allow: options.allow } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    identity: `faheem-webhooks@${process.pid}`,
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    activities,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentDeliveries ?? 20,
  });
}
