// A scripted, OpenAI-compatible chat-completions server for tests and the offline demo. It is a
// stand-in for a real model only: every reply comes from the script you give it. It answers
// `stream: true` requests with server-sent chunks (tool-call arguments in fragments, usage last when
// asked for) and the others with one JSON body.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGates, type Gates as GatesOf } from './gates.js';

export { createGates, type GateKeeper, type GatedRequest } from './gates.js';

/** The gates of a scripted server, holding its recorded requests. */
export type Gates = GatesOf<RecordedRequest>;

/** A tool call in a scripted reply. */
export interface ScriptedToolCall {
  /** The tool's name, e.g. `terminal` or a tool made with `defineTool`. */
  name: string;
  /** The arguments: an object (sent as JSON) or a raw string (to test malformed JSON). */
  arguments: Record<string, unknown> | string;
  /** The call id; default `call_<n>_<i>`. */
  id?: string;
}

/** One answer of the scripted model: text, tool calls, or an HTTP error. */
export interface ScriptedReply {
  /** The assistant's text. A reply with text and no tool calls ends the agent's run. */
  content?: string | null;
  /** Tool calls for the agent to run. */
  toolCalls?: ScriptedToolCall[];
  /** Wait this long before answering (the request can be aborted meanwhile). Pacing only: to order a test's steps, use `gate`. */
  delayMs?: number;
  /**
   * Hold the reply at this named gate until the test opens it ({@link ScriptedModel.release}, or
   * `POST /gates/<name>/release` on the server). A streamed reply opens its stream first and holds
   * before the content, so a pause or an abort meanwhile cancels a call that is under way.
   */
  gate?: string;
  /**
   * With `gate`, a streamed reply holds after this many pieces of its text are out (default 0:
   * before any; past the last piece: before the tool calls), so a test sees part of it arrive first.
   */
  gateAfter?: number;
  /** Streamed answers: wait this long between events (a slow model, aborted mid-stream by a pause). */
  chunkDelayMs?: number;
  /** Streamed answers: send the text word by word (default: in three pieces). */
  wordByWord?: boolean;
  /** Streamed answers: called as each piece of the text is written, with the time (ms since the epoch); the live bench times followers from it. */
  onChunk?: (text: string, at: number) => void;
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** Extra response headers (e.g. `retry-after` with a 429). */
  headers?: Record<string, string>;
  /** The error message with `status`. */
  error?: string;
  /** Token counts reported (default 100 prompt, 20 completion; the Anthropic server computes them). */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Cut by the output cap: finish_reason `length` (Anthropic: stop_reason `max_tokens`). */
  truncated?: boolean;
  /**
   * Anthropic only: the thinking text of the reply when the request asked for thinking (default a
   * line of its own; `false` sends none, as a broken model would).
   */
  thinking?: string | false;
  /** Anthropic only: a redacted_thinking block's data, sent after the thinking. */
  redactedThinking?: string;
}

/** A chat-completions request the scripted model received. */
export interface RecordedRequest {
  /** 0 for the first request this server received, then 1, 2, … */
  index: number;
  /**
   * The request body: the messages the model was shown and the tools it was offered. The scripted
   * Anthropic server shows its requests here in this same chat-completions form (see `raw`).
   */
  body: {
    model: string;
    messages: { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
    tools?: unknown[];
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    max_tokens?: number;
    max_completion_tokens?: number;
    reasoning_effort?: string;
    prompt_cache_key?: string;
    [key: string]: unknown;
  };
  /** Which API the request came through. */
  api?: 'openai' | 'anthropic';
  /** The Anthropic server: the Messages API body as sent (system, content blocks, cache_control, thinking). */
  raw?: Record<string, unknown>;
  /** The usage the server reported for it (Anthropic: with the cache counts it worked out). */
  usage?: Record<string, number>;
  /** The status it answered with (200 unless scripted or refused). */
  status?: number;
  /** The `Authorization` header (to check which key the worker sent). */
  authorization: string | undefined;
  /** When the request arrived and when it was answered or aborted (ms since the epoch). */
  startedAt: number;
  endedAt?: number;
  /** The client closed the connection before the answer (a cancelled model call). */
  aborted: boolean;
  /** The gate its reply was held at, if any (see {@link ScriptedReply.gate}). */
  heldAt?: string;
}

/** Decides the reply to each request (it may look at the messages so far). A throw becomes HTTP 500. */
export type Script = (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

/** A running scripted model server. Its gates ({@link Gates}) hold replies that name one until the test releases it. */
export interface ScriptedModel extends Gates {
  /** The OpenAI-compatible base URL (`http://127.0.0.1:<port>/v1`): give it to the worker as `LLM_BASE_URL`. */
  baseUrl: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Replaces the script for the requests that follow. */
  setScript(script: Script): void;
  /** Stops the server (open connections are closed). */
  close(): Promise<void>;
}

/**
 * Starts a scripted, OpenAI-compatible chat-completions server on 127.0.0.1: a stand-in model for
 * tests and offline demos, whose every reply comes from `script`. Point a worker at it with
 * `LLM_BASE_URL` (any `LLM_API_KEY` is accepted).
 *
 * ```ts
 * const model = await startScriptedModel((request) =>
 *   request.body.messages.some((m) => m.role === 'tool')
 *     ? { content: 'Done.' }
 *     : { toolCalls: [{ name: 'terminal', arguments: { command: 'ls' } }] },
 * );
 * process.env.LLM_BASE_URL = model.baseUrl;
 * ```
 *
 * @param script - Decides each reply; change it later with {@link ScriptedModel.setScript}.
 * @param port - The port to listen on; 0 (the default) picks a free one.
 */
export async function startScriptedModel(script: Script, port = 0): Promise<ScriptedModel> {
  let current = script;
  const requests: RecordedRequest[] = [];
  let ids = 0;
  const gates = createGates<RecordedRequest>();

  const server = createServer((req, res) => {
    if (gateRequest(gates, req, res)) return;
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const recorded: RecordedRequest = {
      index: requests.length,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedRequest['body'],
      authorization: req.headers.authorization,
      startedAt: Date.now(),
      aborted: false,
    };
    recorded.api = 'openai';
    requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished) recorded.aborted = true;
      recorded.endedAt ??= Date.now();
    });

    const reply = await scriptedReply(current, recorded, res);
    if (!reply) return;
    if (reply.status && reply.status >= 400) {
      recorded.status = reply.status;
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify({ error: { message: reply.error ?? `scripted HTTP ${reply.status}`, type: 'scripted_error' } }));
      return;
    }
    const n = ++ids;
    const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${n}_${i}`,
      type: 'function',
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    }));
    const usage = { ...(reply.usage ?? { prompt_tokens: 100, completion_tokens: 20 }), total_tokens: 0 };
    recorded.usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
    recorded.status = 200;
    const finish = reply.truncated ? 'length' : toolCalls.length ? 'tool_calls' : 'stop';
    const id = `chatcmpl-scripted-${n}`;
    const created = Math.floor(Date.now() / 1000);
    const gate = reply.gate;
    const pass = gate ? () => gates.pass(gate, recorded, res) : undefined;
    if (recorded.body.stream) {
      await streamChunks(res, {
        ...(pass ? { pass, gateAfter: reply.gateAfter ?? 0 } : {}),
        delayMs: reply.chunkDelayMs ?? 0,
        wordByWord: reply.wordByWord === true,
        ...(reply.onChunk ? { onChunk: reply.onChunk } : {}),
        id,
        created,
        model: recorded.body.model,
        content: reply.content ?? null,
        toolCalls,
        finish,
        usage: recorded.body.stream_options?.include_usage ? usage : undefined,
      });
      return;
    }
    if (pass && !(await pass())) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: recorded.body.model,
        choices: [
          {
            index: 0,
            finish_reason: finish,
            message: { role: 'assistant', content: reply.content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
          },
        ],
        usage,
      }),
    );
  }

  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${actual}/v1`,
    requests,
    setScript: (s) => {
      current = s;
    },
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

/** Splits a text into `parts` pieces at arbitrary places (mid-word, mid-string): how streams arrive. */
export function splitText(text: string, parts = 3): string[] {
  if (text.length <= 1) return [text];
  const out: string[] = [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** `"a b c"` → `["a ", "b ", "c"]`: a reply streamed a word at a time. */
export function splitWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

/** Writes one server-sent event and waits for the socket to take it (so chunks are separate reads). */
export async function writeEvent(res: ServerResponse, data: string, event?: string, delayMs = 0): Promise<void> {
  if (res.destroyed) return;
  res.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
  // A tick (or the scripted delay) between events: the client sees them arrive one by one, as from a real model.
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  else await new Promise((r) => setImmediate(r));
}

async function streamChunks(
  res: ServerResponse,
  r: {
    pass?: () => Promise<boolean>;
    gateAfter?: number;
    delayMs: number;
    wordByWord: boolean;
    onChunk?: (text: string, at: number) => void;
    id: string;
    created: number;
    model: string;
    content: string | null;
    toolCalls: { id: string; type: string; function: { name: string; arguments: string } }[];
    finish: string;
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined;
  },
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({
      id: r.id,
      object: 'chat.completion.chunk',
      created: r.created,
      model: r.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  await writeEvent(res, chunk({ role: 'assistant', content: '' }), undefined, r.delayMs);
  const pieces = r.content ? (r.wordByWord ? splitWords(r.content) : splitText(r.content)) : [];
  const holdAt = Math.min(r.gateAfter ?? 0, pieces.length);
  for (const [i, piece] of pieces.entries()) {
    if (i === holdAt && r.pass && !(await r.pass())) return;
    r.onChunk?.(piece, Date.now());
    await writeEvent(res, chunk({ content: piece }), undefined, r.delayMs);
  }
  if (holdAt === pieces.length && r.pass && !(await r.pass())) return;
  for (const [index, call] of r.toolCalls.entries()) {
    await writeEvent(
      res,
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }),
      undefined,
      r.delayMs,
    );
    for (const piece of splitText(call.function.arguments)) {
      await writeEvent(res, chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), undefined, r.delayMs);
    }
  }
  await writeEvent(res, chunk({}, r.finish), undefined, r.delayMs);
  if (r.usage) {
    await writeEvent(
      res,
      JSON.stringify({ id: r.id, object: 'chat.completion.chunk', created: r.created, model: r.model, choices: [], usage: r.usage }),
      undefined,
      r.delayMs,
    );
  }
  await writeEvent(res, '[DONE]', undefined, r.delayMs);
  res.end();
}

/**
 * Answers `POST /gates/<name>/release` (and `/hold`) on a scripted server, so that a test in another
 * process can open a gate too: true when it was such a request.
 */
export function gateRequest(gates: Gates, req: IncomingMessage, res: ServerResponse): boolean {
  const m = /^\/gates\/([^/]+)\/(release|hold)$/.exec(req.url?.split('?')[0] ?? '');
  if (!m || req.method !== 'POST') return false;
  const name = decodeURIComponent(m[1]!);
  if (m[2] === 'release') gates.release(name);
  else gates.hold(name);
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ gate: name, open: m[2] === 'release' }));
  return true;
}

/**
 * Wraps a script that counts its calls (turn 1 does this, turn 2 that) so that it answers a prompt
 * it has answered before with the same reply, as a model at temperature 0 would: a model call the
 * worker makes again (a retry after a lost attempt, a heartbeat timeout on a busy machine) gets the
 * reply the lost attempt got, instead of using up the next turn. Error replies (a status of 400 or
 * more) are not kept, so a scripted failure can be followed by a success for the same prompt.
 */
export function samePromptSameReply(script: Script): Script {
  const answered = new Map<string, ScriptedReply>();
  return async (request) => {
    const key = JSON.stringify([request.body.model, request.body.messages]);
    const seen = answered.get(key);
    if (seen) return seen;
    const reply = await script(request);
    if (!reply.status || reply.status < 400) answered.set(key, reply);
    return reply;
  };
}

/** The last user message the model was shown. */
export function lastUserMessage(request: RecordedRequest): string {
  const users = request.body.messages.filter((m) => m.role === 'user');
  const content: unknown = users[users.length - 1]?.content;
  // A message with images is a list of content parts: its text parts.
  if (Array.isArray(content)) return content.map((p: { text?: unknown }) => (typeof p?.text === 'string' ? p.text : '')).join('\n');
  return String(content ?? '');
}

/** Options of {@link countdownScript}. */
export interface CountdownOptions {
  /** Each reply waits this long (default 400 ms: a demo's pace; tests order their steps with `gates`). */
  delayMs?: number;
  /**
   * Hold a countdown reply at a named gate: `{ 2: 'paused' }` holds the reply that follows the
   * second step (the third request) until `model.release('paused')` (see {@link ScriptedReply.gate}).
   */
  gates?: Record<number, string>;
}

/**
 * The seed's scenario as a script: write countdown.txt (100 → 1) ten numbers a step, slowly; when
 * told about hello.txt, create that instead and finish. Used by the offline demo and the tests.
 */
export function countdownScript(options: CountdownOptions = {}): Script {
  const delayMs = options.delayMs ?? 400;
  const gateAt = (steps: number) => (options.gates?.[steps] ? { gate: options.gates[steps] } : {});
  return (request) => {
    const messages = request.body.messages;
    const lastUserAt = messages.map((m) => m.role).lastIndexOf('user');
    const since = messages.slice(lastUserAt + 1);
    if (lastUserMessage(request).includes('hello.txt')) {
      // Created once a call to create it was made since the message (a countdown call cut off by a
      // pause may be answered after the message too).
      const created = since.some((m) => m.role === 'assistant' && JSON.stringify(m.tool_calls ?? []).includes('hello.txt'));
      if (!created) {
        return {
          delayMs,
          content: 'Switching to hello.txt as asked.',
          toolCalls: [{ name: 'file_editor', arguments: { command: 'create', path: 'hello.txt', file_text: 'Hello, World!\n' } }],
        };
      }
      return { delayMs, content: 'I created hello.txt containing "Hello, World!" and stopped working on countdown.txt.' };
    }
    const steps = messages.filter((m) => m.role === 'tool').length;
    if (steps >= 10) return { delayMs, ...gateAt(steps), content: 'I wrote the numbers 100 down to 1 into countdown.txt, one per line.' };
    const from = 100 - steps * 10;
    const to = from - 9;
    const redirect = steps === 0 ? '>' : '>>';
    return {
      delayMs,
      ...gateAt(steps),
      toolCalls: [{ name: 'terminal', arguments: { command: `seq ${from} -1 ${to} ${redirect} countdown.txt` } }],
    };
  };
}

/**
 * The script's reply to a recorded request, after its `delayMs` (cut short when the client goes
 * away): undefined when the client went away meanwhile. A script that throws answers HTTP 500.
 * Shared by the scripted OpenAI-compatible and Anthropic servers.
 */
export async function scriptedReply(script: Script, recorded: RecordedRequest, res: ServerResponse): Promise<ScriptedReply | undefined> {
  let reply: ScriptedReply;
  try {
    reply = await script(recorded);
  } catch (err) {
    reply = { status: 500, error: `script failed: ${(err as Error).message}` };
  }
  if (reply.delayMs) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, reply.delayMs);
      res.on('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  if (res.destroyed || recorded.aborted) return undefined;
  recorded.endedAt = Date.now();
  return reply;
}
