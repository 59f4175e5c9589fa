// Who is acting on this workflow run right now: the actor a signal's or update's `faheem-by` header
// named (src/client/actor-header.ts), while its handler's synchronous part runs, and the one the start
// carried. The workflow interceptors (./interceptors.ts) set them; ConversationRun.apply stamps the
// current one on the events it records. Module state is this run's own: the SDK gives each workflow
// its own copy of the bundle's modules. No command is made here, so old histories (which carry no
// such header) replay exactly as before.
import type { Actor } from '../../client/tenants.js';

let current: Actor | undefined;
let started: Actor | undefined;

/** The actor of the handler running now, or undefined (the loop, a timer, a plain client). */
export function currentActor(): Actor | undefined {
  return current;
}

/**
 * Runs `fn` with `actor` current (undefined: none, even inside another actor's call), then puts back
 * what was current. Only `fn`'s synchronous part is covered: what it awaits runs later, as no one.
 */
export function actingIn<T>(actor: Actor | undefined, fn: () => T): T {
  const before = current;
  current = actor;
  try {
    return fn();
  } finally {
    current = before;
  }
}

/** Notes the actor the workflow's start carried (the interceptor, before the workflow function runs). */
export function setStartActor(actor: Actor | undefined): void {
  started = actor;
}

/** The actor the workflow's start carried, or undefined. */
export function startActor(): Actor | undefined {
  return started;
}
