// Structured answers: a conversation given an output schema (a JSON Schema) ends with a JSON value
// that matches it. The schema is checked when the conversation starts; each final answer is parsed
// and validated on the worker (ajv, never by hand), and what fails goes back to the model with the
// validation errors. Which provider mode carries the schema is the model client's (client.ts).
// Pure: no I/O.
import type { Ajv, AnySchema, ErrorObject, ValidateFunction } from 'ajv';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { OUTPUT_TOOL } from '../conversation/workflow/output-check.js';

export { MAX_OUTPUT_TRIES, OUTPUT_TOOL } from '../conversation/workflow/output-check.js';

/** The largest output schema a conversation takes (it travels in the workflow's history once). */
export const MAX_OUTPUT_SCHEMA_BYTES = 64 * 1024;

/** A JSON Schema, as plain data. */
export type OutputSchema = Record<string, unknown>;

/** What came of checking an answer against the schema. */
export type OutputCheck = { ok: true; value: unknown } | { ok: false; errors: string[] };

// Loaded at the first check (~0.5 s cold): the CLI and the SDK load this module on every start.
const load = createRequire(import.meta.url);

/** Drafts before 2019-09 are Ajv's default class; 2019-09 and 2020-12 (zod's) are Ajv2020's. */
function ajvFor(schema: OutputSchema): Ajv {
  const draft = typeof schema.$schema === 'string' ? schema.$schema : '';
  const options = { allErrors: true, strict: false };
  if (/draft-0[4-7]/.test(draft)) return new (load('ajv') as typeof import('ajv')).Ajv(options);
  return new (load('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020(options);
}

// Compiled validators by schema text: a worker checks many answers against few schemas.
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 64;

function validatorFor(schema: OutputSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajvFor(schema).compile(schema as AnySchema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, validate);
  }
  return validate;
}

/**
 * `schema` when a conversation can take it as its output schema: a JSON object under
 * {@link MAX_OUTPUT_SCHEMA_BYTES} that compiles as a JSON Schema. Otherwise an Error saying why.
 */
export function checkOutputSchema(schema: unknown): OutputSchema {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) throw new Error('the output schema is not a JSON object');
  const text = JSON.stringify(schema);
  if (Buffer.byteLength(text) > MAX_OUTPUT_SCHEMA_BYTES)
    throw new Error(`the output schema is over ${MAX_OUTPUT_SCHEMA_BYTES / 1024} KiB (${Buffer.byteLength(text)} bytes)`);
  try {
    validatorFor(schema as OutputSchema);
  } catch (err) {
    throw new Error(`the output schema is not a valid JSON Schema: ${(err as Error).message}`);
  }
  return schema as OutputSchema;
}

/**
 * A conversation's output schema from what the SDK was given: a JSON Schema, or a zod schema
 * (turned into JSON Schema with zod's own `toJSONSchema`); then {@link checkOutputSchema}.
 */
export function toOutputSchema(schema: unknown): OutputSchema {
  const zod = schema as { safeParse?: unknown } | null;
  if (zod && typeof zod.safeParse === 'function') return checkOutputSchema(z.toJSONSchema(schema as z.ZodType) as OutputSchema);
  return checkOutputSchema(schema);
}

/** An answer's text checked against the schema: the parsed value, or what is wrong with it (at most 10 lines). */
export function checkOutput(schema: OutputSchema, text: string | null): OutputCheck {
  const body = unfenced(text ?? '');
  if (body === '') return { ok: false, errors: ['the answer is empty: give the final answer as a JSON value'] };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    return { ok: false, errors: [`the answer is not JSON (${(err as Error).message})`] };
  }
  const validate = validatorFor(schema);
  if (validate(value)) return { ok: true, value };
  return { ok: false, errors: (validate.errors ?? []).slice(0, 10).map(errorLine) };
}

/** A model that wraps its JSON in a Markdown fence is taken at its word: the fence's content is the answer. */
function unfenced(text: string): string {
  const trimmed = text.trim();
  const fence = /^```(?:json)?\s*\n([\s\S]*?)\n```$/i.exec(trimmed);
  return fence ? fence[1]!.trim() : trimmed;
}

function errorLine(e: ErrorObject): string {
  const where = e.instancePath === '' ? 'the answer' : `the answer's ${e.instancePath}`;
  const extra =
    e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})`
      : e.keyword === 'enum'
        ? ` (${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)})`
        : '';
  return `${where} ${e.message ?? 'does not match the schema'}${extra}`;
}

/**
 * Whether OpenAI's strict mode can take the schema as it is: every object closed
 * (`additionalProperties: false`) with all its properties required. Strict mode refuses others
 * (HTTP 400), so they go non-strict and the worker's check holds the line.
 */
export function strictCompatible(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(strictCompatible);
  if (!schema || typeof schema !== 'object') return true;
  const s = schema as Record<string, unknown>;
  if (s.type === 'object' || s.properties !== undefined) {
    if (s.additionalProperties !== false) return false;
    const props = Object.keys((s.properties as Record<string, unknown> | undefined) ?? {});
    const required = Array.isArray(s.required) ? (s.required as unknown[]) : [];
    if (!props.every((p) => required.includes(p))) return false;
  }
  return Object.entries(s).every(([k, v]) => k === 'enum' || k === 'const' || k === 'default' || strictCompatible(v));
}

/** The schema as the wire APIs take it (its `$schema` line is the validator's business, not theirs). */
export function wireSchema(schema: OutputSchema): Record<string, unknown> {
  const { $schema: _, ...rest } = schema;
  return rest;
}

/** What the system prompt adds for a conversation with an output schema (every provider reads it, strict or not). */
export function outputInstructions(schema: OutputSchema): string {
  return [
    '# Final answer',
    `When the task is done, answer without tool calls (or, when you have the ${OUTPUT_TOOL} tool, call it), and make that answer only a JSON value (no prose, no Markdown fence) matching this JSON Schema:`,
    JSON.stringify(wireSchema(schema)),
  ].join('\n');
}
