// A scripted OpenAI Responses API server for tests, benches and offline demos: the same scripts as
// the scripted chat-completions server (each request is shown to them in chat-completions form),
// answered as `/v1/responses` streams: `response.created` … `response.completed` (or
// `.incomplete`) with `sequence_number`, reasoning items whose `encrypted_content` it checks when
// they come back, summaries streamed when asked for, function-call arguments in fragments, and
// usage with cached tokens worked out from repeated prefixes per `prompt_cache_key`. It refuses
// what the real API refuses that matters here: a function_call sent back without its reasoning
// item, a reasoning item with altered or missing encrypted content under `store: false`, encrypted
// reasoning asked of a model that does not reason; and, on `/v1/chat/completions`, function tools
// for a reasoning model (gpt-5.4 and later).
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatRefusesTools, isReasoningModel } from '../models/openai-responses.js';
import { createGates } from './gates.js';
import { estimateTokens } from './scripted-anthropic.js';
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

/** Options of the scripted Responses server. */
export interface ScriptedResponsesOptions {
  /** The port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Characters of each reasoning item's `encrypted_content` (default 2,048). */
  encryptedContentChars?: number;
  /** Prompts shorter than this many tokens are not cached (the API's minimum: 1,024). */
  minCacheTokens?: number;
  /**
   * A model of how requests reach cache machines: a request goes to the machine its route (the
   * prompt's first 256 tokens and its `prompt_cache_key`) hashes to, and spills to another once its
   * route has had more than `requestsPerMinute` requests in the last minute (OpenAI documents about
   * 15). Default: no spilling.
   */
  routing?: ScriptedRouting;
}

/** How requests reach cache machines (see {@link ScriptedResponsesOptions.routing}). */
export interface ScriptedRouting {
  machines: number;
  requestsPerMinute: number;
  /** The clock minutes are counted by (default `Date.now`; a bench runs minutes of steps in seconds). */
  now?: () => number;
  /** Route as if requests came without their `prompt_cache_key` (the client still sends it). */
  ignoreCacheKey?: boolean;
}

/** The scripted Responses server: a {@link ScriptedModel} whose base URL serves `/v1/responses`. */
export interface ScriptedResponses extends ScriptedModel {
  /** Forgets every cached prefix. */
  clearCache(): void;
  /** Forgets the reasoning items it gave out (as if they came from another organisation). */
  forgetReasoning(): void;
  /**
   * Checks the next request that carries reasoning items as if they had been left out (what a client
   * that drops them sends), so that its function calls get the API's 400.
   */
  dropNextReasoning(): void;
  /** Replaces the routing model (and forgets every cached prefix). */
  setRouting(routing: ScriptedRouting | undefined): void;
}

type Item = Record<string, unknown> & { type?: string; role?: string };
interface ResponsesBody {
  model: string;
  instructions?: string;
  input?: string | Item[];
  tools?: Record<string, unknown>[];
  store?: boolean;
  include?: string[];
  reasoning?: { effort?: string; summary?: string };
  max_output_tokens?: number;
  prompt_cache_key?: string;
  temperature?: number;
  stream?: boolean;
  [key: string]: unknown;
}

/** The encrypted content this server gives a reasoning item (checked when it comes back). */
export function scriptedEncryptedContent(id: string, summary: string, chars = 2_048): string {
  let out = '';
  let h = createHash('sha256').update(`scripted-reasoning:${id}:${summary}`).digest();
  while (out.length < chars) {
    out += h.toString('base64');
    h = createHash('sha256').update(h).digest();
  }
  return `gAAAAB${out}`.slice(0, Math.max(16, chars));
}

const inputItems = (body: ResponsesBody): Item[] =>
  typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((c) => String((c as { text?: unknown }).text ?? '')).join('')
      : '';

/** The request in the scripted chat-completions server's form, so one script serves both. */
export function responsesChatView(body: ResponsesBody): RecordedRequest['body'] {
  const messages: RecordedRequest['body']['messages'] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  let assistant: { role: string; content: string | null; tool_calls?: unknown[] } | undefined;
  for (const item of inputItems(body)) {
    const type = item.type ?? 'message';
    if (type === 'reasoning') continue;
    if (type === 'function_call') {
      if (!assistant) {
        assistant = { role: 'assistant', content: null, tool_calls: [] };
        messages.push(assistant);
      }
      (assistant.tool_calls ??= []).push({
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: item.arguments },
      });
      continue;
    }
    if (type === 'function_call_output') {
      assistant = undefined;
      messages.push({ role: 'tool', tool_call_id: String(item.call_id), content: textOf(item.output) });
      continue;
    }
    if (item.role === 'assistant') {
      assistant = { role: 'assistant', content: textOf(item.content) || null };
      messages.push(assistant);
      continue;
    }
    assistant = undefined;
    messages.push({ role: item.role === 'developer' || item.role === 'system' ? 'system' : 'user', content: textOf(item.content) });
  }
  return {
    model: body.model,
    messages,
    ...(body.tools ? { tools: body.tools } : {}),
    ...(body.stream ? { stream: true } : {}),
    ...(body.max_output_tokens ? { max_tokens: body.max_output_tokens } : {}),
    ...(body.reasoning?.effort ? { reasoning_effort: body.reasoning.effort } : {}),
    ...(body.prompt_cache_key ? { prompt_cache_key: body.prompt_cache_key } : {}),
  };
}

/** The prompt as the cache sees it: tools, instructions, then input items, each as its bytes. */
export function responsesPrefix(body: ResponsesBody): { key: string; tokens: number }[] {
  const out: { key: string; tokens: number }[] = [];
  const add = (kind: string, value: unknown) => {
    const key = `${kind}:${JSON.stringify(value)}`;
    out.push({ key, tokens: estimateTokens(key) });
  };
  for (const t of body.tools ?? []) add('tool', t);
  if (body.instructions) add('instructions', body.instructions);
  for (const item of inputItems(body)) add('item', item);
  return out;
}

/** What the reasoning items this server gave out looked like, by id; and which function calls followed which. */
interface Issued {
  reasoning: Map<string, string>;
  /** call_id → the function_call item's id and the reasoning item that led to it. */
  calls: Map<string, { itemId: string; reasoningId: string }>;
}

/** What the real API would refuse in a Responses request (status and message), or undefined. */
export function responsesRefusal(body: ResponsesBody, issued: Issued): { status: number; message: string } | undefined {
  if (!body.model) return { status: 400, message: "Missing required parameter: 'model'." };
  const reasoningModel = isReasoningModel(body.model);
  if (body.include?.includes('reasoning.encrypted_content') && !reasoningModel)
    return { status: 400, message: 'Encrypted content is not supported with this model.' };
  if (body.temperature !== undefined && reasoningModel)
    return { status: 400, message: "Unsupported parameter: 'temperature' is not supported with this model." };
  const effort = body.reasoning?.effort;
  if (effort !== undefined && !['none', 'minimal', 'low', 'medium', 'high', 'xhigh'].includes(effort))
    return {
      status: 400,
      message: `Invalid value: '${effort}'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high' and 'xhigh'.`,
    };
  const items = inputItems(body);
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (item.type === 'reasoning') {
      const id = String(item.id ?? '');
      const content = item.encrypted_content;
      if (typeof content !== 'string' || content === '') {
        if (body.store === false)
          return {
            status: 404,
            message: `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
          };
      } else if (issued.reasoning.get(id) !== content) {
        return { status: 400, message: `The encrypted content for item ${id} could not be verified.` };
      }
      const next = items[i + 1];
      if (!next || (next.type !== 'function_call' && next.type !== 'reasoning' && next.role !== 'assistant'))
        return { status: 400, message: `Item '${id}' of type 'reasoning' was provided without its required following item.` };
      seen.add(id);
    }
    if (item.type === 'function_call') {
      const led = issued.calls.get(String(item.call_id));
      if (led && !seen.has(led.reasoningId))
        return {
          status: 400,
          message: `Item '${String(item.id ?? led.itemId)}' of type 'function_call' was provided without its required 'reasoning' item: '${led.reasoningId}'.`,
        };
    }
  }
  return undefined;
}

/** What chat completions would refuse (the 400 OpenAI gives reasoning models with function tools). */
export function chatRefusal(body: RecordedRequest['body']): string | undefined {
  const effort = body.reasoning_effort;
  if (!body.tools?.length || effort === 'none' || !chatRefusesTools(body.model)) return undefined;
  // gpt-5.6 and later reason by default: the refusal comes even with no effort sent.
  const defaultReasons = /^gpt-(5\.([6-9]|\d{2,})|[6-9]|\d{2,})/.test(body.model);
  if (effort === undefined && !defaultReasons) return undefined;
  return `Function tools with reasoning_effort are not supported for ${body.model} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Starts a scripted OpenAI Responses API server on 127.0.0.1. Give its `baseUrl` to a worker as
 * `LLM_BASE_URL` with an `openai/…` model and `LLM_WIRE_API=responses` (any key is accepted).
 * Scripts are the chat-completions server's ({@link Script}); `thinking` is the reasoning summary
 * (`false`: no reasoning item, as a broken model would). `raw` holds the Responses body as sent.
 * Its check of function calls is by `call_id`, stricter than the API's (which pairs items by id).
 */
export async function startScriptedResponses(script: Script, options: ScriptedResponsesOptions = {}): Promise<ScriptedResponses> {
  let current = script;
  const requests: RecordedRequest[] = [];
  const issued: Issued = { reasoning: new Map(), calls: new Map() };
  /** Cached prefixes, per machine. */
  const caches = new Map<number, Set<string>>();
  const routeTimes = new Map<string, number[]>();
  let ids = 0;
  let dropNext = false;
  let routing = options.routing;
  const minCache = options.minCacheTokens ?? 1_024;

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
    if (recorded) {
      recorded.status = status;
      recorded.endedAt ??= Date.now();
    }
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(
      JSON.stringify({
        error: {
          message,
          type: status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error',
          param: null,
          code: null,
        },
      }),
    );
  };

  /** Which machine serves a request (see {@link ScriptedResponsesOptions.routing}). */
  function machineFor(body: ResponsesBody, prefix: readonly { key: string }[]): number {
    const head = prefix
      .map((b) => b.key)
      .join('')
      .slice(0, 1_024);
    const r = routing;
    const route = sha(`${head}\n${r?.ignoreCacheKey ? '' : (body.prompt_cache_key ?? '')}`);
    if (!r) return 0;
    const home = parseInt(route.slice(0, 8), 16) % r.machines;
    const now = (r.now ?? Date.now)();
    const times = (routeTimes.get(route) ?? []).filter((t) => t > now - 60_000);
    times.push(now);
    routeTimes.set(route, times);
    if (times.length <= r.requestsPerMinute) return home;
    return parseInt(sha(`${route}:${times.length}`).slice(0, 8), 16) % r.machines;
  }

  /** Cached tokens for a prompt on its machine (in 128-token steps past the minimum); the prompt's prefixes are cached after. */
  function cachedTokens(prefix: readonly { key: string; tokens: number }[], machine: number): { input: number; cached: number } {
    const cache = caches.get(machine) ?? new Set<string>();
    caches.set(machine, cache);
    let h = sha('prefix');
    let total = 0;
    let hit = 0;
    const points: { hash: string; total: number }[] = [];
    for (const b of prefix) {
      h = sha(h + b.key);
      total += b.tokens;
      points.push({ hash: h, total });
      if (cache.has(h)) hit = total;
    }
    for (const p of points) if (p.total >= minCache) cache.add(p.hash);
    const cached = hit >= minCache ? minCache + Math.floor((hit - minCache) / 128) * 128 : 0;
    return { input: total, cached };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url?.split('?')[0] ?? '';
    const chat = path.endsWith('/chat/completions');
    if (req.method !== 'POST' || !(path.endsWith('/responses') || chat)) {
      fail(res, undefined, 404, 'not found');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let raw: ResponsesBody;
    try {
      raw = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ResponsesBody;
    } catch {
      fail(res, undefined, 400, 'We could not parse the JSON body of your request.');
      return;
    }
    const recorded: RecordedRequest = {
      index: requests.length,
      body: chat ? (raw as unknown as RecordedRequest['body']) : responsesChatView(raw),
      api: 'openai',
      raw,
      authorization: req.headers.authorization,
      startedAt: Date.now(),
      aborted: false,
    };
    requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished) recorded.aborted = true;
      recorded.endedAt ??= Date.now();
    });
    if (chat) {
      // Only the refusal is served here; chat completions otherwise: startScriptedModel.
      const refused = chatRefusal(recorded.body);
      fail(
        res,
        recorded,
        refused ? 400 : 501,
        refused ?? 'this scripted server answers /v1/responses; use startScriptedModel for chat completions',
      );
      return;
    }
    const items = inputItems(raw);
    const dropping = dropNext && items.some((i) => i.type === 'reasoning');
    if (dropping) dropNext = false;
    const refused = responsesRefusal(dropping ? { ...raw, input: items.filter((i) => i.type !== 'reasoning') } : raw, issued);
    if (refused) {
      fail(res, recorded, refused.status, refused.message);
      return;
    }
    const reply = await scriptedReply(current, recorded, res);
    if (!reply) return;
    if (reply.status && reply.status >= 400) {
      fail(res, recorded, reply.status, reply.error ?? `scripted HTTP ${reply.status}`, reply.headers);
      return;
    }
    const n = ++ids;
    const responseId = `resp_scripted_${n}`;
    const reasons = isReasoningModel(raw.model) && raw.reasoning?.effort !== 'none' && reply.thinking !== false;
    const summaryWanted = raw.reasoning?.summary !== undefined && raw.reasoning.summary !== null;
    const thinking = reply.thinking || `Step ${n}: looking at what the last result says before choosing the next action.`;
    const reasoningId = `rs_scripted_${n}`;
    const encrypted = scriptedEncryptedContent(reasoningId, thinking, options.encryptedContentChars);
    const withContent = raw.include?.includes('reasoning.encrypted_content') === true;
    if (reasons && withContent) issued.reasoning.set(reasoningId, encrypted);
    const calls = (reply.toolCalls ?? []).map((c, i) => ({
      callId: c.id ?? `call_${n}_${i}`,
      itemId: `fc_scripted_${n}_${i}`,
      name: c.name,
      json: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    if (reasons) for (const c of calls) issued.calls.set(c.callId, { itemId: c.itemId, reasoningId });
    const prefix = responsesPrefix(raw);
    const { input, cached } = cachedTokens(prefix, machineFor(raw, prefix));
    const reasoningTokens = reasons ? estimateTokens(thinking) * 4 : 0;
    const visible = `${reply.content ?? ''}${calls.map((c) => c.name + c.json).join('')}`;
    const outputTokens = reply.usage?.completion_tokens ?? Math.max(1, estimateTokens(visible)) + reasoningTokens;
    const usage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: input + outputTokens,
    };
    recorded.usage = { input_tokens: input, cached_tokens: cached, output_tokens: outputTokens, reasoning_tokens: reasoningTokens };
    recorded.status = 200;

    const summary = summaryWanted ? [{ type: 'summary_text', text: thinking }] : [];
    const output: Record<string, unknown>[] = [];
    if (reasons) output.push({ id: reasoningId, type: 'reasoning', summary, ...(withContent ? { encrypted_content: encrypted } : {}) });
    const messageId = `msg_scripted_${n}`;
    if (reply.content)
      output.push({
        id: messageId,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: reply.content, annotations: [] }],
      });
    for (const c of calls)
      output.push({ id: c.itemId, type: 'function_call', status: 'completed', call_id: c.callId, name: c.name, arguments: c.json });
    const response = (status: string, out: unknown[], u: unknown) => ({
      id: responseId,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status,
      model: raw.model,
      output: out,
      parallel_tool_calls: raw.parallel_tool_calls ?? true,
      store: raw.store ?? true,
      ...(raw.max_output_tokens ? { max_output_tokens: raw.max_output_tokens } : {}),
      incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
      error: null,
      usage: u,
    });
    const final = reply.truncated ? 'incomplete' : 'completed';

    // A gate holds the reply: a streamed one after its stream opened, so a pause cancels a call under way.
    if (!raw.stream) {
      if (reply.gate && !(await gates.pass(reply.gate, recorded, res))) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response(final, output, usage)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let seq = 0;
    const send = (type: string, data: Record<string, unknown>) =>
      writeEvent(res, JSON.stringify({ type, sequence_number: seq++, ...data }), type, reply.chunkDelayMs ?? 0);
    await send('response.created', { response: response('in_progress', [], null) });
    await send('response.in_progress', { response: response('in_progress', [], null) });
    // Held before any content, or (with `gateAfter`) after that many pieces of the output text.
    const holdAfter = reply.gateAfter ?? 0;
    if (reply.gate && holdAfter === 0 && !(await gates.pass(reply.gate, recorded, res))) return;
    for (const [index, item] of output.entries()) {
      if (item.type === 'reasoning') {
        // The added copy carries only part of the encrypted content: a client must keep the done one.
        await send('response.output_item.added', {
          output_index: index,
          item: { ...item, summary: [], ...(withContent ? { encrypted_content: encrypted.slice(0, 24) } : {}) },
        });
        if (summaryWanted) {
          const part = { item_id: reasoningId, output_index: index, summary_index: 0 };
          await send('response.reasoning_summary_part.added', { ...part, part: { type: 'summary_text', text: '' } });
          for (const piece of splitText(thinking)) await send('response.reasoning_summary_text.delta', { ...part, delta: piece });
          await send('response.reasoning_summary_text.done', { ...part, text: thinking });
          await send('response.reasoning_summary_part.done', { ...part, part: { type: 'summary_text', text: thinking } });
        }
        await send('response.output_item.done', { output_index: index, item });
      } else if (item.type === 'message') {
        const text = reply.content ?? '';
        await send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
        const part = { item_id: messageId, output_index: index, content_index: 0 };
        await send('response.content_part.added', { ...part, part: { type: 'output_text', text: '', annotations: [] } });
        const pieces = reply.wordByWord ? splitWords(text) : splitText(text);
        const holdAt = Math.min(holdAfter, pieces.length);
        for (const [i, piece] of pieces.entries()) {
          if (reply.gate && holdAfter > 0 && i === holdAt && !(await gates.pass(reply.gate, recorded, res))) return;
          reply.onChunk?.(piece, Date.now());
          await send('response.output_text.delta', { ...part, delta: piece, logprobs: [] });
        }
        if (reply.gate && holdAfter > 0 && holdAt === pieces.length && !(await gates.pass(reply.gate, recorded, res))) return;
        await send('response.output_text.done', { ...part, text, logprobs: [] });
        await send('response.content_part.done', { ...part, part: { type: 'output_text', text, annotations: [] } });
        await send('response.output_item.done', { output_index: index, item });
      } else {
        const args = String(item.arguments);
        await send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
        // Fragments cut anywhere, mid-string included, as the API sends them.
        for (const piece of splitText(args, 4))
          await send('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: piece });
        await send('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: args });
        await send('response.output_item.done', { output_index: index, item });
      }
    }
    await send(`response.${final}`, { response: response(final, output, usage) });
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${actual}/v1`,
    requests,
    setScript: (s) => {
      current = s;
    },
    clearCache: () => caches.clear(),
    setRouting: (r) => {
      routing = r;
      caches.clear();
      routeTimes.clear();
    },
    release: (name) => gates.release(name),
    hold: (name) => gates.hold(name),
    held: (name) => gates.held(name),
    reached: (name, timeoutMs) => gates.reached(name, timeoutMs),
    dropNextReasoning: () => {
      dropNext = true;
    },
    forgetReasoning: () => {
      issued.reasoning.clear();
      issued.calls.clear();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
