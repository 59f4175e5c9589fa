// A response of the OpenAI Responses shape is one run of a conversation, so its id names the run
// instead of a row anywhere: `resp_` + base64url of `<run>.<from>.<conversation id>`, where `from`
// is the index of the run's first event (its user message). Nothing is stored for it, and decoding
// is strict: only the exact text `encodeResponseId` makes decodes, anything else is "not found".
import { CONVERSATION_ID_PATTERN } from '../conversation/conversation-id.js';

/** The run a response id names. */
export interface ResponseRef {
  /** The conversation (workflow id). */
  conversationId: string;
  /** The conversation's run number for this response (1 for the first). */
  run: number;
  /** The index of the run's first event: the events from here to the run's stop are the response's. */
  from: number;
}

const PREFIX = 'resp_';
// A counter with no leading zero, small enough to be exact as a JSON number.
const COUNT = '(0|[1-9][0-9]{0,15})';
const PAYLOAD = new RegExp(`^${COUNT}\\.${COUNT}\\.(.+)$`, 's');
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The response id of run `ref.run` of `ref.conversationId`, whose events start at `ref.from`. */
export function encodeResponseId(ref: ResponseRef): string {
  if (!Number.isSafeInteger(ref.run) || ref.run < 0 || !Number.isSafeInteger(ref.from) || ref.from < 0)
    throw new RangeError(`a response names a run and an event index (whole numbers), not ${ref.run} and ${ref.from}`);
  return PREFIX + Buffer.from(`${ref.run}.${ref.from}.${ref.conversationId}`, 'utf8').toString('base64url');
}

/**
 * The run a response id names, or undefined for anything `encodeResponseId` would not have made
 * (another prefix, padding, stray characters, a conversation id that is not valid).
 */
export function decodeResponseId(id: string): ResponseRef | undefined {
  if (!id.startsWith(PREFIX) || id.length > 400) return undefined;
  const body = id.slice(PREFIX.length);
  if (!BASE64URL.test(body)) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  // Canonical only: the same bytes written back must give the same text (no ignored bits).
  if (bytes.toString('base64url') !== body) return undefined;
  const text = bytes.toString('utf8');
  if (Buffer.from(text, 'utf8').toString('base64url') !== body) return undefined; // not UTF-8
  const m = PAYLOAD.exec(text);
  if (!m) return undefined;
  const conversationId = m[3]!;
  if (!CONVERSATION_ID_PATTERN.test(conversationId) || conversationId.includes('..')) return undefined;
  const run = Number(m[1]);
  const from = Number(m[2]);
  if (!Number.isSafeInteger(run) || !Number.isSafeInteger(from)) return undefined;
  return { conversationId, run, from };
}
