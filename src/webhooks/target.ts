// Where a webhook may go: the URL's own check (syntax, scheme, no credentials; an address written
// in the URL against the address rules) and the check of every address its host resolves to. The
// API refuses a bad URL with 400 at create time through these; the delivery asks again before each
// attempt and connects to an address it checked (DNS answers may change in between).
import { lookup as dnsLookup } from 'node:dns/promises';
import { InvalidRequestError } from '../core/errors.js';
import { addressRefusal, hostAllowed, NO_EXTRA_ALLOWED, parseIp, type WebhookAllowList } from './addresses.js';

/** Why a webhook URL was refused: not a URL we send to, an address it may not reach, or a host that does not resolve. */
export type WebhookTargetProblem = 'invalid' | 'forbidden' | 'unresolved';

/** A webhook URL that is refused (an InvalidRequestError: the API answers 400), with why. */
export class WebhookTargetError extends InvalidRequestError {
  constructor(
    readonly problem: WebhookTargetProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The longest webhook URL taken. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * The webhook URL as it will be used: `http:` or `https:`, a host, no user name or password (the
 * signature authenticates; credentials in a URL end up in logs and history), no fragment. With
 * `allow`, a host written as an IP address is held to the address rules too (no DNS needed).
 * Throws a WebhookTargetError saying what is wrong.
 */
export function checkWebhookUrl(text: unknown, allow?: WebhookAllowList): URL {
  if (typeof text !== 'string' || text.trim() === '') throw new WebhookTargetError('invalid', 'webhook.url must be a non-empty string');
  if (text.length > MAX_WEBHOOK_URL_LENGTH)
    throw new WebhookTargetError('invalid', `webhook.url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new WebhookTargetError('invalid', 'webhook.url is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WebhookTargetError('invalid', `webhook.url must be http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username !== '' || url.password !== '')
    throw new WebhookTargetError('invalid', 'webhook.url may not hold a user name or password: the signature authenticates the delivery');
  if (url.hostname === '') throw new WebhookTargetError('invalid', 'webhook.url has no host');
  url.hash = '';
  if (allow) {
    const literal = parseIp(url.hostname);
    if (literal) {
      const refusal = addressRefusal(literal, allow, hostAllowed(url.hostname, allow));
      if (refusal) throw new WebhookTargetError('forbidden', `webhook.url is refused: ${refusal}`);
    }
  }
  return url;
}

/** One address a host resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has (`dns.lookup` with `all`, by default). */
export type HostLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A webhook URL with the addresses it may be sent to (every one of them checked). */
export interface WebhookTarget {
  readonly url: URL;
  readonly addresses: readonly ResolvedAddress[];
}

/**
 * Checks the URL (checkWebhookUrl), resolves its host and holds every address to the rules: one
 * refused address refuses the URL (a name with a private address among public ones is how a
 * rebinding attack starts). Throws a WebhookTargetError: `invalid`, `forbidden`, or `unresolved`
 * when the host has no address now.
 */
export async function resolveWebhookTarget(
  text: unknown,
  allow: WebhookAllowList = NO_EXTRA_ALLOWED,
  lookup: HostLookup = systemLookup,
): Promise<WebhookTarget> {
  const url = checkWebhookUrl(text, allow);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = parseIp(hostname);
  if (literal) return { url, addresses: [{ address: hostname, family: literal.family }] };
  let found: readonly { address: string; family: number }[];
  try {
    found = await lookup(hostname);
  } catch (err) {
    throw new WebhookTargetError(
      'unresolved',
      `webhook host ${hostname} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        cause: err,
      },
    );
  }
  if (found.length === 0) throw new WebhookTargetError('unresolved', `webhook host ${hostname} has no address`);
  const listed = hostAllowed(hostname, allow);
  const addresses: ResolvedAddress[] = [];
  for (const { address } of found) {
    const ip = parseIp(address);
    if (!ip)
      throw new WebhookTargetError('unresolved', `webhook host ${hostname} resolved to ${JSON.stringify(address)}, not an IP address`);
    const refusal = addressRefusal(ip, allow, listed);
    if (refusal) throw new WebhookTargetError('forbidden', `webhook host ${hostname} is refused: ${refusal}`);
    addresses.push({ address, family: ip.family });
  }
  return { url, addresses };
}
