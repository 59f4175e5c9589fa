// Who made a change, as it travels from a client to the workflow: a Temporal header on the start,
// signal or update, never an argument, so the workflows' inputs and the messages' shapes stay as
// they were. Free of Node: the client's interceptor (src/client/acting.ts) and the workflow's
// (src/conversation/workflow/interceptors.ts) both use it. Headers skip the payload codec (the SDK never
// encodes them), so the actor is readable in the history even when payloads are encrypted: it names
// a tenant and a key's id or name, never a key.
import { defaultPayloadConverter, type Headers, type Payload } from '@temporalio/common';
import { checkedActor } from './actors.js';
import type { Actor } from './tenants.js';

/** The header that carries the actor of a start, signal or update. */
export const ACTOR_HEADER = 'faheem-by';

/** The header's payload for `actor` (the default payload converter's JSON). */
export function encodeActor(actor: Actor): Payload {
  return defaultPayloadConverter.toPayload({ tenant: actor.tenant, key: actor.key });
}

/**
 * The actor a start, signal or update carries, or undefined: no header, or one that does not decode
 * to an actor (anything else is ignored, never an error: a bad header must not fail a task).
 */
export function actorFromHeaders(headers: Headers | undefined): Actor | undefined {
  const payload = headers?.[ACTOR_HEADER];
  if (!payload) return undefined;
  try {
    return checkedActor(defaultPayloadConverter.fromPayload(payload));
  } catch {
    return undefined;
  }
}
