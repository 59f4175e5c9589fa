// Who made a change through the team API (an Actor: a tenant and a key's id or name, never the key):
// what a valid one is and how it reads. Pure and free of dependencies: the client, the workflow,
// the CLI and the console page use it.
import { TENANT_NAME, type Actor } from './tenants.js';

/** The longest key id or name an actor may carry (the keys file's own cap on names). */
export const ACTOR_KEY_MAX = 100;

// Printable text only: the actor is shown in terminals, the console and the Web UI's markdown.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029`]/;

/** Why `value` is not an actor, or undefined when it is one. */
export function actorProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'an actor is an object {tenant, key}';
  const { tenant, key } = value as Record<string, unknown>;
  if (typeof tenant !== 'string' || !TENANT_NAME.test(tenant) || tenant.includes('..'))
    return "the actor's tenant is a tenant name (1 to 63 lowercase letters, digits, '.', '_' or '-')";
  if (typeof key !== 'string' || key.length === 0 || key.length > ACTOR_KEY_MAX || UNPRINTABLE.test(key))
    return `the actor's key is the key's id or name: 1 to ${ACTOR_KEY_MAX} printable characters, no backquotes`;
  return undefined;
}

/** `value` as an actor (only its two fields), or undefined when it is not one. */
export function checkedActor(value: unknown): Actor | undefined {
  if (actorProblem(value) !== undefined) return undefined;
  const { tenant, key } = value as Actor;
  return { tenant, key };
}

/** How an actor reads in text: `tenant/key`. */
export function actorText(actor: Actor): string {
  return `${actor.tenant}/${actor.key}`;
}
