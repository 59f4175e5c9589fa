// The environment table (src/environment.ts): every variable src/ reads is in it, every entry is
// read, docs/configuration.md is generated from it, and the effective configuration masks secrets.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BEGIN, END, withTables } from '../../scripts/configuration-doc.js';
import { ENVIRONMENT, HIDDEN, configurationTables, effectiveConfiguration, environmentVariable } from '../../src/environment.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const PREFIXES = /^(FAHEEM|LLM|TEMPORAL|OTEL|ANTHROPIC|OPENAI|OPENROUTER|OLLAMA|NODE|AWS)_/;

/** The text of every source file that runs in a faheem process: src/, bin/ and the demo. */
function sources(): { file: string; text: string }[] {
  const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|tsx|mjs|js)$/.test(f))
    .map((f) => path.join('src', f));
  files.push(...readdirSync(path.join(ROOT, 'bin')).map((f) => path.join('bin', f)), path.join('examples', 'demo.ts'));
  return files.map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
}

/** The variable names a text reads: `env.X`, `env?.X`, `env['X']`, or a quoted name. */
function namesRead(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(
    /\benv\??\.([A-Z][A-Z0-9_]+)\b|\benv\[\s*['"`]([A-Z][A-Z0-9_]+)['"`]\s*\]|['"`]([A-Z][A-Z0-9_]*_[A-Z0-9_]*)['"`]/g,
  )) {
    const name = m[1] ?? m[2] ?? m[3];
    if (name && PREFIXES.test(name)) names.add(name);
  }
  return [...names];
}

test('namesRead finds reads in each form (the check itself)', () => {
  assert.deepEqual(
    namesRead(
      "env.FAHEEM_HOME; process.env?.LLM_MODEL; env['OTEL_SDK_DISABLED']; keyVar: 'OPENAI_API_KEY'; const X_Y = 1; // FAHEEM_NOT_READ",
    ),
    ['FAHEEM_HOME', 'LLM_MODEL', 'OTEL_SDK_DISABLED', 'OPENAI_API_KEY'],
  );
});

test('every variable src/ reads is in the table', () => {
  const missing: string[] = [];
  for (const { file, text } of sources())
    for (const name of namesRead(text)) if (!environmentVariable(name)) missing.push(`${name} (${file})`);
  assert.deepEqual(missing, [], 'add these to ENVIRONMENT in src/environment.ts, then `npm run docs:config`');
});

test('every entry is named somewhere in the code, once, in its group', () => {
  const all = sources()
    .map((s) => s.text)
    .join('\n');
  for (const v of ENVIRONMENT) {
    assert.ok(all.includes(v.name), `${v.name} is in the table, but nothing in src/ names it`);
    assert.ok(v.meaning.length > 5, v.name);
  }
  assert.equal(new Set(ENVIRONMENT.map((v) => v.name)).size, ENVIRONMENT.length, 'a name twice');
});

test('docs/configuration.md holds the generated tables (npm run docs:config)', () => {
  const page = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  assert.ok(page.includes(BEGIN) && page.includes(END));
  assert.equal(page, withTables(page, configurationTables()), 'docs/configuration.md is stale: run `npm run docs:config`');
  for (const v of ENVIRONMENT) assert.ok(page.includes(`\`${v.name}`), v.name);
});

test('the effective configuration: values, defaults, families, and never a secret', () => {
  const env = {
    TEMPORAL_ADDRESS: 'temporal:7233',
    LLM_API_KEY: 'sk-live-123',
    FAHEEM_SECRET_GITHUB: 'ghp_abc',
    FAHEEM_ENCRYPTION_KEY: 'a2V5',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer xyz',
    UNRELATED: 'x',
  };
  const rows = effectiveConfiguration(env);
  const row = (name: string) => rows.find((r) => r.name === name);
  assert.deepEqual(row('TEMPORAL_ADDRESS'), { name: 'TEMPORAL_ADDRESS', shown: 'temporal:7233', source: 'set' });
  assert.deepEqual(row('TEMPORAL_NAMESPACE'), { name: 'TEMPORAL_NAMESPACE', shown: 'default', source: 'default' });
  assert.equal(row('FAHEEM_METRICS_PORT')?.source, 'unset');
  for (const name of ['LLM_API_KEY', 'FAHEEM_SECRET_GITHUB', 'FAHEEM_ENCRYPTION_KEY', 'OTEL_EXPORTER_OTLP_HEADERS'])
    assert.equal(row(name)?.shown, HIDDEN, name);
  const text = JSON.stringify(rows);
  for (const secret of ['sk-live-123', 'ghp_abc', 'a2V5', 'xyz']) assert.ok(!text.includes(secret), secret);
  assert.equal(row('UNRELATED'), undefined);
  // Only what is set.
  assert.deepEqual(
    effectiveConfiguration(env, true).map((r) => r.name),
    ['TEMPORAL_ADDRESS', 'LLM_API_KEY', 'FAHEEM_SECRET_GITHUB', 'FAHEEM_ENCRYPTION_KEY', 'OTEL_EXPORTER_OTLP_HEADERS'],
  );
});
