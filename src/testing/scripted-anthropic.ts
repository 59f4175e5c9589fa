// A scripted Anthropic Messages API server for tests, benches and offline demos: the same scripts
// as the scripted OpenAI server (it shows them each request in chat-completions form), answered as
// the Messages API streams: text, tool_use whose input arrives in fragments split mid-string,
// thinking with a signature it checks when sent back, and usage with cache reads and writes worked
// out from the request's cache_control breakpoints (a prefix is read from the cache only if an
// earlier request wrote exactly those bytes), so the cache-read share measures a client's prefix
// stability. It refuses what the real API refuses that matters here: more than four breakpoints,
// roles out of order, a tool-use continuation with thinking on but its thinking block dropped.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGates } from './gates.js';
import {
  gateRequest,
  scriptedReply,
  splitText,
  splitWords,
  writeEvent,
  type RecordedRequest,
  type Script,
  type ScriptedModel,
} from './scripted-model.js';

/** Options of the scripted Anthropic server. */
export interface ScriptedAnthropicOptions {
  /** The port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Prefixes shorter than this many tokens are not cached (default the API's minimum for the model: {@link minCacheTokens}). */
  minCacheTokens?: number;
  /** How many blocks before a breakpoint the cache looks back for an earlier prefix (the API's is 20). */
  lookbackBlocks?: number;
}

/** The scripted Anthropic server: a {@link ScriptedModel} whose base URL is the Messages API's. */
export interface ScriptedAnthropic extends ScriptedModel {
  /** Forgets every cached prefix (as if the cache's five minutes had passed). */
  clearCache(): void;
}

type Block = Record<string, unknown> & { type: string };
interface Message {
  role: string;
  content: string | Block[];
}
interface MessagesBody {
  model: string;
  max_tokens?: number;
  system?: string | Block[];
  messages?: Message[];
  tools?: Record<string, unknown>[];
  thinking?: { type: string; budget_tokens?: number };
  tool_choice?: { type: string; name?: string };
  stream?: boolean;
  [key: string]: unknown;
}

/** The signature this server gives a thinking text (checked when the block comes back). */
export function scriptedSignature(thinking: string): string {
  return createHash('sha256').update(`scripted-thinking:${thinking}`).digest('base64');
}

/** Roughly what a tokenizer counts: four characters a token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const blocksOf = (content: string | Block[] | undefined): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : (content ?? []);

/** A block as the cache sees it: its bytes without the cache_control marker. */
function canonical(kind: string, block: Record<string, unknown>): string {
  const rest = { ...block };
  delete rest.cache_control;
  return `${kind}:${JSON.stringify(rest)}`;
}

/** The request's prefix as the cache sees it: tools, then system, then messages, block by block. */
export function prefixBlocks(body: MessagesBody): { key: string; tokens: number; breakpoint: boolean }[] {
  const out: { key: string; tokens: number; breakpoint: boolean }[] = [];
  const add = (kind: string, block: Record<string, unknown>) => {
    const key = canonical(kind, block);
    out.push({ key, tokens: estimateTokens(key), breakpoint: block.cache_control !== undefined && block.cache_control !== null });
  };
  for (const t of body.tools ?? []) add('tool', t);
  for (const b of blocksOf(body.system)) add('system', b);
  for (const m of body.messages ?? []) for (const b of blocksOf(m.content)) add(m.role, b);
  return out;
}

/**
 * The usage of a request given the prefixes cached so far: the longest cached prefix found at or
 * up to `lookback` blocks before a breakpoint is read; the rest up to the last breakpoint is
 * written. `seen` is updated with the prefixes this request writes.
 */
export function cacheUsage(
  blocks: readonly { key: string; tokens: number; breakpoint: boolean }[],
  seen: Set<string>,
  options: { minCacheTokens?: number; lookbackBlocks?: number } = {},
): { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number } {
  const min = options.minCacheTokens ?? 1024;
  const lookback = options.lookbackBlocks ?? 20;
  const hashes: string[] = [];
  const totals: number[] = [];
  let h = createHash('sha256').update('prefix').digest('hex');
  let total = 0;
  for (const b of blocks) {
    h = createHash('sha256').update(h).update(b.key).digest('hex');
    total += b.tokens;
    hashes.push(h);
    totals.push(total);
  }
  const points = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
  let read = 0;
  for (const p of points) {
    for (let j = p; j >= Math.max(0, p - lookback + 1); j--) {
      if (seen.has(hashes[j] ?? '')) {
        read = Math.max(read, totals[j] ?? 0);
        break;
      }
    }
  }
  const last = points[points.length - 1];
  let write = 0;
  if (last !== undefined && (totals[last] ?? 0) >= min) {
    write = Math.max(0, (totals[last] ?? 0) - read);
    for (const p of points) if ((totals[p] ?? 0) >= min) seen.add(hashes[p] ?? '');
  }
  return { input_tokens: total - read - write, cache_read_input_tokens: read, cache_creation_input_tokens: write };
}

/** The API's shortest cacheable prefix by model: 4,096 tokens for Haiku 4.5 and Opus 4.5, 2,048 for Haiku 3.x, else 1,024. */
export function minCacheTokens(model: string): number {
  if (/haiku-4-5|opus-4-5/.test(model)) return 4096;
  if (/haiku-3|3-haiku|3-5-haiku/.test(model)) return 2048;
  return 1024;
}

/** The request in the scripted OpenAI server's chat-completions form, so one script serves both. */
export function chatView(body: MessagesBody): RecordedRequest['body'] {
  const messages: RecordedRequest['body']['messages'] = [];
  const system = blocksOf(body.system)
    .map((b) => String(b.text ?? ''))
    .join('\n');
  if (system) messages.push({ role: 'system', content: system });
  for (const m of body.messages ?? []) {
    const blocks = blocksOf(m.content);
    if (m.role === 'assistant') {
      const text = blocks
        .filter((b) => b.type === 'text')
        .map((b) => String(b.text))
        .join('');
      const calls = blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
      messages.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) });
      continue;
    }
    for (const b of blocks.filter((x) => x.type === 'tool_result')) {
      const content =
        typeof b.content === 'string'
          ? b.content
          : blocksOf(b.content as Block[])
              .map((x) => String(x.text ?? ''))
              .join('');
      messages.push({ role: 'tool', tool_call_id: String(b.tool_use_id), content });
    }
    const text = blocks
      .filter((b) => b.type === 'text')
      .map((b) => String(b.text))
      .join('\n');
    if (text) messages.push({ role: 'user', content: text });
  }
  return {
    model: body.model,
    messages,
    ...(body.tools ? { tools: body.tools } : {}),
    ...(body.stream ? { stream: true } : {}),
    ...(body.max_tokens ? { max_tokens: body.max_tokens } : {}),
  };
}

/** What the real API would refuse in this request, or undefined. */
export function refusal(body: MessagesBody): string | undefined {
  if (!body.max_tokens) return 'max_tokens: Field required';
  const messages = body.messages ?? [];
  if (messages.length === 0) return 'messages: at least one message is required';
  if (messages[0]?.role !== 'user') return 'messages: first message must use the "user" role';
  for (let i = 1; i < messages.length; i++) {
    if (messages[i]?.role === messages[i - 1]?.role)
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${messages[i]?.role}" roles in a row`;
  }
  const marked = prefixBlocks(body).filter((b) => b.breakpoint).length;
  if (marked > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marked}.`;
  if (body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive') {
    const forced = body.tool_choice?.type;
    if (forced === 'tool' || forced === 'any') return 'Thinking may not be enabled when tool_choice forces tool use.';
    const budget = body.thinking.budget_tokens ?? 0;
    if (body.thinking.type === 'enabled' && budget < 1024)
      return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (body.thinking.type === 'enabled' && budget >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
    // The turn being continued: the last assistant turn, when tool results follow it.
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (m?.role !== 'assistant') continue;
      const blocks = blocksOf(m.content);
      if (!blocks.some((b) => b.type === 'tool_use')) break;
      const first = blocks[0]?.type;
      if (first !== 'thinking' && first !== 'redacted_thinking') {
        return (
          `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message ` +
          'must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. ' +
          'To avoid this requirement, disable `thinking`.'
        );
      }
      break;
    }
  }
  for (const [i, m] of messages.entries()) {
    for (const b of blocksOf(m.content)) {
      if (b.type === 'thinking' && b.signature !== scriptedSignature(String(b.thinking)))
        return `messages.${i}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return undefined;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/**
 * Starts a scripted Anthropic Messages API server on 127.0.0.1. Give its `baseUrl` to a worker as
 * `ANTHROPIC_BASE_URL` (or `LLM_BASE_URL`) with an `anthropic/…` model. Scripts are the scripted
 * OpenAI server's ({@link Script}); each request is shown to them in chat-completions form, and
 * `raw` holds the Messages body as sent.
 */
export async function startScriptedAnthropic(script: Script, options: ScriptedAnthropicOptions = {}): Promise<ScriptedAnthropic> {
  let current = script;
  const requests: RecordedRequest[] = [];
  const seen = new Set<string>();
  let ids = 0;
  const gates = createGates<RecordedRequest>();

  const server = createServer((req, res) => {
    if (gateRequest(gates, req, res)) return;
    void handle(req, res);
  });

  const fail = (
    res: ServerResponse,
    recorded: RecordedRequest | undefined,
    status: number,
    message: string,
    headers: Record<string, string> = {},
  ) => {
    if (recorded) recorded.status = status;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } }));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.split('?')[0]?.endsWith('/messages')) {
      fail(res, undefined, 404, 'not found');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: MessagesBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesBody;
    } catch {
      fail(res, undefined, 400, 'the body is not JSON');
      return;
    }
    const recorded: RecordedRequest = {
      index: requests.length,
      body: chatView(body),
      api: 'anthropic',
      raw: body,
      authorization: typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : req.headers.authorization,
      startedAt: Date.now(),
      aborted: false,
    };
    requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished) recorded.aborted = true;
      recorded.endedAt ??= Date.now();
    });
    const refused = refusal(body);
    if (refused) {
      recorded.endedAt = Date.now();
      fail(res, recorded, 400, refused);
      return;
    }

    const reply = await scriptedReply(current, recorded, res);
    if (!reply) return;
    if (reply.status && reply.status >= 400) {
      fail(
        res,
        recorded,
        reply.status,
        reply.error ?? (reply.status === 529 ? 'Overloaded' : `scripted HTTP ${reply.status}`),
        reply.headers,
      );
      return;
    }
    const n = ++ids;
    const thinkingOn = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
    const thinking =
      thinkingOn && reply.thinking !== false
        ? (reply.thinking ?? `Step ${n}: looking at what the last result says before choosing the next action.`)
        : undefined;
    const calls = (reply.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `toolu_scripted_${n}_${i}`,
      name: c.name,
      json: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    const cache = cacheUsage(prefixBlocks(body), seen, {
      minCacheTokens: options.minCacheTokens ?? minCacheTokens(body.model),
      ...(options.lookbackBlocks ? { lookbackBlocks: options.lookbackBlocks } : {}),
    });
    const outputText = `${thinking ?? ''}${reply.content ?? ''}${calls.map((c) => c.name + c.json).join('')}`;
    const output = reply.usage?.completion_tokens ?? Math.max(1, estimateTokens(outputText));
    recorded.usage = { ...cache, output_tokens: output };
    recorded.status = 200;
    const stopReason = reply.truncated ? 'max_tokens' : calls.length ? 'tool_use' : 'end_turn';
    const message = {
      id: `msg_scripted_${n}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
    };

    if (!body.stream) {
      if (reply.gate && !(await gates.pass(reply.gate, recorded, res))) return;
      const content: Record<string, unknown>[] = [];
      if (thinking !== undefined) content.push({ type: 'thinking', thinking, signature: scriptedSignature(thinking) });
      if (thinkingOn && reply.redactedThinking) content.push({ type: 'redacted_thinking', data: reply.redactedThinking });
      if (reply.content) content.push({ type: 'text', text: reply.content });
      for (const c of calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.json || '{}') as unknown });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...message, content, stop_reason: stopReason, usage: { ...cache, output_tokens: output } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (type: string, data: Record<string, unknown>) =>
      writeEvent(res, JSON.stringify({ type, ...data }), type, reply.chunkDelayMs ?? 0);
    await send('message_start', { message: { ...message, usage: { ...cache, output_tokens: 1 } } });
    await send('ping', {});
    // Held at the gate before the text (or after `gateAfter` pieces of it).
    const gate = reply.gate;
    const pieces = reply.content ? (reply.wordByWord ? splitWords(reply.content) : splitText(reply.content)) : [];
    const holdAt = Math.min(reply.gateAfter ?? 0, pieces.length);
    const hold = async (at: number) => !gate || at !== holdAt || (await gates.pass(gate, recorded, res));
    if (pieces.length === 0 && !(await hold(0))) return;
    let index = 0;
    if (thinking !== undefined) {
      await send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const piece of splitText(thinking))
        await send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
      await send('content_block_delta', { index, delta: { type: 'signature_delta', signature: scriptedSignature(thinking) } });
      await send('content_block_stop', { index });
      index++;
    }
    if (thinkingOn && reply.redactedThinking) {
      await send('content_block_start', { index, content_block: { type: 'redacted_thinking', data: reply.redactedThinking } });
      await send('content_block_stop', { index });
      index++;
    }
    if (reply.content) {
      await send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const [i, piece] of pieces.entries()) {
        if (!(await hold(i))) return;
        await send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      }
      if (!(await hold(pieces.length))) return;
      await send('content_block_stop', { index });
      index++;
    }
    for (const c of calls) {
      await send('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      // Fragments cut anywhere, mid-string included, as the API sends them.
      for (const piece of splitText(c.json, 4))
        await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
      await send('content_block_stop', { index });
      index++;
    }
    await send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: output } });
    await send('message_stop', {});
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${actual}`,
    requests,
    setScript: (s) => {
      current = s;
    },
    clearCache: () => seen.clear(),
    release: (name) => gates.release(name),
    hold: (name) => gates.hold(name),
    held: (name) => gates.held(name),
    reached: (name, timeoutMs) => gates.reached(name, timeoutMs),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
