// What the editor sends, as the conversation takes it: a prompt's content blocks as one user
// message, the client's MCP servers as ours, and how a turn ended as an ACP stop reason. Pure.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { ContentBlock, McpServer, StopReason } from '@agentclientprotocol/sdk';
import { InvalidRequestError } from '../core/errors.js';
import { expandEnv } from '../mcp/config.js';
import type { ConfirmationPolicy, ConversationState, McpServersSpec } from '../core/types.js';

/** The session modes an ACP session offers: the confirmation policies. */
export const SESSION_MODES: { id: ConfirmationPolicy; name: string; description: string }[] = [
  { id: 'never', name: 'Never ask', description: 'Every action runs without asking.' },
  { id: 'risky', name: 'Ask when risky', description: 'Actions the model rates risky (or cannot rate) wait for your approval.' },
  { id: 'always', name: 'Always ask', description: 'Every command and file edit waits for your approval.' },
];

/** `mode` when it is a confirmation policy; otherwise an InvalidRequestError naming the modes. */
export function checkMode(mode: unknown): ConfirmationPolicy {
  if (mode === 'never' || mode === 'risky' || mode === 'always') return mode;
  throw new InvalidRequestError(`unknown mode ${JSON.stringify(mode)}: the modes are never, risky and always`);
}

const Block = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('resource_link'), uri: z.string().min(1), name: z.string(), title: z.string().nullish() }),
  z.object({
    type: z.literal('resource'),
    resource: z.union([
      z.object({ uri: z.string(), text: z.string(), mimeType: z.string().nullish() }),
      z.object({ uri: z.string(), blob: z.string(), mimeType: z.string().nullish() }),
    ]),
  }),
  z.object({ type: z.literal('image') }).loose(),
  z.object({ type: z.literal('audio') }).loose(),
]);

/** A file:// URI as a path (relative to the workspace when inside it); any other URI as it is. */
export function mentionOf(uri: string, workspace: string): string {
  if (!uri.startsWith('file:')) return uri;
  let file: string;
  try {
    file = fileURLToPath(uri);
  } catch {
    return uri;
  }
  const rel = path.relative(workspace, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/**
 * A prompt's content blocks as one user message: text as it is, a `resource_link` as a mention of
 * the file (`@path`), an embedded text resource as the file's text in a fenced block. Images, audio
 * and binary resources are declined (InvalidRequestError), as is a prompt with nothing to say.
 */
export function promptText(blocks: readonly ContentBlock[] | unknown, workspace: string): string {
  const parsed = z.array(Block).safeParse(blocks);
  if (!parsed.success)
    throw new InvalidRequestError(`the prompt must be a list of content blocks: ${parsed.error.issues[0]?.message ?? ''}`);
  let out = '';
  const attachments: string[] = [];
  const gap = () => (out === '' || /\s$/.test(out) ? '' : ' ');
  for (const block of parsed.data) {
    switch (block.type) {
      case 'text':
        out += block.text;
        break;
      case 'resource_link':
        out += `${gap()}@${mentionOf(block.uri, workspace)}`;
        break;
      case 'resource': {
        const name = mentionOf(block.resource.uri, workspace);
        if (!('text' in block.resource))
          throw new InvalidRequestError(`${name}: binary resources are not supported; send text, or a link to the file`);
        const fence = block.resource.text.includes('```') ? '````' : '```';
        out += `${gap()}@${name}`;
        attachments.push(`${name}:\n${fence}\n${block.resource.text}\n${fence}`);
        break;
      }
      case 'image':
      case 'audio':
        throw new InvalidRequestError(`${block.type} content is not supported by this agent; send text, or a link to the file`);
    }
  }
  const message = attachments.length ? `${out}\n\n${attachments.join('\n\n')}` : out;
  if (message.trim() === '') throw new InvalidRequestError('the prompt is empty');
  return message;
}

/** The name a secret value gets in the worker's environment (FAHEEM_SECRET_* may be named by MCP configs). */
export function secretName(value: string): string {
  return `FAHEEM_SECRET_ACP_${createHash('sha256').update(value).digest('hex').slice(0, 16).toUpperCase()}`;
}

/** A value that is one reference and nothing else: `${VAR}`. */
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/**
 * How `faheem acp` keeps an MCP env or header value out of the conversation's history (see
 * {@link mcpServersOf}). With the worker in this process (`embedded`), the value, with its
 * `${VAR}`s filled in from this process's environment as the worker would, goes into that
 * environment as a FAHEEM_SECRET_ACP_* variable (so the worker masks it in outputs) and the config
 * names it; with encrypted payloads it is written as it is; otherwise it is refused.
 */
export function secretKeeper(options: {
  embedded: boolean;
  encrypted: boolean;
  env: Record<string, string | undefined>;
}): (value: string) => string {
  return (value) => {
    if (options.embedded) {
      const resolved = expandEnv(value, options.env);
      const name = secretName(resolved);
      options.env[name] = resolved;
      return `\${${name}}`;
    }
    if (options.encrypted) return value;
    throw new InvalidRequestError(
      "an MCP server of this session has an env or header value with literal text, which would be written into the conversation's history: " +
        'write the whole value as one ${VAR} (set VAR on the worker), or set FAHEEM_ENCRYPTION_KEY so the history is encrypted',
    );
  };
}

/**
 * The client's MCP servers (stdio and http) as ours. A value of an environment variable or header
 * is part of the conversation's history, so none is written there literally: `keep(value)` answers
 * what to write instead (a `${VAR}` the worker fills in), or throws when it cannot be kept out.
 * Only a value that is one `${VAR}` and nothing else goes as it is; one that mixes references with
 * text (`Bearer s3cret-${X}`) has literal text too, and goes through `keep` as a whole.
 */
export function mcpServersOf(servers: readonly McpServer[], keep: (value: string) => string): McpServersSpec | undefined {
  const out: McpServersSpec = {};
  const safe = (v: string) => (WHOLE_REFERENCE.test(v) ? v : keep(v));
  for (const server of servers) {
    const name = server.name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 32) || 'server';
    if (out[name]) throw new InvalidRequestError(`two MCP servers are named ${JSON.stringify(name)}`);
    if ('type' in server && server.type === 'sse')
      throw new InvalidRequestError(`MCP server ${JSON.stringify(server.name)}: SSE is not supported; use http (streamable HTTP) or stdio`);
    if ('url' in server) {
      out[name] = {
        url: server.url,
        ...(server.headers.length ? { headers: Object.fromEntries(server.headers.map((h) => [h.name, safe(h.value)])) } : {}),
      };
    } else {
      out[name] = {
        command: server.command,
        ...(server.args.length ? { args: server.args } : {}),
        ...(server.env.length ? { env: Object.fromEntries(server.env.map((e) => [e.name, safe(e.value)])) } : {}),
      };
    }
  }
  return Object.keys(out).length ? out : undefined;
}

/** Why a prompt turn ended, from the conversation's state when its run stopped. */
export function stopReasonOf(
  state: Pick<ConversationState, 'status' | 'lastError'>,
  turn: { cancelled: boolean; refused: boolean; truncated: boolean },
): StopReason {
  if (turn.refused) return 'refusal';
  if (turn.cancelled || state.status === 'paused') return 'cancelled';
  // A cut reply makes the model go on; a run that ends on one (at the iteration limit) ended because of the cap.
  if (turn.truncated) return 'max_tokens';
  if (state.status === 'error' && /maximum of \d+ iterations/.test(state.lastError ?? '')) return 'max_turn_requests';
  return 'end_turn';
}
