// `faheem doctor`'s configuration block: the settings this process runs with (secrets masked), as
// the table in src/environment.ts reads them: each value, its default, or why it is not valid.
import { effectiveConfiguration, type RawEnv } from '../environment.js';

/**
 * The lines of the configuration block: with `all`, every variable with its value or default;
 * otherwise only those set. Secrets show as hidden, never their value.
 */
export function configurationLines(env: RawEnv, all: boolean): string[] {
  const rows = effectiveConfiguration(env, !all);
  const width = Math.max(0, ...rows.map((r) => r.name.length));
  const head = all
    ? 'configuration (this shell; a worker reads its own environment):'
    : `configuration: ${rows.length} variable(s) set in this shell (a worker reads its own; \`faheem doctor --config\` lists every one with its default)`;
  const lines = rows.map((r) => {
    const shown =
      r.source === 'set'
        ? `${r.shown}${r.problem ? ` (not valid: ${r.problem})` : ''}`
        : r.source === 'default'
          ? `${r.shown} (default)`
          : '(unset)';
    return `  ${r.name.padEnd(width)}  ${shown}`;
  });
  return [head, ...lines];
}
