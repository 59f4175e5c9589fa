// Keeps secrets out of anything that reaches workflow history, logs or events.
/** What a hidden secret reads as. */
export const SECRET_MASK = '<secret-hidden>';

// Which variables are secrets is the env policy's (env-policy.ts); re-exported for older imports.
export { isSecretName, secretValues } from './env-policy.js';

/** `text` with every one of `secrets` (and provider-style partial keys, "sk-…") replaced by SECRET_MASK. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join(SECRET_MASK);
  // Provider error messages quote keys partially ("sk-ab***xyz"); hide those too.
  return out.replace(/\bsk-[A-Za-z0-9_*.-]{6,}/g, SECRET_MASK);
}
