// Keeps secrets out of anything that reaches workflow history, logs or events.
/** What a hidden secret reads as. */
export const SECRET_MASK = '<secret-hidden>';

// Which variables are secrets is the env policy's (env-policy.ts); re-exported for older imports.
export { isSecretName, secretValues } from './env-policy.js';

/** Provider error messages quote keys partially ("sk-ab***xyz"). */
const PARTIAL_KEY = /\bsk-[A-Za-z0-9_*.-]{6,}/g;

/** `text` with every one of `secrets` (and provider-style partial keys, "sk-…") replaced by SECRET_MASK. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join(SECRET_MASK);
  return out.replace(PARTIAL_KEY, SECRET_MASK);
}

/**
 * A piece of a secret this short or shorter is left at a cut edge: a few characters tell nothing,
 * and masking every output whose last character begins some secret would be noise.
 */
const MIN_EDGE_PIECE = 3;

/**
 * `redact` for a piece cut out of a longer text (the head or tail of a long output, a spill file
 * cut at its cap): a secret the cut went through leaves only part of itself in the piece, which
 * `redact` cannot recognise. `cutAfter`: the text was cut at its end, so an end that is the start of
 * a secret (or of an "sk-…" key) is masked too; `cutBefore`: the text was cut at its start, so a
 * start that is the end of a secret is masked too.
 */
export function redactPiece(text: string, secrets: readonly string[], cut: { before?: boolean; after?: boolean }): string {
  let out = redact(text, secrets);
  if (cut.after) {
    let longest = 0;
    for (const s of secrets) {
      for (let k = Math.min(s.length - 1, out.length); k > Math.max(longest, MIN_EDGE_PIECE); k--) {
        if (out.endsWith(s.slice(0, k))) {
          longest = k;
          break;
        }
      }
    }
    const key = /\bsk-[A-Za-z0-9_*.-]*$/.exec(out);
    const from = Math.min(out.length - longest, key ? key.index : out.length);
    if (from < out.length) out = out.slice(0, from) + SECRET_MASK;
  }
  if (cut.before) {
    let longest = 0;
    for (const s of secrets) {
      for (let k = Math.min(s.length - 1, out.length); k > Math.max(longest, MIN_EDGE_PIECE); k--) {
        if (out.startsWith(s.slice(s.length - k))) {
          longest = k;
          break;
        }
      }
    }
    if (longest > 0) out = SECRET_MASK + out.slice(longest);
  }
  return out;
}
