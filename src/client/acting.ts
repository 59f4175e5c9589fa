// Who a client process acts for. The team API runs each caller's SDK calls inside `actingAs`, and
// the client interceptor below (on every client connectClient makes) puts that actor on each start,
// signal and update as the `faheem-by` header; the workflow stamps it on the events the call
// records (src/conversation/workflow/actor.ts). Outside `actingAs` nothing is added: no header, no cost.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Headers } from '@temporalio/common';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { ACTOR_HEADER, encodeActor } from './actor-header.js';
import { actorProblem } from './actors.js';
import { InvalidRequestError } from '../core/errors.js';
import type { Actor } from './tenants.js';

const acting = new AsyncLocalStorage<Actor>();

/**
 * Runs `fn` (and everything it starts, awaited or not) as `actor`: the conversations it starts and
 * the messages, pauses, resumes, approvals, rejections and closes it sends record `by: actor` on
 * their events. `actor.key` is the key's id or name, never the key. InvalidRequestError when the
 * actor is not a tenant name and a short printable key name.
 */
export function actingAs<T>(actor: Actor, fn: () => T): T {
  const problem = actorProblem(actor);
  if (problem) throw new InvalidRequestError(problem);
  return acting.run({ tenant: actor.tenant, key: actor.key }, fn);
}

/** The actor the current call runs as (inside `actingAs`), or undefined. */
export function currentActor(): Actor | undefined {
  return acting.getStore();
}

/** `headers` with the current actor's header, or `headers` itself when there is none. */
function withActor(headers: Headers): Headers {
  const actor = acting.getStore();
  return actor ? { ...headers, [ACTOR_HEADER]: encodeActor(actor) } : headers;
}

/**
 * The client interceptor that carries the current actor on starts, signals and updates (and
 * their with-start forms). connectClient installs it on every client this project makes.
 */
export const actorInterceptor: WorkflowClientInterceptor = {
  startWithDetails: (input, next) => next({ ...input, headers: withActor(input.headers) }),
  signal: (input, next) => next({ ...input, headers: withActor(input.headers) }),
  signalWithStart: (input, next) => next({ ...input, headers: withActor(input.headers) }),
  startUpdate: (input, next) => next({ ...input, headers: withActor(input.headers) }),
  startUpdateWithStart: (input, next) =>
    next({ ...input, workflowStartHeaders: withActor(input.workflowStartHeaders), updateHeaders: withActor(input.updateHeaders) }),
};
