// MCP server configuration in the format editors use: {"mcpServers": {"name": {command, args, env} | {url, headers}}}.
// Parsing is strict about what we use and tolerant of the extra keys editors write ("type", "disabled", …).
import { InvalidRequestError } from '../core/errors.js';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { McpServerSpec, McpServersSpec } from '../core/types.js';
import type { ChildEnv } from '../environment.js';

const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;
const MAX_TOOL_NAME = 64;

// z.object strips unknown keys, so editor extras are accepted and dropped (they never reach the connection key).
export const McpStdioServer = z.object({
  command: z.string({ error: '"command" must be a string' }).min(1, '"command" must not be empty'),
  args: z.array(z.string({ error: 'must be a string' }), { error: '"args" must be an array of strings' }).optional(),
  env: z.record(z.string(), z.string({ error: 'must be a string' }), { error: '"env" must be an object of string values' }).optional(),
  cwd: z.string({ error: '"cwd" must be a string' }).optional(),
});

export const McpHttpServer = z.object({
  // Not z.httpUrl: its hostname rule rejects http://localhost:3000/mcp.
  url: z.url({ protocol: /^https?$/, error: '"url" must be an http:// or https:// URL' }),
  headers: z
    .record(z.string(), z.string({ error: 'must be a string' }), { error: '"headers" must be an object of string values' })
    .optional(),
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// The union alone would report "Invalid input" for a config with neither or both kinds; say what is wrong instead.
export const McpServerConfig = z.preprocess(
  (value, ctx) => {
    if (!isRecord(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be an object with "command" (a local server) or "url" (a remote one)', input: value });
      return z.NEVER;
    }
    const hasCommand = value.command !== undefined;
    const hasUrl = value.url !== undefined;
    if (hasCommand && hasUrl) {
      ctx.addIssue({
        code: 'custom',
        message: 'has both "command" and "url": give "command" for a local server or "url" for a remote one, not both',
        input: value,
      });
      return z.NEVER;
    }
    if (!hasCommand && !hasUrl) {
      ctx.addIssue({
        code: 'custom',
        message: 'needs "command" (a local server the worker starts) or "url" (a remote server)',
        input: value,
      });
      return z.NEVER;
    }
    return value;
  },
  z.union([McpStdioServer, McpHttpServer]),
);

export const McpServersConfig = z.record(
  z.string().regex(SERVER_NAME, 'server names may only use letters, digits, "_" and "-", 1 to 32 characters'),
  McpServerConfig,
  { error: 'must be an object mapping server names to server configs' },
);

/** Parsed MCP servers by name: the one type (see McpServersSpec in types.ts), which the schema produces. */
export type McpServers = McpServersSpec;
/** One parsed MCP server. */
export type McpServer = McpServerSpec;
// The schema and the type must agree both ways; this fails to compile when one changes alone.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesType: Same<z.infer<typeof McpServersConfig>, McpServersSpec> = true;
void schemaMatchesType;

function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z0-9_-]+$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

function valueAt(root: unknown, segments: readonly PropertyKey[]): unknown {
  let v = root;
  for (const seg of segments) {
    if (!isRecord(v) && !Array.isArray(v)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

// One line per problem. For a failed command/url union, the preprocess step guarantees exactly one of
// the two keys is present, so report the branch the user meant rather than both.
function describeIssues(issues: readonly z.core.$ZodIssue[], root: unknown, prefix: readonly PropertyKey[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const at = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length === 2) {
      const input = valueAt(root, at);
      const branch = isRecord(input) && input.url !== undefined ? issue.errors[1] : issue.errors[0];
      lines.push(...describeIssues(branch ?? [], root, at));
    } else if (issue.code === 'invalid_key') {
      const key = issue.path[issue.path.length - 1];
      const why = issue.issues.map((i) => i.message).join('; ');
      const where = formatPath([...prefix, ...issue.path.slice(0, -1)]);
      lines.push(`${where ? `${where}: ` : ''}server name ${JSON.stringify(String(key))}: ${why}`);
    } else {
      const where = formatPath(at);
      lines.push(where ? `${where}: ${issue.message}` : issue.message);
    }
  }
  return lines;
}

function parseServers(value: unknown, source: string, prefix: readonly PropertyKey[], root: unknown): McpServers {
  // Editors mark servers they keep but do not run with "disabled": true; so do we.
  if (isRecord(value)) value = Object.fromEntries(Object.entries(value).filter(([, v]) => !(isRecord(v) && v.disabled === true)));
  const result = McpServersConfig.safeParse(value);
  if (result.success) return result.data;
  const lines = describeIssues(result.error.issues, root, prefix);
  throw new InvalidRequestError(`Invalid MCP server config in ${source}:\n${lines.map((l) => `  - ${l}`).join('\n')}`);
}

/**
 * Checks MCP servers given as an object (`{ name: { command, args, env } | { url, headers } }`) and
 * returns them without the keys editors add; throws an InvalidRequestError listing each problem.
 */
export function parseMcpServers(value: unknown, source = 'the MCP server config'): McpServers {
  return parseServers(value, source, [], value);
}

/** The servers of an editor-style config file's text (`{"mcpServers": {…}}`); `source` names the file in errors. */
export function parseMcpConfigFile(text: string, source: string): McpServers {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InvalidRequestError(`${source} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isRecord(json) || !isRecord(json.mcpServers)) {
    throw new InvalidRequestError(`${source} must be a JSON object of the form {"mcpServers": {"<name>": {"command": …} | {"url": …}}}`);
  }
  return parseServers(json.mcpServers, source, ['mcpServers'], json);
}

/** Replaces ${VAR} and ${VAR:-default} (default used when VAR is unset or empty, as in the shell). */
export function expandEnv(value: string, env: ChildEnv): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (fallback !== undefined) return found ? found : fallback;
    if (found === undefined) throw new InvalidRequestError(`\${${name}} is not set in the worker's environment`);
    return found;
  });
}

/** The name the model sees: mcp__<server>__<tool>, limited to what model APIs accept ([A-Za-z0-9_-], 64 chars). */
export function mcpToolName(server: string, tool: string): string {
  const full = `mcp__${server}__${tool}`;
  const safe = full.replace(/[^A-Za-z0-9_-]/g, '_');
  if (safe.length <= MAX_TOOL_NAME) return safe;
  // Hash the unsanitised name so two long names that differ only past the cut (or in replaced chars) stay distinct.
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${safe.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}
