// The environment table (src/environment.ts): every variable src/ reads is in it, every entry is
// read, docs/configuration.md is generated from it, values are checked by it once at the edge, only
// the entry points read process.env, and the effective configuration masks secrets.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BEGIN, END, withTables } from '../../scripts/configuration-doc.js';
import { ENVIRONMENT_READERS } from '../../scripts/environment-readers.mjs';
import { configurationLines } from '../../src/cli/config-lines.js';
import {
  ENVIRONMENT,
  HIDDEN,
  configurationTables,
  effectiveConfiguration,
  environmentVariable,
  readSettings,
  setting,
} from '../../src/environment.js';
import { InvalidRequestError } from '../../src/core/errors.js';

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

test("readSettings keeps the table's variables, less empty ones, and reads each as its parse does", () => {
  const settings = readSettings({ FAHEEM_METRICS_PORT: '9464', FAHEEM_LIVE: '', PATH: '/bin', FAHEEM_SECRET_GH: 'ghp_abcdef' });
  assert.deepEqual(settings, { FAHEEM_METRICS_PORT: '9464', FAHEEM_SECRET_GH: 'ghp_abcdef' });
  assert.equal(setting(settings, 'FAHEEM_METRICS_PORT'), 9464, 'read as its parse reads it: a number');
  assert.equal(setting(settings, 'FAHEEM_LIVE'), undefined, 'an empty value is unset');
  assert.equal(setting(readSettings({ FAHEEM_LOG_LEVEL: ' debug ' }), 'FAHEEM_LOG_LEVEL'), 'DEBUG');
});

test('a bad value is an error naming the variable and its value', () => {
  for (const [name, value, said] of [
    ['FAHEEM_WORKFLOW_THREADS', 'two', 'must be a whole number'],
    ['FAHEEM_METRICS_PORT', '70000', 'must be a port number'],
    ['FAHEEM_LIVE', 'yes', 'must be 0 (off) or 1 (on)'],
    ['FAHEEM_LOG_LEVEL', 'loud', 'must be one of TRACE, DEBUG, INFO, WARN, ERROR'],
    ['FAHEEM_METRICS_HOST', 'example.com', 'must be an IP address'],
    ['FAHEEM_BUILD_ID', 'v1.2', 'no dots'],
  ] as const)
    assert.throws(
      () => readSettings({ [name]: value }),
      (err: Error) => err instanceof InvalidRequestError && err.message.startsWith(`${name}="${value}" `) && err.message.includes(said),
      name,
    );
});

test("a process checks only what it reads: a worker's bad setting does not stop a client", () => {
  const env = { FAHEEM_WORKFLOW_THREADS: 'two' };
  assert.deepEqual(readSettings(env, 'client'), env);
  assert.throws(() => readSettings(env, 'worker'), /FAHEEM_WORKFLOW_THREADS="two"/);
});

test('the effective configuration says why a value is not valid, and never shows a secret', () => {
  const rows = effectiveConfiguration({ FAHEEM_METRICS_PORT: 'http', LLM_API_KEY: 'sk-live-123' }, true);
  assert.deepEqual(
    rows.find((r) => r.name === 'FAHEEM_METRICS_PORT'),
    { name: 'FAHEEM_METRICS_PORT', shown: 'http', source: 'set', problem: 'must be a port number' },
  );
  const lines = configurationLines({ FAHEEM_METRICS_PORT: 'http', LLM_API_KEY: 'sk-live-123' }, true).join('\n');
  assert.match(lines, /FAHEEM_METRICS_PORT +http \(not valid: must be a port number\)/);
  assert.match(lines, /LLM_API_KEY +\(set, hidden\)/);
  assert.match(lines, /TEMPORAL_NAMESPACE +default \(default\)/);
  assert.ok(!lines.includes('sk-live-123'));
});

test('only the files eslint lets read process.env read it, and each of them does', () => {
  const readers = sources()
    .filter((s) => s.file.startsWith('src') && /\bprocess\.env\b/.test(s.text.replace(/^\s*(\/\/|\*).*$/gm, '')))
    .map((s) => s.file.split(path.sep).join('/'))
    .sort();
  assert.deepEqual(readers, [...ENVIRONMENT_READERS].sort());
});
