// The deliverWebhook activity, run by the webhook worker of the process that created the
// conversation (it holds the secrets). One attempt: check the URL, resolve its host and check every
// address, connect to a checked address (so a second DNS answer cannot swap it), POST the exact
// bytes it signed, follow no redirect, give up after a short timeout. A 2xx is delivered; a 4xx
// other than 408/429 (or a redirect) fails for good; anything else is retried by the activity's
// retry policy (src/webhooks/workflow/webhooks.ts) with back-off.
import { Context } from '@temporalio/activity';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { FAILURE, failure } from '../core/failure-types.js';
import type { WebhookDeliveryInput, WebhookDeliveryResult, WebhookFailureDetails } from '../core/types.js';
import { NO_EXTRA_ALLOWED, type WebhookAllowList } from './addresses.js';
import type { WebhookSecrets } from './secrets.js';
import { SIGNATURE_HEADER, signWebhook } from './signature.js';
import { resolveWebhookTarget, WebhookTargetError, type HostLookup, type ResolvedAddress } from './target.js';

/** How long one attempt may take, connection to the end of the answer. */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;

/** The most of a receiver's answer read (the rest is dropped). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** What the webhook worker's activity needs. */
export interface WebhookActivityOptions {
  /** Where each conversation's secret is kept. */
  secrets: WebhookSecrets;
  /** FAHEEM_WEBHOOK_ALLOW, parsed (parseAllowList): hosts and ranges reachable beyond the public internet. */
  allow?: WebhookAllowList;
  /** How long one attempt may take (default 10 s). */
  timeoutMs?: number;
  /** Host resolution (default the system's, `dns.lookup`). */
  lookup?: HostLookup;
}

/** The webhook worker's activities. */
export interface WebhookActivities {
  deliverWebhook(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult>;
}

/** The webhook worker's activities, over its secrets and allow list. */
export function createWebhookActivities(options: WebhookActivityOptions): WebhookActivities {
  const allow = options.allow ?? NO_EXTRA_ALLOWED;
  const timeoutMs = options.timeoutMs ?? WEBHOOK_ATTEMPT_TIMEOUT_MS;
  return {
    async deliverWebhook(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
      const ctx = Context.current();
      const attempts = ctx.info.attempt;
      const details = (statusCode?: number): WebhookFailureDetails => ({ attempts, ...(statusCode !== undefined ? { statusCode } : {}) });
      let target;
      try {
        target = await resolveWebhookTarget(input.url, allow, options.lookup);
      } catch (err) {
        if (err instanceof WebhookTargetError && err.problem === 'unresolved')
          throw failure(FAILURE.WebhookUnavailable, err.message, { details: [details()] });
        throw failure(FAILURE.WebhookRefused, (err as Error).message, { details: [details()] });
      }
      const secret = await options.secrets.get(input.conversationId);
      if (secret === undefined)
        throw failure(FAILURE.WebhookRefused, `no webhook secret is stored for conversation ${input.conversationId}`, {
          details: [details()],
        });
      const body = JSON.stringify(input.payload);
      const headers = {
        'Content-Type': 'application/json',
        'User-Agent': 'faheem-webhook/1',
        [SIGNATURE_HEADER]: signWebhook(body, secret),
        'X-Faheem-Delivery': input.deliveryId,
      };
      let answer: { statusCode: number; retryAfter?: string | undefined };
      try {
        answer = await post(
          target.url,
          target.addresses[0]!,
          headers,
          body,
          AbortSignal.any([ctx.cancellationSignal, AbortSignal.timeout(timeoutMs)]),
        );
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        const why = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (err as Error).message;
        throw failure(FAILURE.WebhookUnavailable, `webhook ${target.url.host}: ${why}`, { details: [details()] });
      }
      const { statusCode } = answer;
      if (statusCode >= 200 && statusCode < 300) return { statusCode, attempts };
      const where = `webhook ${target.url.host} answered ${statusCode}`;
      if (statusCode >= 300 && statusCode < 400)
        throw failure(FAILURE.WebhookRejected, `${where}: redirects are not followed`, { details: [details(statusCode)] });
      if (statusCode >= 400 && statusCode < 500 && statusCode !== 408 && statusCode !== 429)
        throw failure(FAILURE.WebhookRejected, where, { details: [details(statusCode)] });
      const delay = retryAfterMs(answer.retryAfter);
      throw failure(FAILURE.WebhookUnavailable, where, {
        details: [details(statusCode)],
        ...(delay !== undefined ? { nextRetryDelay: delay } : {}),
      });
    },
  };
}

/** A Retry-After of seconds, within reason (at most 5 minutes), in milliseconds. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Math.min(Number(value) * 1000, 5 * 60_000) || undefined;
}

/** POSTs `body` to `url` through `address` (checked), following no redirect; the status and Retry-After. */
function post(
  url: URL,
  address: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<{ statusCode: number; retryAfter?: string | undefined }> {
  // The socket connects to the address checked, whatever the name resolves to now; TLS still
  // checks the certificate against the URL's host name.
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
        lookup: pinned,
        agent: false,
        signal,
      },
      (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        const done = () => resolve({ statusCode: response.statusCode ?? 0, retryAfter: headerText(response.headers['retry-after']) });
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
