// Keeps secrets out of anything that reaches workflow history, logs or events.
export const SECRET_MASK = '<secret-hidden>';

/** Environment variable names whose values are treated as secrets. */
export function isSecretName(name: string): boolean {
  return /(^LLM_API_KEY$|_API_KEY$|_TOKEN$|_SECRET$|PASSWORD|^TEMPORAL_TLS_|^FAHEEM_SECRET_|^FAHEEM_ENCRYPTION_KEYS?$)/i.test(name);
}

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

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join(SECRET_MASK);
  // Provider error messages quote keys partially ("sk-ab***xyz"); hide those too.
  return out.replace(/\bsk-[A-Za-z0-9_*.-]{6,}/g, SECRET_MASK);
}
