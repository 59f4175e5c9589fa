// Durable webhooks, as the `faheem api` process uses them: check a conversation's webhook when it
// is created (prepareWebhook: 400 for a bad one), keep its secret (webhookSecrets), and run the
// worker that delivers each stop (createWebhookWorker). The conversation workflow's side is in
// src/webhooks/workflow/webhooks.ts.
import type { WebhookAllowList } from './addresses.js';
import { checkWebhookSecret, type WebhookSecrets } from './secrets.js';
import { resolveWebhookTarget, type HostLookup } from './target.js';

export { parseAllowList, NO_EXTRA_ALLOWED, type WebhookAllowList } from './addresses.js';
export { SIGNATURE_HEADER, signWebhook, verifyWebhookSignature } from './signature.js';
export { checkWebhookUrl, resolveWebhookTarget, WebhookTargetError, type WebhookTarget, type WebhookTargetProblem } from './target.js';
export { checkWebhookSecret, FileWebhookSecrets, StoreWebhookSecrets, webhookSecrets, type WebhookSecrets } from './secrets.js';
export { createWebhookActivities, type WebhookActivities, type WebhookActivityOptions } from './deliver.js';
export { createWebhookWorker, type WebhookWorkerOptions } from './worker.js';
export { webhookTaskQueue } from './queue.js';

/**
 * A new conversation's webhook, checked and its secret stored, before the conversation starts:
 * the URL (resolved, every address held to the rules) and the secret are checked, the secret is
 * kept under the conversation's id, and what the conversation itself may hold comes back (pass it
 * as `CreateOptions.webhook`). Throws an InvalidRequestError (a WebhookTargetError for the URL)
 * saying what is wrong: the API answers 400.
 */
export async function prepareWebhook(
  conversationId: string,
  webhook: { url: unknown; secret: unknown },
  options: { secrets: WebhookSecrets; allow: WebhookAllowList; lookup?: HostLookup },
): Promise<{ url: string }> {
  const secret = checkWebhookSecret(webhook.secret);
  const { url } = await resolveWebhookTarget(webhook.url, options.allow, options.lookup);
  await options.secrets.put(conversationId, secret);
  return { url: url.href };
}
