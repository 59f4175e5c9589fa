// Tenants of the team API: who a conversation belongs to, and who changed it. A tenant's name is
// a search attribute value, a folder under the API's workspaces root and a fairness key, so it is
// kept to characters that are safe in all three.
import { InvalidRequestError } from '../core/errors.js';

/** A tenant's name: 1–63 lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
export const TENANT_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** The tenant name as given, or an InvalidRequestError that says what a name may hold. */
export function checkTenant(name: string): string {
  if (!TENANT_NAME.test(name) || name.includes('..'))
    throw new InvalidRequestError(
      `tenant ${JSON.stringify(name.slice(0, 80))}: 1 to 63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  return name;
}

/** Who made a change through the API: the tenant and the key's id or name (never the key itself). */
export interface Actor {
  tenant: string;
  key: string;
}
