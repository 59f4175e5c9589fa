// The webhook signature: `sha256=` and the hex HMAC-SHA256 of the exact bytes of the body, keyed
// with the conversation's webhook secret (GitHub's `X-Hub-Signature-256` scheme, our header name).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header a delivery's signature travels in. */
export const SIGNATURE_HEADER = 'X-Faheem-Signature';

/** `sha256=<hex>`: the HMAC-SHA256 of `body` (the bytes sent, as they are) with `secret`. */
export function signWebhook(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether `header` is the signature of `body` with `secret` (compared in constant time). */
export function verifyWebhookSignature(body: string | Uint8Array, secret: string, header: string | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(signWebhook(body, secret));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
