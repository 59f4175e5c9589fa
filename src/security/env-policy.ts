// Which of the worker's environment variables go where: one policy for secrets (masked everywhere),
// for what commands and ctx.exec programs start from, and for what an MCP server config may name.
import { PROVIDERS } from '../llm/provider.js';

/** The prefix of users' own secrets for tools: FAHEEM_SECRET_<NAME>=value. */
export const NAMED_SECRET_PREFIX = 'FAHEEM_SECRET_';

/** Environment variable names whose values are treated as secrets (masked in every output). */
export function isSecretName(name: string): boolean {
  return /(^LLM_API_KEY$|_API_KEY$|_TOKEN$|_SECRET$|PASSWORD|^TEMPORAL_TLS_|^FAHEEM_SECRET_|^FAHEEM_ENCRYPTION_KEYS?$)/i.test(name);
}

/** The values of the secret variables in `env` (6 characters or more), each key of FAHEEM_ENCRYPTION_KEYS too. */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const values = Object.entries(env)
    .filter(([k, v]) => isSecretName(k) && typeof v === 'string' && v.length >= 6)
    .map(([, v]) => v as string);
  // Each key of FAHEEM_ENCRYPTION_KEYS (id1:key1,id2:key2) on its own, too.
  for (const entry of (env.FAHEEM_ENCRYPTION_KEYS ?? '').split(',')) {
    const key = entry.slice(entry.indexOf(':') + 1).trim();
    if (key.length >= 6) values.push(key);
  }
  return values;
}

/** Secrets the worker was given as FAHEEM_SECRET_<NAME>=value, by NAME. */
export function namedSecrets(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith(NAMED_SECRET_PREFIX) && v) out[k.slice(NAMED_SECRET_PREFIX.length)] = v;
  return out;
}

/** Whether commands (the terminal, ctx.exec) see this variable: not a secret, not the model's or Temporal's settings. */
export function isCommandVariable(name: string): boolean {
  return !isSecretName(name) && !name.startsWith('LLM_') && !name.startsWith('TEMPORAL_');
}

/** The worker's environment without its secrets: commands never see the LLM key. */
export function commandBaseEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && isCommandVariable(k)) out[k] = v;
  return out;
}

/**
 * The worker's own secrets never go to an MCP server, whoever wrote the config (anyone who can start a
 * conversation can): its model keys, Temporal credentials, encryption keys and faheem settings.
 * Users' secrets for tools (FAHEEM_SECRET_*) and any other variable may be named.
 */
export function isWorkerOwnVariable(name: string): boolean {
  if (name.startsWith(NAMED_SECRET_PREFIX)) return false;
  return /^(LLM_|TEMPORAL_|FAHEEM_)/.test(name) || Object.values(PROVIDERS).some((p) => p.keyVar === name);
}
