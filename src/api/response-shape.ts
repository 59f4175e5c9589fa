// The OpenAI Responses shape of one run of a conversation, computed from the run's events alone:
// the Response object (status, output, error, usage) and the server-sent events a stream of it
// carries. The stream is a pure function of the events, and each event only adds to its end, so a
// sequence number means the same event on every request: `starting_after=N` resumes with no gap
// and no repeat, and nothing is kept between requests.
import type { ConversationEvent, ConversationStatus } from '../core/types.js';
import { ApiProblem } from './problems.js';
import type { ResponseRef } from './response-id.js';

/** The statuses of a Response (`openai`'s ResponseStatus). */
export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'cancelled' | 'failed' | 'incomplete';

/** One `output_text` part of an output message. */
export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
  logprobs: never[];
}

/** An assistant message of the output (`openai`'s ResponseOutputMessage). */
export interface OutputMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  status: 'in_progress' | 'completed';
  content: OutputText[];
}

/** Token counts of the run's model calls (`openai`'s ResponseUsage). */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The Response object as the `openai` SDK parses it. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  background: true;
  /** Set when the run failed (error or stuck). */
  error: { code: 'server_error'; message: string } | null;
  /** Set while the run waits for approval. */
  incomplete_details: { reason: 'waiting_for_approval'; message: string } | null;
  instructions: null;
  metadata: Record<string, string>;
  model: string;
  output: OutputMessage[];
  /** The output messages' text (the SDK computes the same from `output`). */
  output_text: string;
  parallel_tool_calls: boolean;
  previous_response_id: null;
  temperature: null;
  tool_choice: 'auto';
  tools: never[];
  top_p: null;
  usage: ResponseUsage;
  /** The conversation this response is a run of. */
  conversation: { id: string };
}

/** One server-sent event of a response's stream; `type` is also the SSE `event:` field. */
export type ResponseStreamEvent =
  | {
      type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.failed' | 'response.incomplete';
      sequence_number: number;
      response: ResponseObject;
    }
  | { type: 'response.output_item.added' | 'response.output_item.done'; sequence_number: number; output_index: number; item: OutputMessage }
  | {
      type: 'response.content_part.added' | 'response.content_part.done';
      sequence_number: number;
      item_id: string;
      output_index: number;
      content_index: number;
      part: OutputText;
    }
  | {
      type: 'response.output_text.delta';
      sequence_number: number;
      item_id: string;
      output_index: number;
      content_index: number;
      delta: string;
      logprobs: never[];
    }
  | {
      type: 'response.output_text.done';
      sequence_number: number;
      item_id: string;
      output_index: number;
      content_index: number;
      text: string;
      logprobs: never[];
    };

/** What a response shows that its events do not hold. */
export interface ResponseMeta {
  /** The model as the caller names it (`faheem` for the worker's default). */
  model: string;
  /** Seconds since the epoch, for a run none of whose events is read yet. */
  now: number;
}

/** The conversation statuses that end a run, and the response status each ends it in. */
const STOPS: Partial<Record<ConversationStatus, ResponseStatus>> = {
  finished: 'completed',
  paused: 'cancelled',
  error: 'failed',
  stuck: 'failed',
};

const STATUS_OF: Record<ConversationStatus, ResponseStatus> = {
  idle: 'queued',
  running: 'in_progress',
  waiting_for_confirmation: 'incomplete',
  ...(STOPS as Record<'finished' | 'paused' | 'error' | 'stuck', ResponseStatus>),
};

/**
 * The run's events among `events` (read from `from` on): from its first event to the status
 * event that stops it (finished, paused, error, stuck), so a later run's events are never counted.
 */
export function runEvents(events: readonly ConversationEvent[], from: number): ConversationEvent[] {
  const out: ConversationEvent[] = [];
  for (const e of events) {
    if (e.index < from) continue;
    out.push(e);
    if (stops(e)) break;
  }
  return out;
}

function stops(e: ConversationEvent): boolean {
  return e.kind === 'status' && STOPS[e.status] !== undefined;
}

/** Whether the run has stopped: its events end with a status that ends a run. */
export function runStopped(run: readonly ConversationEvent[]): boolean {
  const last = run[run.length - 1];
  return last !== undefined && stops(last);
}

/** The response's status after these events of its run (`queued` before any status). */
export function responseStatus(run: readonly ConversationEvent[]): ResponseStatus {
  let status: ResponseStatus = 'queued';
  for (const e of run) if (e.kind === 'status') status = STATUS_OF[e.status];
  return status;
}

/** The text an event adds to the output: an agent's message, or what the finish tool said. */
function outputTextOf(e: ConversationEvent): string | undefined {
  if (e.kind === 'message' && e.source === 'agent' && e.text !== '') return e.text;
  if (e.kind === 'observation' && e.tool === 'finish' && !e.isError && e.content !== '') return e.content;
  return undefined;
}

function outputMessage(e: ConversationEvent, text: string, status: OutputMessage['status'] = 'completed'): OutputMessage {
  return {
    id: `msg_${e.index}`,
    type: 'message',
    role: 'assistant',
    status,
    content: status === 'completed' ? [part(text)] : [],
  };
}

const part = (text: string): OutputText => ({ type: 'output_text', text, annotations: [], logprobs: [] });
const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/**
 * The Response object of run `ref` from its events (`runEvents`). `closed`: the conversation has
 * ended; a run it cut short is `cancelled`.
 */
export function responseOf(
  ref: ResponseRef & { id: string },
  run: readonly ConversationEvent[],
  meta: ResponseMeta,
  closed = false,
): ResponseObject {
  let status = responseStatus(run);
  if (closed && !runStopped(run) && status !== 'completed') status = 'cancelled';
  const output: OutputMessage[] = [];
  const usage = { input: 0, cached: 0, output: 0 };
  let lastError: string | undefined;
  for (const e of run) {
    const text = outputTextOf(e);
    if (text !== undefined) output.push(outputMessage(e, text));
    if ((e.kind === 'message' || e.kind === 'action') && e.call) {
      usage.input += e.call.promptTokens;
      usage.cached += e.call.cacheReadTokens;
      usage.output += e.call.completionTokens;
    }
    if (e.kind === 'error') lastError = e.message;
  }
  const stop = [...run].reverse().find((e) => e.kind === 'status');
  const reason = stop?.kind === 'status' ? stop.reason : undefined;
  const first = run[0];
  return {
    id: ref.id,
    object: 'response',
    created_at: first ? seconds(first.timestamp) : meta.now,
    completed_at: stop && runStopped(run) ? seconds(stop.timestamp) : null,
    status,
    background: true,
    error:
      status === 'failed'
        ? { code: 'server_error', message: failure(stop?.kind === 'status' ? stop.status : 'error', reason ?? lastError) }
        : null,
    incomplete_details:
      status === 'incomplete'
        ? {
            reason: 'waiting_for_approval',
            message: `${reason ?? 'actions wait for approval'}: approve or reject them (POST /v1/conversations/${encodeURIComponent(ref.conversationId)}/approve or /reject)`,
          }
        : null,
    instructions: null,
    metadata: {},
    model: meta.model,
    output,
    output_text: output.map((m) => m.content.map((c) => c.text).join('')).join(''),
    parallel_tool_calls: true,
    previous_response_id: null,
    temperature: null,
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    },
    conversation: { id: ref.conversationId },
  };
}

function failure(status: string, why: string | undefined): string {
  const what = status === 'stuck' ? 'the agent got stuck' : 'the run stopped with an error';
  return why ? `${what}: ${why}` : what;
}

/** The lifecycle event a status event adds to the stream (none for idle and paused: the SDK has no `cancelled` event). */
const LIFECYCLE: Partial<
  Record<ConversationStatus, 'response.in_progress' | 'response.completed' | 'response.failed' | 'response.incomplete'>
> = {
  running: 'response.in_progress',
  waiting_for_confirmation: 'response.incomplete',
  finished: 'response.completed',
  error: 'response.failed',
  stuck: 'response.failed',
};

/**
 * The stream of run `ref` as far as its events go, each event with its `sequence_number` (its
 * place in this list, from 0). More events only add to the end: the list for a prefix of the run's
 * events is a prefix of the list for all of them. `response.created` comes with the run's first
 * event; each output message is whole in one `response.output_text.delta`.
 */
export function streamEventsOf(
  ref: ResponseRef & { id: string },
  run: readonly ConversationEvent[],
  meta: ResponseMeta,
): ResponseStreamEvent[] {
  const out: ResponseStreamEvent[] = [];
  const add = (e: DistributiveOmit<ResponseStreamEvent, 'sequence_number'>) =>
    out.push({ ...e, sequence_number: out.length } as ResponseStreamEvent);
  let outputIndex = 0;
  for (let i = 0; i < run.length; i++) {
    const e = run[i]!;
    const snapshot = () => responseOf(ref, run.slice(0, i + 1), meta);
    if (i === 0) add({ type: 'response.created', response: snapshot() });
    const text = outputTextOf(e);
    if (text !== undefined) {
      const item_id = `msg_${e.index}`;
      const at = { item_id, output_index: outputIndex, content_index: 0 };
      add({ type: 'response.output_item.added', output_index: outputIndex, item: outputMessage(e, text, 'in_progress') });
      add({ type: 'response.content_part.added', ...at, part: part('') });
      add({ type: 'response.output_text.delta', ...at, delta: text, logprobs: [] });
      add({ type: 'response.output_text.done', ...at, text, logprobs: [] });
      add({ type: 'response.content_part.done', ...at, part: part(text) });
      add({ type: 'response.output_item.done', output_index: outputIndex, item: outputMessage(e, text) });
      outputIndex++;
    }
    const lifecycle = e.kind === 'status' ? LIFECYCLE[e.status] : undefined;
    if (lifecycle) add({ type: lifecycle, response: snapshot() });
  }
  return out;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The longest message a response's input may make. */
const MAX_INPUT_CHARS = 200_000;

/**
 * The user message a Responses `input` stands for: a string as it is, or the text of a list of
 * user messages (`{role: 'user', content}` with a string or `input_text` parts), joined by blank
 * lines. Anything else (images, files, other roles, tool outputs) is a 400 that names it.
 */
export function userTextOf(input: unknown): string {
  const refuse = (detail: string): never => {
    throw new ApiProblem('bad_request', `input: ${detail}`);
  };
  if (typeof input === 'string') {
    if (input.trim() === '') refuse('empty');
    return input;
  }
  if (!Array.isArray(input)) return refuse('a string or a list of user messages');
  if (input.length === 0) refuse('an empty list');
  const texts: string[] = [];
  input.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (typeof item !== 'object' || item === null) return refuse(`${at}: not an object`);
    const m = item as { type?: unknown; role?: unknown; content?: unknown };
    if (m.type !== undefined && m.type !== 'message')
      return refuse(`${at}: items of type ${JSON.stringify(m.type)} are not taken, only user messages`);
    if (m.role !== 'user') return refuse(`${at}: only role "user" is taken, not ${JSON.stringify(m.role)}`);
    if (typeof m.content === 'string') return texts.push(m.content);
    if (!Array.isArray(m.content)) return refuse(`${at}.content: a string or a list of input_text parts`);
    m.content.forEach((p: unknown, j) => {
      const partType = (p as { type?: unknown } | null)?.type;
      const text = (p as { text?: unknown } | null)?.text;
      if (partType !== 'input_text' || typeof text !== 'string')
        return refuse(`${at}.content[${j}]: only input_text parts are taken, not ${JSON.stringify(partType ?? null)}`);
      texts.push(text);
    });
  });
  const text = texts.join('\n\n');
  if (text.trim() === '') refuse('no text');
  if (text.length > MAX_INPUT_CHARS) refuse(`over ${MAX_INPUT_CHARS} characters`);
  return text;
}
