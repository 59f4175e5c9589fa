// Which of the worker's environment variables go where: one policy for secrets (masked everywhere),
// for what commands, ctx.exec programs, hooks and MCP stdio servers start from (an allowlist), and
// for what an MCP server config may name.
import { PROVIDERS } from '../models/provider.js';
import type { ChildEnv } from '../environment.js';

/** The prefix of users' own secrets for tools: FAHEEM_SECRET_<NAME>=value. */
export const NAMED_SECRET_PREFIX = 'FAHEEM_SECRET_';

/** Environment variable names whose values are treated as secrets (masked in every output). */
export function isSecretName(name: string): boolean {
  return /(^LLM_API_KEY$|_API_KEY$|_TOKEN$|_SECRET$|PASSWORD|^TEMPORAL_TLS_|^FAHEEM_SECRET_|^FAHEEM_ENCRYPTION_KEYS?$|^AWS_SECRET_ACCESS_KEY$)/i.test(
    name,
  );
}

/** The values of the secret variables in `env` (6 characters or more), each key of FAHEEM_ENCRYPTION_KEYS too. */
export function secretValues(env: ChildEnv): string[] {
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
export function namedSecrets(env: ChildEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith(NAMED_SECRET_PREFIX) && v) out[k.slice(NAMED_SECRET_PREFIX.length)] = v;
  return out;
}

/**
 * The variables every command starts with (when the worker has them): what programs need to find
 * their tools, speak the user's language and know the terminal. LC_* too. Nothing else of the
 * worker's environment reaches a command unless FAHEEM_COMMAND_ENV names it.
 */
export const COMMAND_ENV_NAMES = ['PATH', 'HOME', 'LANG', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'COLUMNS', 'LINES'] as const;

/** The names FAHEEM_COMMAND_ENV adds (comma-separated), less the worker's own (its keys never go to a command). */
export function extraCommandNames(env: ChildEnv): string[] {
  return (env.FAHEEM_COMMAND_ENV ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n) && !isWorkerOwnVariable(n) && !n.startsWith(NAMED_SECRET_PREFIX));
}

/**
 * Whether commands (the terminal, ctx.exec, hooks, MCP stdio servers) start with this variable: one
 * of COMMAND_ENV_NAMES, an LC_* locale setting, or a name FAHEEM_COMMAND_ENV lists. An allowlist:
 * a variable the worker happens to have (AWS_SECRET_ACCESS_KEY, DATABASE_URL, SSH_AUTH_SOCK) stays out.
 */
export function isCommandVariable(name: string, env: ChildEnv): boolean {
  if ((COMMAND_ENV_NAMES as readonly string[]).includes(name) || /^LC_[A-Z_]+$/.test(name)) return true;
  return extraCommandNames(env).includes(name);
}

/** What commands start from: the allowlisted variables of the worker's environment (see isCommandVariable). */
export function commandBaseEnv(env: ChildEnv): Record<string, string> {
  const extra = new Set(extraCommandNames(env));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if ((COMMAND_ENV_NAMES as readonly string[]).includes(k) || /^LC_[A-Z_]+$/.test(k) || extra.has(k)) out[k] = v;
  }
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

/** The names FAHEEM_MCP_ENV offers to conversations' MCP configs (comma-separated), less the worker's own. */
export function mcpOfferedNames(env: ChildEnv): string[] {
  return (env.FAHEEM_MCP_ENV ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n) && !isWorkerOwnVariable(n));
}

/**
 * Whether a conversation's MCP config may name this variable as `${NAME}`: a user's secret for tools
 * (FAHEEM_SECRET_*) or a name the worker's FAHEEM_MCP_ENV offers. Whoever starts a conversation
 * writes that config, and a remote URL or a networked server could carry any other value away.
 */
export function isMcpOfferedVariable(name: string, env: ChildEnv): boolean {
  if (isWorkerOwnVariable(name)) return false;
  return name.startsWith(NAMED_SECRET_PREFIX) || mcpOfferedNames(env).includes(name);
}
