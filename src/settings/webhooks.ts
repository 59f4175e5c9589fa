// The webhooks area of the settings (`faheem api`): the hosts, addresses and ranges beyond the
// public internet that webhooks may reach. Built once at the entry point and passed down.
import { setting, type Settings } from '../environment.js';
import { parseAllowList, type WebhookAllowList } from '../webhooks/addresses.js';

/** The webhook settings. */
export interface WebhookSettings {
  /** FAHEEM_WEBHOOK_ALLOW, parsed; none beyond the public internet when unset. */
  readonly allow: WebhookAllowList;
}

/** The webhook settings `settings` gives (checked by readSettings: a bad list stops the process there). */
export function webhookSettings(settings: Settings): WebhookSettings {
  return { allow: parseAllowList(setting(settings, 'FAHEEM_WEBHOOK_ALLOW')) };
}
